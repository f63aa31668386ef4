import { RE2JS } from 're2js';
import { toSameRegExpSource } from './native-pattern';

// JSON Schema `pattern`s (and `patternProperties` keys) run inside the collector's path. On
// JavaScript's backtracking RegExp a pattern like `^(a+)+$` takes exponential time on a string of a few
// dozen characters and would stall every request, so Ajv matches them with re2js (issue 24), a
// pure-JavaScript port of RE2 whose time is linear in the input whatever the pattern. RE2 is also the
// syntax Segment documents for tracking-plan patterns: no lookahead, lookbehind or backreferences —
// such a pattern is refused when its rule compiles, with re2js's reason.

/**
 * ECMA-262 escapes RE2 spells differently: `\uXXXX` (a surrogate pair as one code point) and `\u{X}`
 * become `\x{X}`. Everything else is passed as written.
 */
export function toRe2Syntax(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch !== '\\') {
      out += ch;
      continue;
    }
    const braced = /^u\{([0-9A-Fa-f]{1,6})\}/.exec(pattern.slice(i + 1));
    if (braced) {
      out += `\\x{${braced[1]}}`;
      i += braced[0].length;
      continue;
    }
    const unit = /^u([0-9A-Fa-f]{4})(?:\\u([0-9A-Fa-f]{4}))?/.exec(pattern.slice(i + 1));
    if (unit) {
      const hi = parseInt(unit[1], 16);
      const lo = unit[2] === undefined ? -1 : parseInt(unit[2], 16);
      if (hi >= 0xd800 && hi <= 0xdbff && lo >= 0xdc00 && lo <= 0xdfff) {
        out += `\\x{${(((hi - 0xd800) << 10) + (lo - 0xdc00) + 0x10000).toString(16)}}`;
        i += unit[0].length;
      } else {
        out += `\\x{${unit[1]}}`;
        i += 5;
      }
      continue;
    }
    // Any other escape is copied whole, so `\\u0041` stays a backslash then `u0041`.
    out += ch + (pattern[i + 1] ?? '');
    i++;
  }
  return out;
}

/**
 * Ajv's `code.regExp`: an RE2 program with RegExp's `test`, or JavaScript's RegExp where it matches
 * what RE2 matches, in linear time too (native-pattern.ts); a pattern RE2 cannot run fails the rule's compile.
 */
export const linearRegExp = Object.assign(
  (pattern: string): { test(input: string): boolean } => {
    try {
      const re2 = RE2JS.compile(toRe2Syntax(pattern));
      const same = toSameRegExpSource(pattern);
      return same === null ? re2 : new RegExp(same, 'u');
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new Error(
        `the pattern ${JSON.stringify(pattern)} cannot be used: ${why} (patterns are matched in linear time with RE2 syntax, as Segment documents: no lookahead, lookbehind or backreferences)`,
      );
    }
  },
  // Only read by Ajv's standalone code generation, which the lab does not use.
  { code: 'require("re2js").RE2JS.compile' },
);

