import { z } from 'zod';
import { isWellFormedText, LONE_SURROGATE } from './well-formed';
import { MAX_CALL_DEPTH, nestsDeeperThan } from './nesting';

// Tracking plans (issue 24, docs/tracking-plans.md): the rule shape of Segment's Public API
// (`GET /tracking-plans/{id}/rules`), and how a source is connected to one with Protocols'
// enforcement settings. Shared: the config file, the control API and the UI use the same schemas.

export const RULE_TYPES = ['TRACK', 'IDENTIFY', 'GROUP', 'PAGE', 'SCREEN', 'COMMON'] as const;
export type RuleType = (typeof RULE_TYPES)[number];

/** Limits that keep a hostile plan from stalling the engine (README, Decisions). */
export const MAX_PLAN_RULES = 2_000;
export const MAX_RULE_SCHEMA_CHARS = 256 * 1024;
export const MAX_PLAN_NAME_CHARS = 100;

const jsonObject = z.record(z.string(), z.unknown());

export const trackingPlanRuleSchema = z
  .looseObject({
    type: z.enum(RULE_TYPES),
    /** TRACK: the event name; PAGE/SCREEN: the page or screen name (no key: every page/screen). */
    key: z.string().min(1).max(500).nullable().optional(),
    version: z.number().int().min(1).max(1_000_000).default(1),
    /** A JSON Schema (draft-07, or draft-04 when its $schema says so) of the whole call. */
    jsonSchema: jsonObject,
  })
  .superRefine((r, ctx) => {
    if (r.type === 'TRACK' && !r.key) ctx.addIssue({ code: 'custom', path: ['key'], message: 'a TRACK rule needs a key (the event name)' });
    if ((r.type === 'IDENTIFY' || r.type === 'GROUP' || r.type === 'COMMON') && r.key) {
      ctx.addIssue({ code: 'custom', path: ['key'], message: `a ${r.type} rule has no key` });
    }
    if (nestsDeeperThan(r.jsonSchema, MAX_CALL_DEPTH)) ctx.addIssue({ code: 'custom', path: ['jsonSchema'], message: `nests deeper than ${MAX_CALL_DEPTH} levels` });
    else if (JSON.stringify(r.jsonSchema).length > MAX_RULE_SCHEMA_CHARS) {
      ctx.addIssue({ code: 'custom', path: ['jsonSchema'], message: `is over ${MAX_RULE_SCHEMA_CHARS / 1024} KB of JSON` });
    } else {
      // A number beyond ±1.8e308 (1e400) is read as Infinity, which the rule compiled with but which is
      // stored as null: the stored rule then no longer compiled, and the lab did not start.
      const at = nonFiniteAt(r.jsonSchema);
      if (at) ctx.addIssue({ code: 'custom', path: ['jsonSchema', ...at], message: 'is not a finite number (JSON has none beyond ±1.8e308: 1e400 reads as Infinity)' });
    }
  });

/** The path of the first number in `value` that is not finite, or null (depth already bounded). */
function nonFiniteAt(value: unknown): (string | number)[] | null {
  if (typeof value === 'number') return Number.isFinite(value) ? null : [];
  if (typeof value !== 'object' || value === null) return null;
  for (const [k, v] of Array.isArray(value) ? value.entries() : Object.entries(value)) {
    const inner = nonFiniteAt(v);
    if (inner) return [k, ...inner];
  }
  return null;
}

export type TrackingPlanRule = z.output<typeof trackingPlanRuleSchema>;

export const planNameSchema = z.string().trim().min(1).max(MAX_PLAN_NAME_CHARS).refine(isWellFormedText, LONE_SURROGATE);

export const trackingPlanRulesSchema = z
  .array(trackingPlanRuleSchema)
  .max(MAX_PLAN_RULES)
  .superRefine((rules, ctx) => {
    // One rule per (type, key, version): the newest version of a key is the one checked.
    const seen = new Set<string>();
    rules.forEach((r, i) => {
      const k = `${r.type}\u0000${r.key ?? ''}\u0000${r.version}`;
      if (seen.has(k)) ctx.addIssue({ code: 'custom', path: [i], message: `duplicate rule ${r.type}${r.key ? ` "${r.key}"` : ''} version ${r.version}` });
      seen.add(k);
    });
  });

export const trackingPlanInputSchema = z.strictObject({ name: planNameSchema, rules: trackingPlanRulesSchema });
export type TrackingPlanInput = z.output<typeof trackingPlanInputSchema>;

/** Protocols' enforcement settings of one source (defaults: flag only). */
export const trackingPlanConnectionSchema = z.strictObject({
  name: planNameSchema,
  unplannedEvents: z.enum(['allow', 'block']).default('allow'),
  unplannedProperties: z.enum(['allow', 'omit']).default('allow'),
  violations: z.enum(['allow', 'block']).default('allow'),
});
export type TrackingPlanConnection = z.output<typeof trackingPlanConnectionSchema>;

/** A stored rule as answered: as saved (trackingPlanRuleSchema checked it then). */
export const storedRuleOutput = z.looseObject({ type: z.enum(RULE_TYPES), key: z.string().nullable().optional(), version: z.number().int(), jsonSchema: jsonObject });

export const trackingPlanOutput = z.object({
  id: z.string(),
  name: z.string(),
  rules: z.array(storedRuleOutput),
  createdAt: z.string(),
  updatedAt: z.string(),
  /** Sources connected to it, with their enforcement settings. */
  sources: z.array(
    z.object({
      sourceId: z.string(),
      sourceName: z.string(),
      unplannedEvents: z.enum(['allow', 'block']),
      unplannedProperties: z.enum(['allow', 'omit']),
      violations: z.enum(['allow', 'block']),
    }),
  ),
  /**
   * Set when the stored plan does not compile (an older lab let such a rule in): which rule and why.
   * Its sources' calls are not checked until it is saved again with rules that compile.
   */
  problem: z.string().optional(),
});
export type TrackingPlan = z.output<typeof trackingPlanOutput>;

/** `check_timeout`: the check did not finish (over its budget of 250 ms of CPU time, or its worker stopped): the call was not checked. */
export const VIOLATION_KINDS = ['unplanned_event', 'unplanned_property', 'required_missing', 'wrong_type', 'schema', 'check_timeout'] as const;
export type ViolationKind = (typeof VIOLATION_KINDS)[number];

/** One way a call differs from its source's plan, as stored with the call when it arrived. */
export const violationOutput = z.object({
  kind: z.enum(VIOLATION_KINDS),
  /** JSON pointer into the call (`/properties/total`); '' for the call itself. */
  path: z.string(),
  /** For people (Segment's ajv-human-errors wording where Ajv found it). */
  message: z.string(),
  /** The offending value (absent when missing). */
  value: z.unknown().optional(),
  /** The rule that found it; null for an unplanned event. */
  rule: z.object({ type: z.enum(RULE_TYPES), key: z.string().nullable(), version: z.number().int() }).nullable(),
});
export type Violation = z.output<typeof violationOutput>;

/** What checking one call against its source's plan came to (stored with the call). */
export const planVerdictOutput = z.object({
  planId: z.string(),
  violations: z.array(violationOutput),
  /** Set when enforcement blocked the call: it is stored, never forwarded. */
  blocked: z.string().nullable(),
  /** Properties left out of what is forwarded (unplannedProperties: omit), as JSON pointers. */
  omitted: z.array(z.string()),
  /** The rules it was checked against, as ruleId() names them (for the plan screen's counts; not stored with the call). */
  rules: z.array(z.string()).optional(),
});
export type PlanVerdict = z.output<typeof planVerdictOutput>;

/** A rule's name in counts: its type, key and version. */
export function ruleId(r: { type: string; key?: string | null; version: number }): string {
  return `${r.type}\u001f${r.key ?? ''}\u001f${r.version}`;
}

/** Per rule of a plan, calls checked against it since a time: matched, passed (no violation of that rule), failed. */
export const ruleStatsOutput = z.object({
  type: z.enum(RULE_TYPES),
  key: z.string().nullable(),
  version: z.number().int(),
  matched: z.number().int(),
  passed: z.number().int(),
  failed: z.number().int(),
});
export type RuleStats = z.output<typeof ruleStatsOutput>;

/**
 * The forwarded form of a call without the properties its plan omitted (`/properties/<key>`,
 * `/traits/<key>` pointers); the stored call keeps what arrived. Shared: the call ledger applies it.
 */
export function withoutOmitted<T extends object>(call: T, omitted: readonly string[]): T {
  if (omitted.length === 0) return call;
  const out: Record<string, unknown> = { ...(call as Record<string, unknown>) };
  // Each part is copied once, then its keys removed (a copy per key was quadratic: 2,500 omitted keys took 12 s).
  const copies = new Map<string, Record<string, unknown>>();
  for (const path of omitted) {
    const [, part, raw] = path.split('/');
    if (part === undefined || raw === undefined) continue;
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    let copy = copies.get(part);
    if (!copy) {
      const obj = out[part];
      if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) continue;
      copy = { ...(obj as Record<string, unknown>) };
      copies.set(part, copy);
      out[part] = copy;
    }
    delete copy[key];
  }
  return out as T;
}
