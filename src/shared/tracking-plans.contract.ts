import { z } from 'zod';
import { op } from './api-op';
import { isoTimeSchema } from './iso-time';
import { MAX_CONFIG_BYTES } from './config.schema';
import { NON_FINITE_REASON, nonFinitePath } from './nesting';
import {
  planNameSchema,
  trackingPlanConnectionSchema,
  trackingPlanInputSchema,
  trackingPlanRulesSchema,
  planVerdictOutput,
  ruleStatsOutput,
  trackingPlanOutput,
  type PlanVerdict,
  type RuleStats,
  type TrackingPlan,
  storedRuleOutput,
  VIOLATION_KINDS,
} from './tracking-plan.schema';
import { same } from './same-shape';
import { okOutput } from './api-outputs';
import type { ImportedShape } from './tracking-plan-import';

// Tracking plans (issue 24, docs/tracking-plans.md). Spread into `api` by api.contract.ts.

const id = z.string().min(1);

/**
 * A call to check, as a client would send it. A number JSON cannot hold (`1e999`, read as Infinity)
 * is refused naming its field, as the collector drops such a call: a plan's `number` would pass it.
 */
const callToCheck = z.record(z.string(), z.unknown()).superRefine((call, ctx) => {
  const path = nonFinitePath(call);
  if (path.length > 0) ctx.addIssue({ code: 'custom', path, message: `${NON_FINITE_REASON}; the collector drops such a call` });
});

/** GET /api/violations lists at most this many items, the most frequent first. */
export const MAX_VIOLATION_ITEMS = 500;

export const violationSummaryOutput = z.object({
  /** Counted from this time (ISO): the `since` asked, or the last hour. */
  since: z.string(),
  /** Calls checked against a plan since then, those with at least one violation, those blocked. */
  checked: z.number().int(),
  withViolations: z.number().int(),
  blocked: z.number().int(),
  /**
   * Per source, call type, event and kind: how many calls had it (`count`), how many violations of it
   * those calls had (`violations`: one call can have several, one per property), when last, the
   * newest example call. Dropped calls (duplicate messageIds) are not checked and count nowhere.
   */
  items: z.array(
    z.object({
      sourceId: z.string(),
      sourceName: z.string().nullable(),
      type: z.string(),
      event: z.string().nullable(),
      kind: z.enum(VIOLATION_KINDS),
      count: z.number().int(),
      violations: z.number().int(),
      lastSeen: z.string(),
      exampleCallId: z.number().int(),
    }),
  ),
  /** How many items there are in all: `items` holds the MAX_VIOLATION_ITEMS most frequent (20,000 distinct events made 5 MB). */
  itemsTotal: z.number().int(),
  /**
   * Sources (of those asked about) connected to a stored plan that does not compile (an older lab let
   * its rule in): their calls are not checked, so no count above can speak for them.
   */
  unchecked: z.array(z.object({ sourceId: z.string(), sourceName: z.string().nullable(), plan: z.string(), problem: z.string() })),
});
export type ViolationSummary = z.output<typeof violationSummaryOutput>;

export const importedTrackingPlanOutput = z.object({
  plan: trackingPlanOutput,
  /** Which file shape was read (Segment Public API rules, Typewriter v8 or v7 plan.json). */
  shape: z.enum(['segment-public-api', 'typewriter-v8', 'typewriter-v7']),
  /** Whether an existing plan of that name was replaced. */
  replaced: z.boolean(),
});
export type ImportedTrackingPlan = z.output<typeof importedTrackingPlanOutput>;
same<ImportedTrackingPlan['shape'], ImportedShape>(true);


/** What a plan's enforcement kept out since a time: the calls it blocked, and the events it does not plan, the commonest first. */
export const offPlanStatsOutput = z.object({
  blocked: z.number().int(),
  /** At most UNPLANNED_EVENTS_SHOWN, the commonest first; `more`: how many other unplanned events there were. */
  unplannedEvents: z.array(z.object({ event: z.string(), calls: z.number().int() })),
  more: z.number().int(),
});
export type OffPlanStats = z.output<typeof offPlanStatsOutput>;

export const trackingPlanStatsOutput = z.object({
  plans: z.array(trackingPlanOutput),
  /** Per plan id, each rule's figures, the worst first. */
  stats: z.record(z.string(), z.array(ruleStatsOutput)),
  /** Per plan id, what its enforcement kept out in the same time: blocked calls and unplanned events. */
  offPlan: z.record(z.string(), offPlanStatsOutput),
});
export type TrackingPlanStats = z.output<typeof trackingPlanStatsOutput>;

export const UNPLANNED_EVENTS_SHOWN = 10;

export const draftTrackingPlanOutput = z.object({
  name: z.string(),
  /** One rule per event (and identify/group/page/screen seen), properties typed as observed. */
  rules: z.array(storedRuleOutput),
  /** Calls read to make it. */
  calls: z.number().int(),
});
export type DraftTrackingPlan = z.output<typeof draftTrackingPlanOutput>;

/** A plan may hold 2,000 rules of up to 256 KB each: past the control API's 2 MB, as a config can be. */
const LARGE = { bodyLimit: MAX_CONFIG_BYTES };

export const trackingPlanOps = {
  listTrackingPlans: op<TrackingPlan[]>()('GET', '/tracking-plans', z.strictObject({}), { output: z.array(trackingPlanOutput) }),
  getTrackingPlan: op<TrackingPlan>()('GET', '/tracking-plans/:id', z.strictObject({ id }), { output: trackingPlanOutput }),
  /** A new plan `{name, rules}`; every rule's JSON Schema must compile (400 naming the rule otherwise). */
  createTrackingPlan: op<TrackingPlan>()('POST', '/tracking-plans', trackingPlanInputSchema, { ...LARGE, output: trackingPlanOutput }),
  /** Replaces a plan's name and rules whole; connected sources are checked against it from the next call. */
  replaceTrackingPlan: op<TrackingPlan>()('PUT', '/tracking-plans/:id', trackingPlanInputSchema.extend({ id }), { ...LARGE, output: trackingPlanOutput }),
  /**
   * Every plan with its rules' figures (as getTrackingPlanStats), read at one moment: the plans screen's
   * one request, so a plan deleted by another client between two reads cannot answer 404.
   */
  listTrackingPlanStats: op<TrackingPlanStats>()('GET', '/tracking-plans/stats', z.strictObject({ since: isoTimeSchema.optional() }), { output: trackingPlanStatsOutput }),
  /** Per rule, calls checked, passed and failed since a time (default: the last hour), the worst first. */
  getTrackingPlanStats: op<RuleStats[]>()('GET', '/tracking-plans/:id/stats', z.strictObject({ id, since: isoTimeSchema.optional() }), { output: z.array(ruleStatsOutput) }),
  deleteTrackingPlan: op<{ ok: true }>()('DELETE', '/tracking-plans/:id', z.strictObject({ id }), { output: okOutput }),
  /**
   * A plan file as Segment's tools write it (Public API rules, Typewriter v8 or v7 plan.json), parsed
   * JSON in `file`; `name` overrides the file's. `replace: true` replaces a plan of that name.
   */
  importTrackingPlan: op<ImportedTrackingPlan>()(
    'POST',
    '/tracking-plans/import',
    z.strictObject({ file: z.unknown(), name: planNameSchema.optional(), replace: z.boolean().optional() }),
    { ...LARGE, output: importedTrackingPlanOutput },
  ),
  /** Connects a source to a plan with Protocols' enforcement settings, or disconnects it (null). */
  connectTrackingPlan: op<TrackingPlan | null>()('PUT', '/sources/:id/tracking-plan', z.strictObject({ id, trackingPlan: trackingPlanConnectionSchema.nullable() }), {
    output: trackingPlanOutput.nullable(),
  }),
  /**
   * Checks a call (as a client would send it) against a source's plan, or against given rules, without
   * storing anything: Compose's as-you-type check and the rule editor's validation (Ajv runs in the
   * engine; the renderer's CSP forbids its generated code). Null for a source without a plan.
   */
  checkTrackingPlanCall: op<PlanVerdict | null>()(
    'POST',
    '/tracking-plans/check',
    z.strictObject({ call: callToCheck, sourceId: id.optional(), planId: id.optional(), rules: trackingPlanRulesSchema.optional() }),
    { output: planVerdictOutput.nullable() },
  ),
  /**
   * Checks stored calls again against their source's current plan, without changing what they were
   * found to have when they arrived (answered only). A call whose source has no plan now: null.
   */
  recheckTrackingPlanCalls: op<{ callId: number; verdict: PlanVerdict | null }[]>()(
    'POST',
    '/tracking-plans/recheck',
    z.strictObject({ callIds: z.array(z.number().int().min(1)).min(1).max(1_000) }),
    { output: z.array(z.object({ callId: z.number().int(), verdict: planVerdictOutput.nullable() })) },
  ),
  /** A draft plan from observed calls: these calls, or a source's newest (at most 5,000). Nothing is saved. */
  draftTrackingPlan: op<DraftTrackingPlan>()(
    'POST',
    '/tracking-plans/draft',
    z.strictObject({ sourceId: id.optional(), callIds: z.array(z.number().int().min(1)).max(5_000).optional(), name: planNameSchema.optional() }),
    { output: draftTrackingPlanOutput },
  ),
  /** Violations per source, event and kind since a time (default: the last hour): count, last seen, an example call. */
  getViolations: op<ViolationSummary>()('GET', '/violations', z.strictObject({ since: isoTimeSchema.optional(), sourceId: id.optional() }), { output: violationSummaryOutput }),
} as const;
