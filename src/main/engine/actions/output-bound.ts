import { MAX_MAPPED_BODY_BYTES } from '../../../shared/limits';

// Keeping the mapping kit's output to the mapped-body limit without being able to stop it while it
// runs. `transform` builds its whole result before we see it, and a mapping is a template: 1,000
// fields of `{"@template": "{{properties.big}}{{properties.big}}…"}` over a 30 KB call would build
// gigabytes. Two bounds, both stopping at the limit, so their cost is the limit, not the output:
//
// - templateBound: before anything runs, what each `@template` can make (its text plus the value
//   of each placeholder, measured in the call; inside another directive, where the data a placeholder
//   reads is not the call, each placeholder counts as the whole call). Templates are the one way a
//   short mapping multiplies text.
// - Every other directive is evaluated on its own (transform of that one directive, as the whole
//   transform would evaluate it) and its result measured before the next one runs, so the sum stops
//   at the limit. `@path` returns a reference into the call (nothing is copied); `@liquid` is held by
//   the kit's own limits (1,000 characters, no loops, 100 MB per render); `@replace` by its own (a
//   10-character pattern and replacement).
//
// Sizes are of JSON.stringify's text in UTF-8 bytes, counted with a cap: counting stops past it.

/** JSON.stringify(v)'s UTF-8 length, or a number above `cap` as soon as it is known to pass it. */
export function jsonBytesCapped(v: unknown, cap: number): number {
  let n = 0;
  const walk = (x: unknown, inArray: boolean): void => {
    if (n > cap) return;
    if (x === null) n += 4;
    else if (typeof x === 'string') n += stringJsonBytes(x, cap - n);
    else if (typeof x === 'number') n += String(x).length;
    else if (typeof x === 'boolean') n += x ? 4 : 5;
    else if (typeof x === 'object') {
      if (Array.isArray(x)) {
        n += 1 + Math.max(0, x.length - 1) + 1;
        for (const item of x) {
          walk(item, true);
          if (n > cap) return;
        }
      } else {
        n += 2;
        for (const k of Object.keys(x)) {
          const val = (x as Record<string, unknown>)[k];
          if (val === undefined || typeof val === 'function') continue;
          n += stringJsonBytes(k, cap - n) + 2; // key, colon, comma
          walk(val, false);
          if (n > cap) return;
        }
      }
    } else if (inArray) n += 4; // undefined or a function in an array is written null
  };
  walk(v, false);
  return n;
}

/** An upper bound of a string's JSON text in UTF-8 bytes (escapes counted), stopping past `cap`. */
function stringJsonBytes(s: string, cap: number): number {
  if (s.length > cap) return s.length; // every unit is at least one byte
  let n = 2;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20) n += 6;
    else if (c === 0x22 || c === 0x5c) n += 2;
    else if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else n += 3; // a surrogate pair is 2 units of 3: 6 >= its 4 bytes
    if (n > cap) return n;
  }
  return n;
}

/** A value as Segment's templates write it (`value ?? ''`, then the string it becomes). */
function placeholderBytes(v: unknown, cap: number): number {
  if (v === undefined || v === null) return 0;
  if (typeof v === 'string') return stringJsonBytes(v, cap);
  if (typeof v !== 'object') return stringJsonBytes(String(v), cap);
  // An array is joined with commas, an object reads "[object Object]": at most 15 bytes per member
  // more than its JSON. Measured by the JSON first, so a huge value is never joined.
  const json = jsonBytesCapped(v, cap);
  return json > cap ? json : stringJsonBytes(String(v), cap);
}

/** Segment's `get` (packages/core/src/get.ts), for measuring what a placeholder reads. */
export function segmentGet(obj: unknown, path: string): unknown {
  if (path === '' || path === '.') return obj;
  const parts = path.split(/\[(?="|'|\d)|\.|(?<="|'|\d)]+/g).filter((f) => f).map((s) => s.replace(/'|"/g, ''));
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return parts.reduce<any>((prev, key) => prev && prev[key], obj);
}

/** Measuring stops past the most any limit can be. */
const MAX_CAP = MAX_MAPPED_BODY_BYTES + 1;

const PLACEHOLDER = /\{\{\{([^}]+)\}\}\}|\{\{([^}]+)\}\}/g;

/**
 * The most a `@template`'s text can come to, as JSON: its text plus each placeholder's value read
 * from `payload` (null: the payload is not the call; each placeholder counts as `wholeCall` bytes).
 */
export function templateBound(template: string, payload: object | null, wholeCall: number, cap: number): number {
  let n = stringJsonBytes(template, cap);
  for (const m of template.matchAll(PLACEHOLDER)) {
    n += payload === null ? wholeCall : placeholderBytes(segmentGet(payload, (m[1] ?? m[2]).trim()), cap - n);
    if (n > cap) return n;
  }
  return n;
}

/** Is `v` a mapping-kit directive (an object with one key that starts with @)? */
export function isDirective(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const keys = Object.keys(v);
  return keys.length === 1 && keys[0].startsWith('@');
}

/**
 * The largest any `@template` in `mapping` can make, and whether one passes `cap`: top-level
 * templates (not inside another directive) are measured against the call, others counted with
 * every placeholder the whole call.
 */
export function templatesOver(mapping: unknown, call: object, limit: { bytes: number; passedBy(n: number): boolean }): number | null {
  const cap = MAX_CAP;
  let wholeCall: number | null = null;
  let over: number | null = null;
  const walk = (v: unknown, payload: object | null): void => {
    if (over !== null || v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) return v.forEach((item) => walk(item, payload));
    if (isDirective(v)) {
      const [key] = Object.keys(v);
      const arg = v[key];
      if (key === '@template' && typeof arg === 'string') {
        const n = templateBound(arg, payload, payload === null ? (wholeCall ??= jsonBytesCapped(call, cap)) : 0, cap);
        if (limit.passedBy(n)) over = n;
        return;
      }
      // Inside another directive a template may read something else than the call (an @arrayPath
      // item, @transform's new payload): counted with the whole call per placeholder.
      if (key === '@arrayPath' && Array.isArray(arg)) {
        walk(arg[0], payload);
        return walk(arg[1], null);
      }
      return walk(arg, key === '@transform' ? null : payload);
    }
    for (const k of Object.keys(v)) walk((v as Record<string, unknown>)[k], payload);
  };
  walk(mapping, call);
  return over;
}

/**
 * An upper bound of the whole output when the mapping uses only `@path` and `@template` (the usual
 * mapping), measured without running the kit; null when another directive is in it (the caller then
 * evaluates directive by directive). Lets the common mapping run the kit once.
 */
export function simpleBound(mapping: unknown, call: object, cap: number): number | null {
  let n = 0;
  let simple = true;
  const walk = (v: unknown): void => {
    if (!simple || n > cap) return;
    if (v === null || typeof v !== 'object') {
      n += jsonBytesCapped(v, cap - n) + 1; // the value and its comma
      return;
    }
    if (Array.isArray(v)) {
      n += 2;
      return v.forEach(walk);
    }
    if (isDirective(v)) {
      const [key] = Object.keys(v);
      const arg = v[key];
      if (key === '@path' && typeof arg === 'string') n += jsonBytesCapped(segmentGet(call, arg.replace('$.', '')), cap - n) + 1;
      else if (key === '@template' && typeof arg === 'string') n += templateBound(arg, call, 0, cap - n) + 1;
      else simple = false;
      return;
    }
    n += 2;
    for (const k of Object.keys(v)) {
      n += stringJsonBytes(k, cap - n) + 1;
      walk((v as Record<string, unknown>)[k]);
    }
  };
  walk(mapping);
  return simple ? n : null;
}
