// A pattern RE2 and JavaScript read alike, run on JavaScript's own RegExp (issue 38). re2js costs
// about 1 µs to match a 17-character order id where RegExp takes 0.1 µs, and patterns were the
// largest cost of a plan's check on the event loop. RE2 stays the rule-keeper (linear-pattern.ts
// compiles every pattern with re2js first, and keeps it for anything not handed over here). A
// pattern goes to RegExp only when
//   1. it is written in a small subset whose every construct means the same to RE2 and to an
//      ECMAScript RegExp with the `u` flag, and is rewritten into explicit code points and classes
//      (so `.`, `\s` and escapes mean exactly what RE2 says); and
//   2. a backtracking engine never has two ways forward: it is anchored at its start, and at every
//      choice it has (another repeat or not, one alternative or another) the next character decides,
//      with no part that may repeat or be chosen while matching nothing. RegExp then tries at most one
//      way past each character, and its time is linear in the input, as RE2's is. (RE2's own one-pass
//      analysis is not enough: it reads `(a|a)*` as `a*`, which RegExp does not.)
// tests/unit/native-pattern.test.ts holds both to RE2's own search tests and to a seeded fuzzer.

type Ranges = readonly (readonly [number, number])[];

type Node =
  | { k: 'set'; ranges: Ranges }
  | { k: 'bol' }
  | { k: 'eol' }
  | { k: 'cat'; xs: Node[] }
  | { k: 'alt'; xs: Node[] }
  | { k: 'group'; capture: boolean; x: Node }
  | { k: 'rep'; x: Node; min: number; max: number; lazy: boolean };

const MAX_CODE_POINT = 0x10ffff;

/** Classes RE2 spells with an escape, as the code point ranges RE2 gives them (Perl classes, ASCII). */
const PERL: Record<string, { ranges: Ranges; negated: boolean }> = {
  d: { ranges: [[0x30, 0x39]], negated: false },
  D: { ranges: [[0x30, 0x39]], negated: true },
  w: { ranges: [[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]], negated: false },
  W: { ranges: [[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]], negated: true },
  // RE2's \s is [\t\n\f\r ]; JavaScript's also takes \v and Unicode spaces.
  s: { ranges: [[0x09, 0x0a], [0x0c, 0x0d], [0x20, 0x20]], negated: false },
  S: { ranges: [[0x09, 0x0a], [0x0c, 0x0d], [0x20, 0x20]], negated: true },
};
const CONTROL: Record<string, number> = { f: 0x0c, n: 0x0a, r: 0x0d, t: 0x09, v: 0x0b };
/** RE2 takes any ASCII punctuation after a backslash as itself. */
const PUNCTUATION = /^[!-/:-@[-`{-~]$/;
/** RE2 refuses a repeat count over 1000. */
const MAX_REPEAT = 1000;
/** Tracking plans' patterns are short; a longer one is left to re2js rather than analysed (the analysis is not linear in it). */
const MAX_PATTERN = 256;

class NotInSubset extends Error {}

/**
 * The ECMAScript source (for `new RegExp(source, 'u')`) that matches what RE2 matches for `pattern`,
 * in time linear in the input; null when the pattern is outside the subset or could backtrack.
 */
export function toSameRegExpSource(pattern: string): string | null {
  if (pattern.length > MAX_PATTERN) return null;
  let root: Node;
  try {
    const r = new Reader(pattern);
    root = r.alternation();
    if (!r.done()) return null;
  } catch (err) {
    if (err instanceof NotInSubset) return null;
    throw err;
  }
  return anchored(root) && decided(root, []) ? emit(root) : null;
}

// ---- reading the subset ----------------------------------------------------------------------

class Reader {
  private i = 0;
  constructor(private readonly s: string) {}

  done(): boolean {
    return this.i >= this.s.length;
  }

  private peek(): string | undefined {
    const c = this.s.codePointAt(this.i);
    return c === undefined ? undefined : String.fromCodePoint(c);
  }

  private next(): string {
    const c = this.peek();
    if (c === undefined) throw new NotInSubset();
    this.i += c.length;
    return c;
  }

  alternation(): Node {
    const xs = [this.sequence()];
    while (this.peek() === '|') {
      this.i++;
      xs.push(this.sequence());
    }
    return xs.length === 1 ? xs[0]! : { k: 'alt', xs };
  }

  private sequence(): Node {
    const xs: Node[] = [];
    for (let c = this.peek(); c !== undefined && c !== '|' && c !== ')'; c = this.peek()) xs.push(this.repeated());
    return { k: 'cat', xs };
  }

  private repeated(): Node {
    const x = this.atom();
    const q = this.quantifier();
    if (!q) return x;
    if (x.k === 'bol' || x.k === 'eol') throw new NotInSubset();
    // RE2 refuses a repeat of a repeat (`a**`); a lazy mark is read as part of the quantifier.
    const c = this.peek();
    if (c === '*' || c === '+' || c === '?' || c === '{') throw new NotInSubset();
    return { k: 'rep', x, ...q };
  }

  private quantifier(): { min: number; max: number; lazy: boolean } | null {
    const c = this.peek();
    let min: number;
    let max: number;
    if (c === '*' || c === '+' || c === '?') {
      this.i++;
      [min, max] = c === '*' ? [0, Infinity] : c === '+' ? [1, Infinity] : [0, 1];
    } else if (c === '{') {
      // Only a well-formed count: RE2 reads a stray `{` as itself, a `u` RegExp refuses it.
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.s.slice(this.i));
      // RE2 reads a count with a leading zero (`{05}`) as the text itself.
      if (!m || /^0\d/.test(m[1]!) || /^0\d/.test(m[3] ?? '')) throw new NotInSubset();
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
      if (min > MAX_REPEAT || (max !== Infinity && (max > MAX_REPEAT || max < min))) throw new NotInSubset();
      this.i += m[0].length;
    } else return null;
    const lazy = this.peek() === '?';
    if (lazy) this.i++;
    return { min, max, lazy };
  }

  private atom(): Node {
    const c = this.next();
    switch (c) {
      case '(': {
        let capture = true;
        if (this.peek() === '?') {
          if (this.s.slice(this.i, this.i + 2) !== '?:') throw new NotInSubset();
          this.i += 2;
          capture = false;
        }
        const x = this.alternation();
        if (this.next() !== ')') throw new NotInSubset();
        return { k: 'group', capture, x };
      }
      case '[':
        return { k: 'set', ranges: this.charClass() };
      case '.':
        // RE2's `.` is any character but \n; JavaScript's also leaves out \r, U+2028 and U+2029.
        return { k: 'set', ranges: complement([[0x0a, 0x0a]]) };
      case '^':
        return { k: 'bol' };
      case '$':
        return { k: 'eol' };
      case '\\': {
        const e = this.next();
        const perl = PERL[e];
        if (perl) return { k: 'set', ranges: perl.negated ? complement(perl.ranges) : perl.ranges };
        const lit = escapedLiteral(e);
        return { k: 'set', ranges: [[lit, lit]] };
      }
      case '*':
      case '+':
      case '?':
      case '{':
      case '}':
      case ']':
      case ')':
        throw new NotInSubset();
      default: {
        const cp = c.codePointAt(0)!;
        return { k: 'set', ranges: [[cp, cp]] };
      }
    }
  }

  /** A bracket class, after its `[`, as the ranges it matches. */
  private charClass(): Ranges {
    let negated = false;
    if (this.peek() === '^') {
      this.i++;
      negated = true;
    }
    // `[]a]` is a class holding `]` in RE2 and an empty class then `a]` in JavaScript.
    if (this.peek() === ']') throw new NotInSubset();
    const ranges: (readonly [number, number])[] = [];
    const add = (r: Ranges) => ranges.push(...r);
    for (;;) {
      const c = this.next();
      if (c === ']') break;
      if (c === '[') throw new NotInSubset();
      let lo: number;
      if (c === '\\') {
        const e = this.next();
        const perl = PERL[e];
        if (perl) {
          if (perl.negated) throw new NotInSubset();
          add(perl.ranges);
          continue;
        }
        lo = escapedLiteral(e);
      } else lo = c.codePointAt(0)!;
      // A range, unless the `-` ends the class.
      if (this.peek() === '-' && this.s[this.i + 1] !== ']' && this.s[this.i + 1] !== undefined) {
        this.i++;
        const d = this.next();
        let hi: number;
        if (d === '\\') {
          const e = this.next();
          if (PERL[e]) throw new NotInSubset();
          hi = escapedLiteral(e);
        } else if (d === '[') throw new NotInSubset();
        else hi = d.codePointAt(0)!;
        if (hi < lo) throw new NotInSubset();
        add([[lo, hi]]);
      } else add([[lo, lo]]);
    }
    return negated ? complement(ranges) : union(ranges, []);
  }
}

/** The code point an escape stands for: a control letter or punctuation; anything else is outside the subset. */
function escapedLiteral(e: string): number {
  const control = CONTROL[e];
  if (control !== undefined) return control;
  if (PUNCTUATION.test(e)) return e.codePointAt(0)!;
  throw new NotInSubset();
}

// ---- sets of code points -----------------------------------------------------------------------

function union(a: Ranges, b: Ranges): Ranges {
  const all = [...a, ...b].sort((x, y) => x[0] - y[0]);
  const out: [number, number][] = [];
  for (const [lo, hi] of all) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

function complement(a: Ranges): Ranges {
  const out: [number, number][] = [];
  let from = 0;
  for (const [lo, hi] of union(a, [])) {
    if (lo > from) out.push([from, lo - 1]);
    from = hi + 1;
  }
  if (from <= MAX_CODE_POINT) out.push([from, MAX_CODE_POINT]);
  return out;
}

function intersects(a: Ranges, b: Ranges): boolean {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    if (x[1] < y[0]) i++;
    else if (y[1] < x[0]) j++;
    else return true;
  }
  return false;
}

// ---- whether a backtracking engine is ever left two ways forward ------------------------------

/** Starts with `^`, and has no other: a RegExp anchored at the start tries one starting point. */
function anchored(root: Node): boolean {
  if (root.k !== 'cat' || root.xs[0]?.k !== 'bol') return false;
  return !root.xs.slice(1).some(hasBol);
}

function hasBol(n: Node): boolean {
  switch (n.k) {
    case 'bol':
      return true;
    case 'cat':
    case 'alt':
      return n.xs.some(hasBol);
    case 'group':
    case 'rep':
      return hasBol(n.x);
    default:
      return false;
  }
}

const nullables = new WeakMap<Node, boolean>();
const firsts = new WeakMap<Node, Ranges>();

/** Matches the empty string (`^` and `$` match no character). */
function nullable(n: Node): boolean {
  let v = nullables.get(n);
  if (v === undefined) nullables.set(n, (v = nullableOf(n)));
  return v;
}

/** The characters a match of `n` can begin with. */
function first(n: Node): Ranges {
  let v = firsts.get(n);
  if (v === undefined) firsts.set(n, (v = firstOf(n)));
  return v;
}

function nullableOf(n: Node): boolean {
  switch (n.k) {
    case 'set':
      return false;
    case 'bol':
    case 'eol':
      return true;
    case 'cat':
      return n.xs.every(nullable);
    case 'alt':
      return n.xs.some(nullable);
    case 'group':
      return nullable(n.x);
    case 'rep':
      return n.min === 0 || nullable(n.x);
  }
}

function firstOf(n: Node): Ranges {
  switch (n.k) {
    case 'set':
      return n.ranges;
    case 'bol':
    case 'eol':
      return [];
    case 'cat': {
      let out: Ranges = [];
      for (const x of n.xs) {
        out = union(out, first(x));
        if (!nullable(x)) break;
      }
      return out;
    }
    case 'alt':
      return n.xs.reduce<Ranges>((out, x) => union(out, first(x)), []);
    case 'group':
      return first(n.x);
    case 'rep':
      return n.max === 0 ? [] : first(n.x);
  }
}

/**
 * Every choice inside `n` is decided by the next character, given the characters that may follow `n`
 * (`after`; nothing after the whole pattern: its end is a match, and RegExp stops there).
 */
function decided(n: Node, after: Ranges): boolean {
  switch (n.k) {
    case 'set':
    case 'bol':
    case 'eol':
      return true;
    case 'group':
      return decided(n.x, after);
    case 'cat': {
      // What may follow each part, from the last back.
      let follow = after;
      for (let i = n.xs.length - 1; i >= 0; i--) {
        const x = n.xs[i]!;
        if (!decided(x, follow)) return false;
        follow = nullable(x) ? union(first(x), follow) : first(x);
      }
      return true;
    }
    case 'alt': {
      // No alternative matching nothing (it would be chosen by what follows, not by itself), and no two beginning alike.
      if (n.xs.some(nullable)) return false;
      const firsts = n.xs.map(first);
      for (let i = 0; i < firsts.length; i++) for (let j = i + 1; j < firsts.length; j++) if (intersects(firsts[i]!, firsts[j]!)) return false;
      return n.xs.every((x) => decided(x, after));
    }
    case 'rep': {
      const choice = n.max > n.min;
      if (n.max === 0) return true;
      if ((choice || n.max > 1) && nullable(n.x)) return false;
      const again = n.max > 1 ? first(n.x) : [];
      // Another repeat or what follows: told apart by the next character.
      if (choice && intersects(first(n.x), after)) return false;
      return decided(n.x, union(again, after));
    }
  }
}

// ---- writing it for RegExp --------------------------------------------------------------------

const cp = (n: number) => `\\u{${n.toString(16)}}`;

function emit(n: Node): string {
  switch (n.k) {
    case 'set':
      return n.ranges.length === 1 && n.ranges[0]![0] === n.ranges[0]![1] ? cp(n.ranges[0]![0]) : `[${n.ranges.map(([a, b]) => (a === b ? cp(a) : `${cp(a)}-${cp(b)}`)).join('')}]`;
    case 'bol':
      return '^';
    case 'eol':
      return '$';
    case 'cat':
      return n.xs.map(emit).join('');
    case 'alt':
      return n.xs.map(emit).join('|');
    case 'group':
      // Never a capture: test() reads none, and V8 saves every capture at each repeat of a loop around
      // it (300 of them in a `*` over a 30,000-character string overflowed its stack).
      return `(?:${emit(n.x)})`;
    case 'rep': {
      const q = n.min === 0 && n.max === Infinity ? '*' : n.min === 1 && n.max === Infinity ? '+' : n.min === 0 && n.max === 1 ? '?' : n.max === Infinity ? `{${n.min},}` : n.min === n.max ? `{${n.min}}` : `{${n.min},${n.max}}`;
      // A set or a group repeats as written; anything else is wrapped so the quantifier takes all of it.
      const body = n.x.k === 'set' || n.x.k === 'group' ? emit(n.x) : `(?:${emit(n.x)})`;
      return body + q + (n.lazy ? '?' : '');
    }
  }
}
