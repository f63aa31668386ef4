// What a rule's JSON Schema may cost a call, checked before Ajv compiles it (issue 24: a hostile
// schema cannot stall the collector). Ajv evaluates a `$ref` by running the schema it points at, so a
// chain of `anyOf: [{$ref: d(k-1)}, {$ref: d(k-1)}]` twenty deep is a 1.7 KB schema that runs a
// million subschemas on one call (and, with allErrors, keeps their errors until the heap is gone).
// The bound is on the schema as Ajv runs it: every subschema counted once per way it is reached
// through local `$ref`s, at most MAX_EXPANDED_NODES. A `$ref` leading back to itself (recursive data)
// and `$async` (a validator that answers later: the collector judges a call before answering) are
// refused. Remote `$ref`s are refused by Ajv itself (no loader).

/** Subschemas one rule may run on a call, counted through its local $refs. A Segment rule has hundreds. */
export const MAX_EXPANDED_NODES = 20_000;

/** Why a schema is refused, or null. */
export function unboundedSchema(schema: Record<string, unknown>): string | null {
  const anchors = new Map<string, unknown>();
  collectAnchors(schema, anchors);
  const cost = new Map<unknown, number>();
  const visiting = new Set<unknown>();
  let problem: string | null = null;

  const resolve = (ref: string): unknown => {
    if (ref === '#') return schema;
    if (ref.startsWith('#/')) return atPointer(schema, ref);
    return anchors.get(ref);
  };

  const size = (node: unknown, ref: string | null): number => {
    if (problem !== null) return 0;
    if (typeof node !== 'object' || node === null) return 1;
    const known = cost.get(node);
    if (known !== undefined) return known;
    if (visiting.has(node)) {
      problem = `the $ref ${JSON.stringify(ref ?? '#')} leads back to a schema that contains it: recursive schemas are not supported (a rule describes one call)`;
      return 0;
    }
    visiting.add(node);
    let total = 1;
    const o = node as Record<string, unknown>;
    if (!Array.isArray(node) && o.$async === true) problem = 'a schema with "$async": true is not supported (the collector judges a call before it answers)';
    for (const [k, v] of Object.entries(o)) {
      if (k === '$ref' && typeof v === 'string') {
        const target = resolve(v);
        if (target !== undefined) total += size(target, v);
      } else if (k !== 'enum' && k !== 'const' && k !== 'default' && k !== 'examples') {
        total += size(v, ref);
      }
      if (total > MAX_EXPANDED_NODES || problem !== null) break;
    }
    visiting.delete(node);
    cost.set(node, total);
    return total;
  };

  const total = size(schema, null);
  if (problem !== null) return problem;
  if (total > MAX_EXPANDED_NODES) {
    return `the schema runs more than ${MAX_EXPANDED_NODES.toLocaleString('en-US')} subschemas on a call once its $refs are followed (a $ref used twice runs twice): it could stall the collector, so it is refused`;
  }
  return null;
}

/** `$id` / draft-04 `id` anchors ("#name") a `$ref` may name. */
function collectAnchors(node: unknown, out: Map<string, unknown>): void {
  if (typeof node !== 'object' || node === null) return;
  if (!Array.isArray(node)) {
    const o = node as Record<string, unknown>;
    for (const k of ['$id', 'id']) if (typeof o[k] === 'string' && (o[k] as string).startsWith('#')) out.set(o[k] as string, node);
  }
  for (const v of Object.values(node)) collectAnchors(v, out);
}

/** The subschema a local `$ref` of the form `#/a/b~1c` points at (RFC 6901), or undefined. */
export function atPointer(schema: unknown, ref: string): unknown {
  let cur: unknown = schema;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof cur !== 'object' || cur === null || !Object.hasOwn(cur, key)) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}
