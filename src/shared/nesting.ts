// How deep a call may nest objects and arrays (decision, stated in the README). JSON.parse accepts
// any depth, but JSON.stringify, structured clone (IPC) and every recursive walk overflow the stack
// at a few thousand levels, and pretty-printing grows with the square of the depth. Real calls nest a
// handful of levels (analytics.js's deepest standard field, context.traits.address.city, is level 4;
// the e-commerce spec's properties.products[i].x is level 4), so 64 leaves room for any real payload
// while keeping every walk of an accepted call shallow. A deeper call is stored as dropped.

/** Most levels of objects and arrays a call may have, the call itself counted as level 1. */
export const MAX_CALL_DEPTH = 64;

export const TOO_DEEP_REASON = `nested too deep (more than ${MAX_CALL_DEPTH} levels)`;

/**
 * Whether `value` nests objects and arrays more than `limit` levels deep (a primitive is level 0,
 * an object or array 1 more than its deepest member). Iterative, so it is safe at any depth, and it
 * stops at the first container past the limit. Meant for JSON values (own enumerable keys).
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  return walkProblem(value, limit, false) === 'deep';
}

/**
 * A call's walk (normalization rules from version 2): nested past `limit` ('deep'), or holding a
 * number JSON cannot carry ('non-finite': JSON.parse reads 1e999 as Infinity, which JSON.stringify
 * writes as null, so the value would be stored and sent as null), whichever the walk meets first.
 */
export function callWalkProblem(value: unknown, limit: number): 'deep' | 'non-finite' | null {
  return walkProblem(value, limit, true);
}

function walkProblem(value: unknown, limit: number, numbers: boolean): 'deep' | 'non-finite' | null {
  if (typeof value !== 'object' || value === null) return numbers && nonFinite(value) ? 'non-finite' : null;
  if (limit < 1) return 'deep';
  // Containers still to look into, with each one's level.
  const stack: object[] = [value];
  const levels: number[] = [1];
  while (stack.length > 0) {
    const v = stack.pop() as Record<string, unknown>;
    const level = levels.pop() as number;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const c: unknown = v[i];
        if (typeof c !== 'object' || c === null) {
          if (numbers && nonFinite(c)) return 'non-finite';
          continue;
        }
        if (level === limit) return 'deep';
        stack.push(c);
        levels.push(level + 1);
      }
    } else {
      for (const k in v) {
        const c = v[k];
        if (typeof c !== 'object' || c === null) {
          if (numbers && nonFinite(c)) return 'non-finite';
          continue;
        }
        if (level === limit) return 'deep';
        stack.push(c);
        levels.push(level + 1);
      }
    }
  }
  return null;
}

const nonFinite = (v: unknown): boolean => typeof v === 'number' && !Number.isFinite(v);

/** Where the first number JSON cannot carry is (see callWalkProblem), as a path; [] when none is. */
export function nonFinitePath(value: unknown): (string | number)[] {
  const stack: { v: unknown; path: (string | number)[] }[] = [{ v: value, path: [] }];
  while (stack.length > 0) {
    const { v, path } = stack.pop()!;
    if (nonFinite(v)) return path;
    if (typeof v !== 'object' || v === null) continue;
    const keys: (string | number)[] = Array.isArray(v) ? v.map((_, i) => i) : Object.keys(v);
    // Pushed last first, so the first key is looked at first.
    for (let i = keys.length - 1; i >= 0; i--) stack.push({ v: (v as Record<string | number, unknown>)[keys[i]!], path: [...path, keys[i]!] });
  }
  return [];
}

export const NON_FINITE_REASON = "a number beyond what JSON can hold (past ±1.8e308, read as Infinity): it would be stored and sent as null";

/**
 * How deep an operation's input (a control API body, an IPC payload) may nest, the input itself
 * being level 1: a call's limit, plus room for the request around the deepest field that may hold a
 * call-sized value (a config file names an Actions mapping's data 7 levels down). Every input is
 * walked for it, without recursion, before any schema sees it: schemas (an audience rule's, z.json())
 * recurse, and a value nested thousands deep would overflow the stack instead of naming its field.
 */
export const MAX_INPUT_DEPTH = MAX_CALL_DEPTH + 8;

export const INPUT_TOO_DEEP = `nested more than ${MAX_INPUT_DEPTH} levels deep (an input may hold a call's ${MAX_CALL_DEPTH} levels and ${MAX_INPUT_DEPTH - MAX_CALL_DEPTH} around them)`;

interface Walked {
  v: object;
  level: number;
  key: string | number;
  up: Walked | null;
}

/**
 * Where `value` first nests past `limit` levels (as nestsDeeperThan counts them): the keys from the
 * value down to the first container past the limit, or null when it does not. Iterative, like
 * nestsDeeperThan, and it stops there.
 */
export function pathPastDepth(value: unknown, limit: number): (string | number)[] | null {
  if (typeof value !== 'object' || value === null) return null;
  if (limit < 1) return [];
  const stack: Walked[] = [{ v: value, level: 1, key: '', up: null }];
  let found: (string | number)[] | null = null;
  // One member: pushed when it is a container; `found` once one is past the limit.
  const visit = (w: Walked, key: string | number, c: unknown): boolean => {
    if (typeof c !== 'object' || c === null) return false;
    if (w.level === limit) {
      found = [key];
      for (let at: Walked | null = w; at && at.up; at = at.up) found.push(at.key);
      found.reverse();
      return true;
    }
    stack.push({ v: c, level: w.level + 1, key, up: w });
    return false;
  };
  while (stack.length > 0) {
    const w = stack.pop() as Walked;
    if (Array.isArray(w.v)) {
      for (let i = 0; i < w.v.length; i++) if (visit(w, i, w.v[i])) return found;
    } else {
      const o = w.v as Record<string, unknown>;
      for (const k in o) if (visit(w, k, o[k])) return found;
    }
  }
  return null;
}

interface Frame {
  value: unknown[] | Record<string, unknown>;
  /** An object's keys; null for an array. */
  keys: string[] | null;
  /** Next index (of the array, or of keys). */
  next: number;
  /** Members written so far (for the commas). */
  written: number;
}

/**
 * JSON.stringify's compact text of a JSON value, at any depth: the native one first, and when it
 * runs out of stack, the same text built with an explicit stack (own enumerable keys in order,
 * members that JSON cannot hold left out of objects and written `null` in arrays, as natively).
 */
export function stringifyJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
  }
  const out: string[] = [];
  const stack: Frame[] = [];
  const write = (v: unknown): void => {
    if (typeof v !== 'object' || v === null) {
      out.push(JSON.stringify(v) ?? 'null');
    } else if (Array.isArray(v)) {
      out.push('[');
      stack.push({ value: v, keys: null, next: 0, written: 0 });
    } else {
      out.push('{');
      stack.push({ value: v as Record<string, unknown>, keys: Object.keys(v), next: 0, written: 0 });
    }
  };
  write(value);
  while (stack.length > 0) {
    const f = stack[stack.length - 1];
    if (f.keys === null) {
      const a = f.value as unknown[];
      if (f.next === a.length) {
        out.push(']');
        stack.pop();
        continue;
      }
      if (f.written++ > 0) out.push(',');
      write(a[f.next++]);
    } else {
      const o = f.value as Record<string, unknown>;
      while (f.next < f.keys.length && !holdsJson(o[f.keys[f.next]])) f.next++;
      if (f.next === f.keys.length) {
        out.push('}');
        stack.pop();
        continue;
      }
      const key = f.keys[f.next++];
      out.push(`${f.written++ > 0 ? ',' : ''}${JSON.stringify(key)}:`);
      write(o[key]);
    }
  }
  return out.join('');
}

/** What JSON.stringify keeps as an object member (it drops undefined, functions and symbols). */
const holdsJson = (v: unknown) => v !== undefined && typeof v !== 'function' && typeof v !== 'symbol';
