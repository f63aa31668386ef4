import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import AjvDraft04 from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import { linearRegExp } from './linear-pattern';
import { unboundedSchema } from './schema-bounds';
import { ruleWork } from './work-bounds';
import { uniqueItemsKeyword } from './unique-items';
import { ruleId, type TrackingPlanRule } from '../../../shared/tracking-plan.schema';

// Each rule's JSON Schema compiled once into an Ajv validator (issue 24). Two Ajv instances: draft-07
// (Segment's rules today) and draft-04 (older plans, through ajv-draft-04), picked by the schema's
// $schema. Ajv generates code (new Function): it runs here, in the engine, never in the renderer,
// whose CSP forbids it — Compose asks the engine (checkTrackingPlanCall).

const OPTIONS = {
  // ajv-human-errors needs every error and the data that failed (its README).
  allErrors: true,
  verbose: true,
  // Segment's rules carry keywords that are not JSON Schema (labels, eventMetadata, id): ignored.
  strict: false,
  // A schema's $id is not registered in the shared instance: rules of different plans (or versions)
  // often reuse ids, and a second compile would fail with "already exists".
  addUsedSchema: false,
  // Formats (date-time, email, …) as Segment documents them; unknown formats are ignored, not refused.
  validateFormats: true,
  // Ajv would warn on the console for every unknown format; the engine's log is not the place.
  logger: false,
  // Ajv's code optimization passes cost more than half of a compile (1,000 rules: ~280 ms without
  // them, ~410-780 ms with, on 2 cores); plans are compiled at every change and at start, while the
  // validators' own speed barely changes (README, Decisions).
  // Patterns run in linear time on RE2 (linear-pattern.ts), never on JavaScript's backtracking RegExp.
  code: { optimize: false, regExp: linearRegExp },
} as const;

let draft07: Ajv | undefined;
let draft04: Ajv | undefined;

function ajvFor(schema: Record<string, unknown>): Ajv {
  const version = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (/draft-04/.test(version)) {
    if (!draft04) {
      draft04 = new AjvDraft04(OPTIONS);
      addFormats(draft04);
      linearUniqueItems(draft04);
    }
    return draft04;
  }
  if (!draft07) {
    draft07 = new Ajv(OPTIONS);
    addFormats(draft07);
    linearUniqueItems(draft07);
  }
  return draft07;
}

/** Ajv's uniqueItems compares items pairwise (3,000 objects: 0.75 s a call); this one hashes them. */
function linearUniqueItems(ajv: Ajv): void {
  ajv.removeKeyword('uniqueItems');
  ajv.addKeyword(uniqueItemsKeyword);
}

export interface CompiledRule {
  rule: TrackingPlanRule;
  /** ruleId(rule): how counts name it. */
  id: string;
  validate: ValidateFunction;
  /** Keys the rule plans for the call's properties (track, page, screen) or traits (identify, group); null = any. */
  planned: Set<string> | null;
  /** Which object of the call `planned` is about. */
  plannedIn: 'properties' | 'traits' | null;
  /** What the rule lists for each part: keys (null: none listed) and patternProperties (a key matching one is planned). */
  lists: Record<'properties' | 'traits', { keys: Set<string> | null; patterns: { test(key: string): boolean }[] }>;
  /** The estimated worst check of a call of each size (work-bounds.ts SIZE_BUCKETS), in µs. */
  costUs: number[];
  /** Compiled only in the check workers (check.ts pooledRule): its calls are checked there. */
  pooled?: true;
  /** Its compile, estimated from its schema (work-bounds.ts), in µs. */
  compileUs?: number;
}

/** Compiles one rule; throws with Ajv's message when its schema does not compile. */
export function compileRule(rule: TrackingPlanRule): CompiledRule {
  const schema = rule.jsonSchema;
  const ajv = ajvFor(schema);
  // draft-04 spells the schema id `id`; in draft-07 Ajv refuses `id` outright, and Segment's rules
  // (and Typewriter's plan.json) carry it on every property: dropped there, as Typewriter does.
  const usable = ajv === draft04 ? schema : (withoutIdKeywords(schema) as Record<string, unknown>);
  const unbounded = unboundedSchema(usable);
  if (unbounded) throw new Error(unbounded);
  const work = ruleWork(usable);
  if (work.problem) throw new Error(work.problem);
  const validate = ajv.compile(usable);
  const plannedIn = rule.type === 'IDENTIFY' || rule.type === 'GROUP' ? 'traits' : rule.type === 'COMMON' ? null : 'properties';
  const lists = { properties: listed(schema, 'properties'), traits: listed(schema, 'traits') };
  const planned = plannedIn ? lists[plannedIn].keys : null;
  return { rule, id: ruleId(rule), validate, planned, plannedIn, lists, costUs: work.costUs, compileUs: work.compileUs };
}

function listed(schema: Record<string, unknown>, part: 'properties' | 'traits'): CompiledRule['lists']['properties'] {
  const patterns = child(child(child(schema, 'properties'), part), 'patternProperties');
  return { keys: plannedKeys(schema, part), patterns: patterns ? Object.keys(patterns).map((p) => linearRegExp(p)) : [] };
}

/** The keys a rule lists under properties.<part>.properties; null when it lists none (any key is planned). */
function plannedKeys(schema: Record<string, unknown>, part: 'properties' | 'traits'): Set<string> | null {
  const inner = child(child(child(schema, 'properties'), part), 'properties');
  return inner ? new Set(Object.keys(inner)) : null;
}

function child(o: Record<string, unknown> | null, key: string): Record<string, unknown> | null {
  const v = o?.[key];
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

const SCHEMA_MAPS = ['properties', 'patternProperties', 'definitions', '$defs', 'dependencies'];
const SCHEMA_ONE = ['additionalProperties', 'additionalItems', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'items'];
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'items'];

/** A copy of a schema without its string `id` keywords (only where a schema stands, never a property named id). */
export function withoutIdKeywords(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return schema;
  const out: Record<string, unknown> = { ...(schema as Record<string, unknown>) };
  if (typeof out.id === 'string') delete out.id;
  for (const k of SCHEMA_MAPS) {
    const m = out[k];
    if (typeof m === 'object' && m !== null && !Array.isArray(m)) {
      out[k] = Object.fromEntries(Object.entries(m as Record<string, unknown>).map(([name, s]) => [name, withoutIdKeywords(s)]));
    }
  }
  for (const k of SCHEMA_ONE) if (typeof out[k] === 'object' && out[k] !== null && !Array.isArray(out[k])) out[k] = withoutIdKeywords(out[k]);
  for (const k of SCHEMA_LISTS) if (Array.isArray(out[k])) out[k] = (out[k] as unknown[]).map(withoutIdKeywords);
  return out;
}

export type { ErrorObject };
