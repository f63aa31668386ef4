// JSON Schema `pattern`s run on JavaScript's backtracking RegExp engine, inside the collector's path:
// a pattern like `^(a+)+$` takes exponential time on a string of a few dozen characters and would
// stall every request. No linear-time engine can be used here (re2js is not a dependency; the native
// re2 cannot be built for Electron), so a rule is refused when a pattern repeats a group that itself
// holds an unbounded repetition (star height above 1: `(a+)+`, `(\w*\s?)*`, `(x{2,})+`), the shape
// behind most catastrophic backtracking, as the safe-regex rule does. Patterns Segment documents
// (no lookahead) are otherwise kept as written. Not every slow pattern is caught: an alternation
// whose branches overlap (`(a|a)*`) passes (README, Decisions).

/** Why a pattern is refused, or null when it is kept. */
export function unsafePattern(pattern: string): string | null {
  // One entry per open group: whether it holds an unbounded repetition so far.
  const groups: boolean[] = [];
  let inClass = false;
  let lastGroupUnbounded: boolean | null = null;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '\\') {
      i++;
      lastGroupUnbounded = null;
      continue;
    }
    if (inClass) {
      if (ch === ']') inClass = false;
      continue;
    }
    if (ch === '[') {
      inClass = true;
      lastGroupUnbounded = null;
      continue;
    }
    if (ch === '(') {
      groups.push(false);
      lastGroupUnbounded = null;
      continue;
    }
    if (ch === ')') {
      const held = groups.pop() ?? false;
      // What the group held counts for the group around it too.
      if (held && groups.length) groups[groups.length - 1] = true;
      lastGroupUnbounded = held;
      continue;
    }
    const unbounded = ch === '*' || ch === '+' || (ch === '{' && /^\{\d*,\}/.test(pattern.slice(i)));
    const bounded = ch === '?' || (ch === '{' && /^\{\d+(,\d+)?\}/.test(pattern.slice(i)));
    if (unbounded || bounded) {
      if (lastGroupUnbounded && (unbounded || /^\{\d+,\d{2,}\}/.test(pattern.slice(i)))) {
        return `the pattern ${JSON.stringify(pattern)} repeats a group that itself repeats without bound (like (a+)+): it could take exponential time on a call, so it is refused`;
      }
      if (unbounded && groups.length) groups[groups.length - 1] = true;
      lastGroupUnbounded = null;
      continue;
    }
    lastGroupUnbounded = null;
  }
  return null;
}

/** Ajv's `code.regExp`: new RegExp, after unsafePattern (a refused pattern fails the rule's compile). */
export const safeRegExp = Object.assign(
  (pattern: string, flags: string): RegExp => {
    const why = unsafePattern(pattern);
    if (why) throw new Error(why);
    return new RegExp(pattern, flags);
  },
  { code: 'new RegExp' },
);
