import { inspect } from 'node:util';

// How `webhook-lab/testing` compares a match with a call (or a delivery) as received, and says how
// they differ when a wait times out. The rules are expect().toMatchObject's, so a test reads the same
// in any runner: an object matches when each key it names matches (others are ignored), nested
// objects the same way; an array matches an array of the same length item by item; other values
// must be equal (===). Two additions: a function anywhere is a predicate over the value there, and a
// RegExp tests a string. A match of `undefined` for a key means the key is absent.

/** A value to compare: a partial object, an array, a RegExp, a predicate, or a value to be equal to. */
export type Matcher = unknown;

/** One way a value differs from a match: where (`properties.total`, '' for the value itself), what was expected and what was received. */
export interface Difference {
  path: string;
  expected: string;
  received: string;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => {
  if (typeof v !== 'object' || v === null || Array.isArray(v) || v instanceof RegExp) return false;
  // By shape, not by identity with this realm's Object.prototype: under Jest or Vitest's vmThreads a
  // test's objects (or the calls it is given) come from another realm, whose Object.prototype differs.
  if (Object.prototype.toString.call(v) !== '[object Object]') return false;
  const proto = Object.getPrototypeOf(v) as object | null;
  return proto === null || Object.getPrototypeOf(proto) === null;
};

/** A value as a test runner prints it: one line, at most 120 characters. */
export function show(value: unknown): string {
  const text = inspect(value, { depth: 4, breakLength: Infinity, compact: true, maxArrayLength: 10, maxStringLength: 100 });
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
}

function joinPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  const name = /^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key);
  if (name !== key) return `${path}[${name}]`;
  return path === '' ? key : `${path}.${key}`;
}

/** Every way `value` differs from `match`; empty when it matches. */
export function differences(match: Matcher, value: unknown, path = ''): Difference[] {
  if (typeof match === 'function') {
    let ok: unknown;
    try {
      ok = (match as (v: unknown) => unknown)(value);
    } catch (err) {
      return [{ path, expected: `${predicateName(match)} to return true`, received: `${show(value)} (the predicate threw: ${(err as Error)?.message ?? String(err)})` }];
    }
    // A Promise is truthy: an async predicate would match everything.
    if (typeof (ok as { then?: unknown } | null)?.then === 'function') {
      return [{ path, expected: `${predicateName(match)} to return true or false`, received: `a Promise (an async predicate cannot be waited on: make it synchronous) for ${show(value)}` }];
    }
    return ok ? [] : [{ path, expected: `${predicateName(match)} to return true`, received: show(value) }];
  }
  if (match instanceof RegExp) {
    return typeof value === 'string' && new RegExp(match.source, match.flags.replace('g', '')).test(value) ? [] : [{ path, expected: `a string matching ${String(match)}`, received: show(value) }];
  }
  if (Array.isArray(match)) {
    if (!Array.isArray(value)) return [{ path, expected: `an array of ${match.length}`, received: show(value) }];
    if (value.length !== match.length) return [{ path, expected: `an array of ${match.length}: ${show(match)}`, received: `an array of ${value.length}: ${show(value)}` }];
    return match.flatMap((m, i) => differences(m, value[i], joinPath(path, i)));
  }
  if (isPlainObject(match)) {
    if (!isPlainObject(value)) return [{ path, expected: show(match), received: show(value) }];
    const out: Difference[] = [];
    for (const [key, m] of Object.entries(match)) {
      const at = joinPath(path, key);
      const present = Object.prototype.hasOwnProperty.call(value, key);
      if (m === undefined) {
        if (present && value[key] !== undefined) out.push({ path: at, expected: 'absent', received: show(value[key]) });
      } else if (!present && typeof m === 'function') {
        // A predicate decides about an absent key too (it gets undefined).
        out.push(...differences(m, undefined, at));
      } else if (!present) {
        out.push({ path: at, expected: show(m), received: 'absent' });
      } else {
        out.push(...differences(m, value[key], at));
      }
    }
    return out;
  }
  return match === value || (Number.isNaN(match) && Number.isNaN(value)) ? [] : [{ path, expected: show(match), received: show(value) }];
}

function predicateName(fn: unknown): string {
  const name = (fn as { name?: string }).name;
  return name ? `predicate ${name}` : 'the predicate';
}

/** Whether `value` matches; a missing match (undefined) matches everything. */
export function matches(match: Matcher | undefined, value: unknown): boolean {
  return match === undefined || differences(match, value).length === 0;
}

/**
 * How far a value is from a match, to list the closest first: a difference at the top (the call's
 * type or event) counts twice one deeper down (one property), so a call of the right event with a
 * wrong property comes before a call of another event; and a key with a wrong value before one absent.
 */
export function distance(diffs: Difference[]): number {
  // A key the call lacks is farther than one it has with another value (the call is of another kind).
  return diffs.reduce((sum, d) => sum + (/[.[]/.test(d.path) ? 1 : 2) * (d.received === 'absent' ? 1.5 : 1), 0);
}

/** A match as the error message shows it. */
export function describeMatch(match: Matcher): string {
  if (typeof match !== 'function') return show(match);
  const source = String(match).replace(/\s+/g, ' ');
  return `${predicateName(match)}: ${source.length > 120 ? `${source.slice(0, 119)}…` : source}`;
}

/** The differences as a runner's diff: the path, then `- expected` and `+ received`, indented. */
export function formatDifferences(diffs: Difference[], indent: string): string {
  return diffs
    .slice(0, 8)
    .map((d) => `${indent}${d.path || '(the whole value)'}\n${indent}  - expected ${d.expected}\n${indent}  + received ${d.received}`)
    .concat(diffs.length > 8 ? [`${indent}… and ${diffs.length - 8} more differences`] : [])
    .join('\n');
}
