import type { Json, NormalizedCall } from '../types';
import { MAPPED_BODY_RATIO, MAX_MAPPED_BODY_BYTES, MIN_MAPPED_BODY_BYTES, mappedBodyLimit } from '../limits';

// A mapping's `data`: the body of a Webhooks (Actions) request, built from the call by Segment's
// mapping-kit (segmentio/action-destinations, packages/core/src/mapping-kit). We keep its two
// directives people use in this destination, with its rules:
//   {"@path": "$.properties.total"}    the value there; a field whose path finds nothing is left out
//   {"@template": "Hi {{traits.name}}"} text; `{{x}}` HTML-escapes a string value as mapping-kit's
//                                       placeholders.ts does (so "a/b" becomes "a&#x2F;b"), `{{{x}}}`
//                                       does not; a missing value is ''
// Anything else is a literal, and objects and arrays are resolved member by member.
// Paths must start with `$.` here (mapping-kit also takes them without), so a typo cannot read as
// a literal-looking key: `$.` alone is the whole call, then dotted keys and [n] indexes.

/** The default data: the whole call, as Segment's Webhooks (Actions) sends it. */
export const WHOLE_EVENT: Json = { '@path': '$.' };

export type PathSegment = string | number;

/** `$.a.b[0].c` → ['a', 'b', 0, 'c']; `$.` → []; null when it is not such a path. */
export function parseDataPath(path: string): PathSegment[] | null {
  if (!path.startsWith('$.')) return null;
  if (path === '$.') return [];
  return parseRelativePath(path.slice(2));
}

/** `a.b[0]` (a template placeholder's path) → ['a', 'b', 0]; null when malformed. */
export function parseRelativePath(path: string): PathSegment[] | null {
  const out: PathSegment[] = [];
  for (const part of path.split('.')) {
    const m = /^([^.[\]]+)((?:\[\d+\])*)$/.exec(part);
    if (!m) return null;
    out.push(m[1]);
    for (const idx of m[2].matchAll(/\[(\d+)\]/g)) out.push(Number(idx[1]));
  }
  return out;
}

/** The value at `segments` inside `root`, or undefined when any step finds nothing. */
export function lookup(root: unknown, segments: readonly PathSegment[]): Json | undefined {
  let v: unknown = root;
  for (const s of segments) {
    if (v === null || typeof v !== 'object') return undefined;
    if (Array.isArray(v)) {
      const i = typeof s === 'number' ? s : /^\d+$/.test(s) ? Number(s) : -1;
      v = i >= 0 && i < v.length ? v[i] : undefined;
    } else {
      v = Object.prototype.hasOwnProperty.call(v, s) ? (v as Record<string, unknown>)[String(s)] : undefined;
    }
  }
  return v as Json | undefined;
}

const HTML_ENTITIES: Record<string, string> = {
  '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '/': '&#x2F;', '`': '&#x60;', '=': '&#x3D;',
};

/** mapping-kit's render(): triple braces first (raw), then double braces (escaped). */
export function renderTemplate(template: string, call: unknown, budget?: Budget): string {
  // With a budget, the placeholders' text is counted as it is made: a template repeating a large
  // value thousands of times stops at the limit instead of building the whole string.
  let made = 0;
  const text = (raw: string, escape: boolean): string => {
    const segments = parseRelativePath(raw.trim());
    const value = segments ? lookup(call, segments) : undefined;
    if (value === undefined || value === null) return '';
    // Segment's String(): an object reads "[object Object]", an array "a,b". Kept, as it is what arrives.
    const out = escape && typeof value === 'string' ? value.replace(/[&<>"'`=/]/g, (c) => HTML_ENTITIES[c]) : String(value);
    if (budget) {
      made += out.length;
      while (made > budget.left) overLimit(budget, budget.limit - budget.left + made);
    }
    return out;
  };
  return template
    .replace(/\{\{\{([^}]+)\}\}\}/g, (_, p: string) => text(p, false))
    .replace(/\{\{([^}]+)\}\}/g, (_, p: string) => text(p, true));
}

/** The directive an object is, if it is one: a single `@`-key. */
function directiveOf(v: { [key: string]: Json }): { key: string; arg: Json } | null {
  const keys = Object.keys(v);
  if (keys.length !== 1 || !keys[0].startsWith('@')) return null;
  return { key: keys[0], arg: v[keys[0]] };
}

/**
 * `data` resolved against the call; undefined when it resolves to nothing (a top-level `@path` that
 * finds nothing), in which case Segment sends no body and no signature. Omitted data = the whole call.
 * Expects data the schema accepted (dataMappingErrors); an unknown directive is kept as a literal.
 */
export function resolveData(data: Json | undefined, call: NormalizedCall): Json | undefined {
  return resolve(data ?? WHOLE_EVENT, call, undefined);
}

const size = (n: number) => (n < 1024 ? `${n} B` : `${Number((n / 1024).toFixed(1))} KB`);

/** A mapped body passed its limit; evaluation stopped there. The message is the reason a delivery shows. */
export class MappedDataTooLarge extends Error {
  constructor(
    readonly limitBytes: number,
    /** How far the output had got when evaluation stopped (a lower bound of the whole). */
    readonly reachedBytes: number,
    /** The call's own JSON size, which the limit is relative to; null when the limit was given. */
    readonly callBytes: number | null,
  ) {
    super(
      `the mapped body passed its limit of ${size(limitBytes)} (evaluation stopped at ${reachedBytes.toLocaleString('en-US')} bytes)` +
        (callBytes === null
          ? ''
          : `: a call's mapped data may be ${MAPPED_BODY_RATIO} times the call (here ${size(callBytes)}), at least ${size(MIN_MAPPED_BODY_BYTES)}, at most ${size(MAX_MAPPED_BODY_BYTES)}`),
    );
    this.name = 'MappedDataTooLarge';
  }
}

/**
 * `data` resolved against the call as the JSON text sent (an unbatched body, or a batch item);
 * undefined when it resolves to nothing. Throws MappedDataTooLarge when the text would pass its limit
 * (UTF-8; by default mappedBodyLimit of the call), having stopped evaluating as soon as it did: the
 * output is counted as it is built, so a mapping of thousands of whole-call copies costs the limit,
 * not thousands of copies. The call's own size is measured only once the output passes 8 KB.
 */
export function mappedDataText(data: Json | undefined, call: NormalizedCall, limitBytes?: number): string | undefined {
  const sizes = new WeakMap<object, number>();
  const budget: Budget =
    limitBytes === undefined
      ? { limit: MIN_MAPPED_BODY_BYTES, left: MIN_MAPPED_BODY_BYTES, callBytes: null, sizes, grow: () => jsonSize(call, sizes) }
      : { limit: limitBytes, left: limitBytes, callBytes: null, sizes };
  const top = data ?? WHOLE_EVENT;
  // One @path (the default, the whole event): its text is the body, serialized once.
  const d = top !== null && typeof top === 'object' && !Array.isArray(top) ? directiveOf(top) : null;
  const v = d?.key === '@path' && typeof d.arg === 'string' ? pathValue(d.arg, call) : resolve(top, call, budget);
  if (v === undefined) return undefined;
  const text = JSON.stringify(v);
  const bytes = utf8Length(text);
  while (bytes > budget.limit) overLimit(budget, bytes);
  return text;
}

/**
 * What is left of a mapped body's limit, counted in UTF-16 units of the JSON text: each unit is at
 * least one UTF-8 byte, so passing it in units passes it in bytes (the exact count is checked on the
 * text at the end). `grow`, when set, gives the call's size the first time the output passes the
 * limit, which then becomes mappedBodyLimit of it.
 */
export interface Budget {
  limit: number;
  left: number;
  callBytes: number | null;
  grow?: () => number;
  /** JSON sizes of the call's objects measured so far: a field copied a thousand times is measured once. */
  sizes: WeakMap<object, number>;
}

function jsonSize(v: unknown, sizes: WeakMap<object, number>): number {
  if (v === null || typeof v !== 'object') return JSON.stringify(v).length;
  let n = sizes.get(v);
  if (n === undefined) sizes.set(v, (n = JSON.stringify(v).length));
  return n;
}

function pathValue(path: string, call: NormalizedCall): Json | undefined {
  const segments = parseDataPath(path);
  return segments ? lookup(call, segments) : undefined;
}

/** Over the limit: raised once to the call's own limit when that is still to be measured, else thrown. */
function overLimit(b: Budget, reached: number): void {
  if (b.grow) {
    b.callBytes = b.grow();
    b.grow = undefined;
    const to = mappedBodyLimit(b.callBytes);
    b.left += to - b.limit;
    b.limit = to;
    if (reached <= to) return;
  }
  throw new MappedDataTooLarge(b.limit, reached, b.callBytes);
}

function charge(b: Budget | undefined, units: number): void {
  if (b && (b.left -= units) < 0) overLimit(b, b.limit - b.left);
}

function resolve(v: Json, call: NormalizedCall, b: Budget | undefined): Json | undefined {
  if (v === null || typeof v !== 'object') {
    if (b) charge(b, JSON.stringify(v).length);
    return v;
  }
  if (Array.isArray(v)) {
    charge(b, v.length + 1); // brackets and commas (one less for an empty array: a lower bound, as every count here)
    return v.map((item) => resolve(item, call, b) ?? (charge(b, 4), null)); // as JSON writes a hole
  }
  const d = directiveOf(v);
  if (d && d.key === '@path' && typeof d.arg === 'string') {
    const found = pathValue(d.arg, call);
    // One call's value: at most a call's size to measure, once.
    if (b && found !== undefined) charge(b, jsonSize(found, b.sizes));
    return found;
  }
  if (d && d.key === '@template' && typeof d.arg === 'string') {
    const text = renderTemplate(d.arg, call, b);
    if (b) charge(b, JSON.stringify(text).length);
    return text;
  }
  const out: { [key: string]: Json } = {};
  charge(b, 1); // `{`; each member adds its key, a colon and a comma (or the closing brace)
  // for…in, not Object.keys: evaluation may stop after a few of a thousand keys. Parsed JSON has
  // only own, enumerable keys, in the same order.
  for (const k in v) {
    const r = resolve(v[k], call, b);
    if (r !== undefined) {
      if (b) charge(b, JSON.stringify(k).length + 2);
      out[k] = r;
    }
  }
  return out;
}

/** UTF-8 length of a string (no Buffer in shared code, and TextEncoder would copy it). */
export function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) n += c >= 0x800 && (c < 0xd800 || c > 0xdfff) ? 2 : 1; // a surrogate pair: 2 units, 4 bytes
  }
  return n;
}

export interface DataIssue {
  /** Where in `data`, for the schema to report as `mappings[0].data.<path>`. */
  path: PathSegment[];
  message: string;
}

/**
 * Whether `data` has more than `max` fields: object members and array items, a directive (`@path`,
 * `@template`) being one field's value. Stops counting past `max`. Expects data the depth check passed.
 */
export function dataFieldsOver(data: Json, max: number): boolean {
  let n = 0;
  const walk = (v: Json): boolean => {
    if (v === null || typeof v !== 'object' || (!Array.isArray(v) && directiveOf(v))) return false;
    const children = Array.isArray(v) ? v : Object.values(v);
    if ((n += children.length) > max) return true;
    return children.some(walk);
  };
  return walk(data);
}

/** Why `data` is not a mapping we can resolve; empty when it is. */
export function dataMappingErrors(data: Json, at: PathSegment[] = []): DataIssue[] {
  if (data === null || typeof data !== 'object') return [];
  if (Array.isArray(data)) return data.flatMap((item, i) => dataMappingErrors(item, [...at, i]));
  const keys = Object.keys(data);
  const directives = keys.filter((k) => k.startsWith('@'));
  if (directives.length === 0) return keys.flatMap((k) => dataMappingErrors(data[k], [...at, k]));
  if (keys.length > 1) {
    return [{ path: at, message: `a directive (${directives[0]}) must be the only key of its object; put it under its own key` }];
  }
  const key = keys[0];
  const arg = data[key];
  if (key !== '@path' && key !== '@template') {
    return [{ path: [...at, key], message: `unsupported directive "${key}": use @path or @template` }];
  }
  if (typeof arg !== 'string') return [{ path: [...at, key], message: `${key} takes a string` }];
  if (key === '@path') {
    return parseDataPath(arg) ? [] : [{ path: [...at, key], message: `"${arg}" is not a path: start with "$." then dotted keys and [n] indexes, e.g. "$.properties.items[0].sku"` }];
  }
  const bad = [...arg.matchAll(/\{\{\{?([^}]*)\}?\}\}/g)].find((m) => !parseRelativePath(m[1].trim()));
  return bad ? [{ path: [...at, key], message: `placeholder "${bad[0]}" is not a path: use dotted keys, e.g. {{properties.plan}}` }] : [];
}
