import { readFileSync } from 'node:fs';
import { RE2JS } from 're2js';
import { describe, expect, it } from 'vitest';
import { linearRegExp, toRe2Syntax } from '../../src/main/engine/tracking-plans/linear-pattern';
import { toSameRegExpSource } from '../../src/main/engine/tracking-plans/native-pattern';

// Patterns RE2 and JavaScript read alike run on RegExp (native-pattern.ts). RE2 is the rule-keeper:
// held here to RE2's own search tests, kept as data (tests/fixtures/re2/README.md says where from),
// and to a seeded fuzzer comparing RegExp with re2js on patterns and strings made to find where the
// two engines part (`.`, `\s`, astral and lone surrogate characters, classes, repeats).

const isNative = (m: { test(s: string): boolean }) => m instanceof RegExp;

/** Go's strconv quoting: the string, or null when its bytes are not UTF-8 (a JavaScript string cannot hold them). */
function unquote(line: string): string | null {
  const body = line.slice(1, -1);
  const bytes: number[] = [];
  const utf8 = (cp: number) => bytes.push(...Buffer.from(String.fromCodePoint(cp), 'utf8'));
  const simple: Record<string, number> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, '\\': 92, '"': 34, "'": 39 };
  for (let i = 0; i < body.length; ) {
    const cp = body.codePointAt(i)!;
    const ch = String.fromCodePoint(cp);
    i += ch.length;
    if (ch !== '\\') {
      utf8(cp);
      continue;
    }
    const e = body[i++]!;
    if (e in simple) bytes.push(simple[e]!);
    else if (e === 'x') {
      bytes.push(parseInt(body.slice(i, i + 2), 16));
      i += 2;
    } else if (e === 'u' || e === 'U') {
      const n = e === 'u' ? 4 : 8;
      utf8(parseInt(body.slice(i, i + n), 16));
      i += n;
    } else if (/[0-7]/.test(e)) {
      bytes.push(parseInt(body.slice(i - 1, i + 2), 8));
      i += 2;
    } else throw new Error(`unknown escape \\${e} in ${line}`);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes));
  } catch {
    return null;
  }
}

interface SearchCase {
  pattern: string;
  text: string;
  /** RE2's leftmost-first search found a match (what RegExp's test() asks). */
  found: boolean;
  line: number;
}

/** re2-search.txt: blocks of strings, then regexps each followed by one line of results per string. */
function searchCases(): SearchCase[] {
  const lines = readFileSync(new URL('../fixtures/re2/re2-search.txt', import.meta.url), 'utf8').split('\n');
  const out: SearchCase[] = [];
  let strings: (string | null)[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] === 'strings') {
      strings = [];
      while (lines[++i]!.startsWith('"')) strings.push(unquote(lines[i]!));
      i--;
    } else if (lines[i] === 'regexps') {
      while (lines[i + 1]?.startsWith('"')) {
        const pattern = unquote(lines[++i]!)!;
        for (const text of strings) {
          const results = lines[++i]!.split(';');
          // Fields: full match, partial match (leftmost-first), then the two longest-match ones.
          if (text !== null) out.push({ pattern, text, found: results[1] !== '-', line: i + 1 });
        }
      }
    }
  }
  return out;
}

describe("RE2's own search tests (Go's regexp/testdata/re2-search.txt)", () => {
  const cases = searchCases();
  const compiled = new Map<string, { test(s: string): boolean } | null>();
  const matcher = (p: string) => {
    if (!compiled.has(p)) {
      try {
        compiled.set(p, linearRegExp(p));
      } catch {
        compiled.set(p, null);
      }
    }
    return compiled.get(p)!;
  };

  it('every case the lab can run gets RE2\'s answer, on RegExp where the pattern qualifies and on re2js elsewhere', () => {
    let ran = 0;
    const wrong: string[] = [];
    for (const c of cases) {
      const m = matcher(c.pattern);
      if (!m) continue;
      ran++;
      if (m.test(c.text) !== c.found) wrong.push(`line ${c.line}: ${JSON.stringify(c.pattern)} on ${JSON.stringify(c.text)}: RE2 ${c.found ? 'matches' : 'does not match'} (${isNative(m) ? 'RegExp' : 're2js'})`);
    }
    expect(wrong).toEqual([]);
    // The file is not skipped: nearly all of its cases run.
    expect(ran).toBeGreaterThan(0.9 * cases.length);
  });

  it('a good share of its patterns qualify for RegExp: the comparison above is not empty', () => {
    const patterns = [...new Set(cases.map((c) => c.pattern))];
    const native = patterns.filter((p) => {
      const m = matcher(p);
      return m !== null && isNative(m);
    });
    expect(native.length).toBeGreaterThan(60);
    // Anchored at the start, as RE2's one-pass analysis requires.
    for (const p of native) expect(p.startsWith('^')).toBe(true);
  });
});

describe('which patterns go to RegExp', () => {
  it("the bench's order id, a currency, snake_case and a UUID do", () => {
    for (const p of ['^ord-[0-9]{8}-[0-9]{4}$', '^[A-Z]{3}$', '^[a-z_]+$', '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$', '^\\d+(\\.\\d{1,2})?$']) {
      expect(isNative(linearRegExp(p)), p).toBe(true);
    }
  });

  it('patterns that backtrack badly in JavaScript stay on re2js, and so do unanchored ones', () => {
    for (const p of [
      '^(a+)+$', '^(a|a)*$', '^(a|ab)*c$', '^\\d*\\d*$', '^(?:a*)*$', '^.*.*=.*$', '^(\\w+\\s?)*$', '^([a-z]+_)*[a-z]+$', '^(?:a?b?)*$',
      '^(a?){25}a{25}$', '^(?:a|b|ab)*$', '^(\\d+)*$', '^(?:a|aa)+$', '^(.*a){12}$', '^([a-z0-9]+[-._]?)*[a-z0-9]$', '^(?:a|)+b$', '^a*a$',
      '(x+x+)+y', 'a*b', '@example\\.com$', '^a|b',
    ]) {
      expect(isNative(linearRegExp(p)), p).toBe(false);
    }
  });

  it('constructs the two engines read differently are never handed over as written', () => {
    // Outside the subset: RE2 only, JavaScript only, or read otherwise by one of them.
    for (const p of ['^\\pL$', '^[[:alpha:]]$', '^(?i)a$', '^(?P<n>a)$', '^\\Qa.b\\E$', '^a{,2}$', '^[]a]$', '^\\x41$', '^\\u0041$', '^\\bx$', '^a{1001}$', '^[\\D]$', '^a{01}$', '^a{00}b$', '^a{1,02}$', '^[0-9]{05}$', `^${'a'.repeat(300)}$`]) {
      expect(toSameRegExpSource(p), p).toBeNull();
    }
    // Inside it, rewritten: `.` and `\s` as RE2 means them.
    // Groups never capture (test() reads none; V8 saves captures at each repeat of a loop).
    expect(toSameRegExpSource('^(a)(?:b)$')).toBe('^(?:\\u{61})(?:\\u{62})$');
    expect(toSameRegExpSource('^(?:a{10}){0,2}$')).toBe('^(?:\\u{61}{10}){0,2}$');
    expect(toSameRegExpSource('^.\\s$')).toBe('^[\\u{0}-\\u{9}\\u{b}-\\u{10ffff}][\\u{9}-\\u{a}\\u{c}-\\u{d}\\u{20}]$');
  });
});

describe('a seeded fuzzer: RegExp and re2js agree on every pattern that qualifies', () => {
  it('on generated patterns and strings', () => {
    const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 1_000_000);
    console.log(`native-pattern fuzz seed ${seed} (FUZZ_SEED=${seed} to run it again)`);
    let state = seed >>> 0 || 1;
    const rand = (n: number) => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return (state >>> 0) % n;
    };
    const pick = <T,>(xs: readonly T[]): T => xs[rand(xs.length)]!;
    // Characters where the engines might part: line ends RE2's `.` takes and JavaScript's does not,
    // spaces outside RE2's \s, an astral character, a lone surrogate, and plain ones.
    const CHARS = ['a', 'b', 'z', 'A', '0', '9', '_', '-', '.', ' ', '\n', '\r', '\t', '\v', '\f', '\u2028', '\u00a0', '\ufeff', '😀', '\ud800', 'é', '\\', ']', '^'];
    const ATOMS = ['a', 'b', '0', '\\.', '\\-', '.', '\\d', '\\w', '\\s', '\\D', '\\W', '\\S', '[a-z]', '[^a]', '[0-9_]', '[\\s\\d]', '[^\\w]', '[-a]', '[a-]', '[😀é]', '[^\\n]', '\\n', '\\t', '😀', 'é'];
    const QUANT = ['', '', '', '*', '+', '?', '{2}', '{1,3}', '{0,}', '*?', '+?', '{0}', '{01}', '{0,02}'];
    const term = (depth: number): string => {
      const atom = depth > 0 && rand(4) === 0 ? `(${rand(2) ? '?:' : ''}${alt(depth - 1)})` : pick(ATOMS);
      return atom + pick(QUANT);
    };
    const seq = (depth: number) => Array.from({ length: 1 + rand(4) }, () => term(depth)).join('');
    const alt = (depth: number): string => (rand(4) === 0 ? `${seq(depth)}|${seq(depth)}` : seq(depth));
    let compared = 0;
    let patternsNative = 0;
    const wrong: string[] = [];
    for (let p = 0; p < 3_000 && wrong.length < 5; p++) {
      const pattern = `^${alt(2)}${rand(3) ? '$' : ''}`;
      let m: { test(s: string): boolean };
      try {
        m = linearRegExp(pattern);
      } catch {
        continue;
      }
      if (!isNative(m)) continue;
      patternsNative++;
      const re2 = RE2JS.compile(toRe2Syntax(pattern));
      for (let s = 0; s < 40; s++) {
        const text = Array.from({ length: rand(8) }, () => pick(CHARS)).join('');
        compared++;
        if (m.test(text) !== re2.test(text)) wrong.push(`${JSON.stringify(pattern)} on ${JSON.stringify(text)}: RegExp ${m.test(text)}, re2js ${re2.test(text)} (seed ${seed})`);
      }
    }
    expect(wrong).toEqual([]);
    expect(patternsNative).toBeGreaterThan(100);
    expect(compared).toBeGreaterThan(4_000);
  });
});
