import { RULE_TYPES, type RuleType } from './tracking-plan.schema';

// Reading a tracking plan file in any of the shapes Segment's tools write (docs/tracking-plans.md):
//  - the Public API's rules (`GET /tracking-plans/{id}/rules`: `{ rules: [...] }` or a bare array),
//    each rule's jsonSchema describing the whole call — kept as they are;
//  - Typewriter v8's plan.json (segmentio/typewriter src/api/trackingplans.ts, sanitizeTrackingPlan):
//    TRACK rules only, newest version per key, each jsonSchema unwrapped to the `properties` object and
//    marked with `eventMetadata` — wrapped back under `properties.properties` here;
//  - Typewriter v7's plan.json (`rules.events[]`, each `{ name, version, rules }` with the whole-call
//    schema), which Typewriter v8 itself converts the same way (convertToV2Plan).
// What comes out is the lab's rule shape, to be checked by trackingPlanRulesSchema like any other.

export type ImportedShape = 'segment-public-api' | 'typewriter-v8' | 'typewriter-v7';

export interface ImportedPlan {
  /** The plan's name in the file (display_name for v7), if it has one. */
  name: string | null;
  shape: ImportedShape;
  rules: Record<string, unknown>[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads a parsed plan file; throws an Error naming what is wrong with its shape. */
export function importTrackingPlan(file: unknown): ImportedPlan {
  if (Array.isArray(file)) return { name: null, shape: 'segment-public-api', rules: file.map((r, i) => publicApiRule(r, i)) };
  if (!isObject(file)) throw new Error('a tracking plan file is a JSON object (or an array of rules)');
  // The Public API answers `{ data: { rules: [...] } }`; a saved answer may keep that envelope.
  const body = isObject(file.data) ? file.data : file;
  const name = typeof body.name === 'string' && body.name.trim() ? body.name.trim() : null;
  const rules = body.rules;
  if (isObject(rules) && Array.isArray(rules.events)) {
    const display = typeof body.display_name === 'string' && body.display_name.trim() ? body.display_name.trim() : name;
    return { name: display, shape: 'typewriter-v7', rules: rules.events.map((e, i) => v7Rule(e, i)) };
  }
  if (isObject(body.trackingPlan) && Array.isArray(body.rules) === false) return importTrackingPlan(body.trackingPlan);
  if (!Array.isArray(rules)) throw new Error('no rules: expected "rules" as an array (Segment Public API, Typewriter v8) or "rules.events" (Typewriter v7)');
  const typewriter = rules.some((r) => isObject(r) && isObject(r.jsonSchema) && r.jsonSchema.eventMetadata !== undefined);
  return {
    name,
    shape: typewriter ? 'typewriter-v8' : 'segment-public-api',
    rules: rules.map((r, i) => (typewriter && isObject(r) && isObject(r.jsonSchema) && r.jsonSchema.eventMetadata !== undefined ? v8Rule(r, i) : publicApiRule(r, i))),
  };
}

function publicApiRule(r: unknown, i: number): Record<string, unknown> {
  if (!isObject(r)) throw new Error(`rules[${i}]: a rule is an object`);
  const type = typeof r.type === 'string' ? r.type.toUpperCase() : r.type;
  const out: Record<string, unknown> = { type, jsonSchema: r.jsonSchema, version: r.version ?? 1 };
  if (r.key !== undefined && r.key !== null && r.key !== '') out.key = r.key;
  return out;
}

/** Typewriter v8: the jsonSchema is the `properties` object's schema; wrap it back as the whole call's. */
function v8Rule(r: Record<string, unknown>, i: number): Record<string, unknown> {
  const inner = { ...(r.jsonSchema as Record<string, unknown>) };
  const meta = inner.eventMetadata as Record<string, unknown> | undefined;
  delete inner.eventMetadata;
  const $schema = inner.$schema;
  delete inner.$schema;
  // Typewriter adds $id/id from the key (fixJSONSchemaIds); ids mean nothing to the lab's checks.
  delete inner.$id;
  delete inner.id;
  const key = typeof meta?.name === 'string' ? meta.name : r.key;
  if (typeof key !== 'string' || key === '') throw new Error(`rules[${i}]: a Typewriter rule without an event name`);
  const type = typeof meta?.type === 'string' && (RULE_TYPES as readonly string[]).includes(meta.type) ? (meta.type as RuleType) : 'TRACK';
  const jsonSchema: Record<string, unknown> = { type: 'object', properties: { properties: inner } };
  // Required properties are required of the call too (Segment's own rules say so at the root);
  // otherwise a call with no `properties` at all would pass them.
  if (Array.isArray(inner.required) && inner.required.length > 0) jsonSchema.required = ['properties'];
  if ($schema !== undefined) jsonSchema.$schema = $schema;
  return { type, key, version: r.version ?? 1, jsonSchema };
}

function v7Rule(e: unknown, i: number): Record<string, unknown> {
  if (!isObject(e)) throw new Error(`rules.events[${i}]: an event is an object`);
  if (typeof e.name !== 'string' || e.name === '') throw new Error(`rules.events[${i}].name: the event name is missing`);
  return { type: 'TRACK', key: e.name, version: e.version ?? 1, jsonSchema: e.rules };
}
