import { MAX_CALL_BYTES } from '../../../shared/limits';
import { atPointer } from './schema-bounds';

// What a rule's JSON Schema may cost one call, counted before Ajv compiles it (issue 38). A schema's
// node count (schema-bounds.ts) says little about its work: one 170 KB enum of 25,000 strings under
// an array's `items` compares every item of the call with every value (5,000 items: 13-22 s). Here
// each subschema is walked once per way it is reached (local $refs followed) with the most values
// it can be applied to in one call of a given size, and the work that grows with both is counted:
// enum values × values checked, patternProperties × keys, branches nested along one path. The products
// that only a hostile rule reaches are refused with the rule's path and the product; the rest becomes
// an estimate of the worst check of a call of each size (microseconds), which decides whether a call
// is checked on the event loop or in a check worker (service.ts, check-pool.ts).

/** Enum comparisons one call may cost (values × the values they are compared with); an object or array value counts ENUM_COMPOUND_WEIGHT. */
export const MAX_ENUM_COMPARISONS = 50_000_000;
export const ENUM_COMPOUND_WEIGHT = 4;
/** patternProperties patterns × the keys one call may hold where they apply. */
export const MAX_PATTERN_TESTS = 500_000;
/** anyOf / oneOf / allOf branches along one path: Ajv nests their code, and 2,000 overflowed the stack. */
export const MAX_NESTED_BRANCHES = 500;

/** Call sizes (bytes of JSON) the estimate is made for; a call is judged by the smallest one it fits. */
export const SIZE_BUCKETS = [256, 512, 1024, 2048, 4096, 8192, 16_384, MAX_CALL_BYTES] as const;

/**
 * Microseconds, measured on the lab's 2-core reference machine and rounded up: one subschema applied
 * to one value; the errors one item or property value may cause (Ajv makes and keeps each, with
 * verbose: 16,000 items failing `type` took 67 ms); one enum comparison (25,000 × 5,000 took 5.6 s);
 * one key tested against one pattern (1,000 patterns × 2,500 keys took 2 s).
 */
const US_PER_NODE = 1;
const US_PER_VALUE = 3;
const US_PER_COMPARISON = 0.05;
const US_PER_PATTERN_TEST = 1;
const US_PER_CHAR = 0.01;

export interface RuleWork {
  /** A product over its bound: why the rule is refused (its JSON pointer in the schema and the product), or null. */
  problem: string | null;
  /** The estimated worst check of a call, in µs, for each of SIZE_BUCKETS. */
  costUs: number[];
  /**
   * The estimated compile, in µs: a subschema 20, a pattern 700 (RE2 compiles it), an anyOf/oneOf/allOf
   * branch 1,000 (Ajv's code for each), an enum value 6 (500 branches took 1.2 s, 25,000 enum values 150 ms).
   */
  compileUs: number;
}

/** The most values (items, property values) a call of `bytes` can hold: `0,` is two bytes. */
const valuesIn = (bytes: number) => Math.floor(bytes / 2);
/** The most keys one object of a call of `bytes` can hold: `"ab":0,` is seven bytes (one-letter keys run out). */
const keysIn = (bytes: number) => Math.floor(bytes / 6);

type Vec = number[];
const LAST = SIZE_BUCKETS.length - 1;

/** Walks a schema that schemaBounds already admitted (no recursive $ref, at most 20,000 expanded subschemas). */
export function ruleWork(schema: Record<string, unknown>): RuleWork {
  const costUs: Vec = SIZE_BUCKETS.map(() => 0);
  let compileUs = 0;
  let problem: string | null = null;
  const add = (m: Vec, us: (bucket: number) => number) => {
    for (let b = 0; b <= LAST; b++) costUs[b]! += m[b]! * us(b);
  };
  const resolve = (ref: string): unknown => resolveLocal(schema, ref);

  const walk = (node: unknown, pointer: string, m: Vec, why: string, branches: number, depth: number): void => {
    if (problem !== null || typeof node !== 'object' || node === null || Array.isArray(node) || depth > 200) return;
    const o = node as Record<string, unknown>;
    add(m, () => US_PER_NODE);
    compileUs += 20 + (typeof o.pattern === 'string' ? 700 : 0) + (Array.isArray(o.enum) ? 6 * o.enum.length : 0);
    const num = (k: string) => (typeof o[k] === 'number' && Number.isFinite(o[k]) && (o[k] as number) >= 0 ? Math.floor(o[k] as number) : Infinity);

    const values = o.enum;
    if (Array.isArray(values)) {
      const compound = values.some((v) => typeof v === 'object' && v !== null);
      const weight = compound ? ENUM_COMPOUND_WEIGHT : 1;
      const product = values.length * m[LAST]! * weight;
      if (product > MAX_ENUM_COMPARISONS) {
        problem =
          `at ${pointer || '/'}: an enum of ${fmt(values.length)} values${compound ? ' (objects or arrays, each counted ' + ENUM_COMPOUND_WEIGHT + ' times)' : ''} × ` +
          `up to ${fmt(m[LAST]!)} values it checks in one call (${why}) = ${fmt(product)} comparisons a call; at most ${fmt(MAX_ENUM_COMPARISONS)}: ` +
          'give the array a maxItems, or the enum fewer values';
        return;
      }
      add(m, () => values.length * weight * US_PER_COMPARISON);
    }
    if ('const' in o && typeof o.const === 'object' && o.const !== null) add(m, () => ENUM_COMPOUND_WEIGHT * US_PER_COMPARISON);
    // Ajv scans a string for pattern, format and its length: at most the call's characters per keyword.
    for (const k of ['pattern', 'format', 'minLength', 'maxLength']) if (k in o) add(SIZE_BUCKETS.map(() => 1), (b) => SIZE_BUCKETS[b]! * US_PER_CHAR);
    const required = o.required;
    if (Array.isArray(required)) add(m, () => required.length * US_PER_NODE * 0.1);

    // Values under this one: an object's keys, an array's items.
    const keys = SIZE_BUCKETS.map((bytes, b) => Math.min(m[b]! * Math.min(num('maxProperties'), keysIn(bytes)), valuesIn(bytes)));
    const items = SIZE_BUCKETS.map((bytes, b) => Math.min(m[b]! * Math.min(num('maxItems'), valuesIn(bytes)), valuesIn(bytes)));
    const keysWhy = Number.isFinite(num('maxProperties')) ? `keys of objects with maxProperties ${num('maxProperties')} at ${pointer || '/'}` : `keys of an object with no maxProperties at ${pointer || '/'}, up to ${fmt(keysIn(MAX_CALL_BYTES))} in a ${MAX_CALL_BYTES / 1024} KB call`;
    const expands = (n: Vec, schemaThere: unknown) => {
      if (typeof schemaThere === 'object' && schemaThere !== null) add(n, () => US_PER_VALUE);
    };
    const itemsWhy = Number.isFinite(num('maxItems')) ? `items of arrays with maxItems ${num('maxItems')} at ${pointer || '/'}` : `items of an array with no maxItems at ${pointer || '/'}, up to ${fmt(valuesIn(MAX_CALL_BYTES))} in a ${MAX_CALL_BYTES / 1024} KB call`;

    const pattern = o.patternProperties;
    const patterns = typeof pattern === 'object' && pattern !== null && !Array.isArray(pattern) ? Object.keys(pattern) : [];
    compileUs += 700 * patterns.length;
    if (patterns.length > 0) {
      const tests = patterns.length * keys[LAST]!;
      if (tests > MAX_PATTERN_TESTS) {
        problem =
          `at ${pointer || '/'}: ${fmt(patterns.length)} patternProperties × up to ${fmt(keys[LAST]!)} keys (${keysWhy}) = ${fmt(tests)} pattern tests a call; ` +
          `at most ${fmt(MAX_PATTERN_TESTS)}: give the object a maxProperties, or fewer patterns`;
        return;
      }
      // Each key is tested against every pattern (again for additionalProperties).
      add(keys, () => patterns.length * US_PER_PATTERN_TEST * ('additionalProperties' in o ? 2 : 1));
    }
    if ('additionalProperties' in o || 'propertyNames' in o) add(keys, () => US_PER_NODE);
    if ('uniqueItems' in o) add(items, () => US_PER_NODE * 2);

    for (const list of ['anyOf', 'oneOf', 'allOf'] as const) {
      const l = o[list];
      if (!Array.isArray(l)) continue;
      const nested = branches + l.length;
      compileUs += 1_000 * l.length;
      if (nested > MAX_NESTED_BRANCHES) {
        problem =
          `at ${pointer || '/'}/${list}: ${fmt(l.length)} branches${branches > 0 ? ` inside ${fmt(branches)} more of enclosing anyOf/oneOf/allOf` : ''}; at most ${fmt(MAX_NESTED_BRANCHES)} ` +
          'along one path (Ajv nests their code: a few thousand overflow the stack)';
        return;
      }
      l.forEach((s, i) => walk(s, `${pointer}/${list}/${i}`, m, why, nested, depth + 1));
    }
    for (const k of ['not', 'if', 'then', 'else']) walk(o[k], `${pointer}/${k}`, m, why, branches, depth + 1);
    for (const k of ['properties', 'definitions', '$defs']) {
      const map = o[k];
      if (typeof map !== 'object' || map === null || Array.isArray(map)) continue;
      // definitions run only where a $ref reaches them, walked there.
      if (k !== 'properties') continue;
      for (const [name, s] of Object.entries(map)) walk(s, `${pointer}/properties/${escape(name)}`, m, why, branches, depth + 1);
    }
    const deps = o.dependencies;
    if (typeof deps === 'object' && deps !== null && !Array.isArray(deps)) {
      for (const [name, s] of Object.entries(deps)) walk(s, `${pointer}/dependencies/${escape(name)}`, m, why, branches, depth + 1);
    }
    for (const k of ['additionalProperties', 'propertyNames']) expands(keys, o[k]);
    if (patterns.length > 0) expands(keys, pattern);
    for (const k of ['items', 'additionalItems', 'contains']) if (!Array.isArray(o[k])) expands(items, o[k]);
    if (patterns.length > 0) for (const p of patterns) walk((pattern as Record<string, unknown>)[p], `${pointer}/patternProperties/${escape(p)}`, keys, keysWhy, branches, depth + 1);
    walk(o.additionalProperties, `${pointer}/additionalProperties`, keys, keysWhy, branches, depth + 1);
    walk(o.propertyNames, `${pointer}/propertyNames`, keys, keysWhy, branches, depth + 1);
    if (Array.isArray(o.items)) o.items.forEach((s, i) => walk(s, `${pointer}/items/${i}`, m, why, branches, depth + 1));
    else walk(o.items, `${pointer}/items`, items, itemsWhy, branches, depth + 1);
    walk(o.additionalItems, `${pointer}/additionalItems`, items, itemsWhy, branches, depth + 1);
    walk(o.contains, `${pointer}/contains`, items, itemsWhy, branches, depth + 1);
    if (typeof o.$ref === 'string') walk(resolve(o.$ref), refPointer(o.$ref), m, why, branches, depth + 1);
  };

  walk(schema, '', SIZE_BUCKETS.map(() => 1), 'the call itself', 0, 0);
  return { problem, costUs: costUs.map((c) => Math.ceil(c)), compileUs };
}

/** The estimate for a call of `bytes` (the smallest bucket it fits). */
export function costFor(costUs: readonly number[], bytes: number): number {
  for (let b = 0; b < SIZE_BUCKETS.length; b++) if (bytes <= SIZE_BUCKETS[b]!) return costUs[b]!;
  return costUs[SIZE_BUCKETS.length - 1]!;
}

function resolveLocal(schema: Record<string, unknown>, ref: string): unknown {
  if (ref === '#') return schema;
  if (!ref.startsWith('#/')) return findAnchor(schema, ref);
  return atPointer(schema, ref);
}

function findAnchor(node: unknown, anchor: string): unknown {
  if (typeof node !== 'object' || node === null) return undefined;
  const o = node as Record<string, unknown>;
  if (!Array.isArray(node) && (o.$id === anchor || o.id === anchor)) return node;
  for (const v of Object.values(o)) {
    const hit = findAnchor(v, anchor);
    if (hit !== undefined) return hit;
  }
  return undefined;
}

const refPointer = (ref: string) => (ref.startsWith('#') ? ref.slice(1) : ref);
const escape = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');
const fmt = (n: number) => n.toLocaleString('en-US');
