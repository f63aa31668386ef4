import { z } from 'zod';
import { isWellFormedText, LONE_SURROGATE } from './well-formed';

// Audiences and computed traits (SPEC §6): rules over profiles built from received calls.
const traitCondition = z.strictObject({
  kind: z.literal('trait'),
  trait: z.string().min(1),
  op: z.enum(['eq', 'neq', 'exists', 'not_exists', 'gt', 'gte', 'lt', 'lte', 'contains']),
  value: z.union([z.string(), z.number(), z.boolean(), z.null()]).optional(),
});
const eventCondition = z.strictObject({
  kind: z.literal('event'),
  event: z.string().min(1),
  /** Count of this event performed by the user, compared with `count`. */
  op: z.enum(['gte', 'lte', 'eq']),
  count: z.number().int().min(0),
  /** Only events within this many days before now; all time when absent. */
  withinDays: z.number().positive().max(3650).optional(),
});
export type TraitCondition = z.infer<typeof traitCondition>;
export type EventCondition = z.infer<typeof eventCondition>;
export type AudienceRule = { combine: 'and' | 'or'; conditions: (TraitCondition | EventCondition | AudienceRule)[] };

export const audienceRuleSchema: z.ZodType<AudienceRule> = z.lazy(() =>
  z.strictObject({
    combine: z.enum(['and', 'or']),
    conditions: z.array(z.union([traitCondition, eventCondition, audienceRuleSchema])).min(1, { message: 'at least one condition' }).max(50),
  }),
);

export const computedTraitSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('event_count'), event: z.string().min(1), withinDays: z.number().positive().max(3650).optional() }),
  z.strictObject({ kind: z.literal('last_property'), event: z.string().min(1), property: z.string().min(1) }),
]);
export type ComputedTraitDef = z.infer<typeof computedTraitSchema>;

export const audienceInputSchema = z
  .strictObject({
    name: z.string().trim().min(1, { message: 'required' }).max(200).refine(isWellFormedText, LONE_SURROGATE),
    type: z.enum(['audience', 'computed_trait']).default('audience'),
    rule: audienceRuleSchema.optional(),
    compute: computedTraitSchema.optional(),
    /** Sources whose Webhooks destination receives the identify calls. */
    sourceIds: z.array(z.string().min(1)).min(1, { message: 'choose at least one source' }).max(50),
    /** Re-sync on this interval (ms); only on demand when absent. */
    syncIntervalMs: z.number().int().min(1000).max(7 * 24 * 3600_000).optional(),
  })
  .superRefine((a, ctx) => {
    if (a.type === 'audience' && !a.rule) ctx.addIssue({ code: 'custom', path: ['rule'], message: 'an audience needs a rule' });
    if (a.type === 'computed_trait' && !a.compute) ctx.addIssue({ code: 'custom', path: ['compute'], message: 'a computed trait needs a computation' });
  });
export type AudienceInput = z.input<typeof audienceInputSchema>;

/**
 * An edit of a stored audience: fields given replace the stored ones (`syncIntervalMs: null` = on
 * demand only). The trait key stays the one first sent, whatever the name becomes, so receivers keep
 * one trait per audience. The edit re-syncs at once: only users whose membership or value changed
 * get an identify call (SPEC §6).
 */
export const audienceUpdateSchema = z.strictObject({
  id: z.string().min(1),
  name: z.string().trim().min(1, { message: 'required' }).max(200).refine(isWellFormedText, LONE_SURROGATE).optional(),
  type: z.enum(['audience', 'computed_trait']).optional(),
  rule: audienceRuleSchema.optional(),
  compute: computedTraitSchema.optional(),
  sourceIds: z.array(z.string().min(1)).min(1, { message: 'choose at least one source' }).max(50).optional(),
  syncIntervalMs: z.number().int().min(1000).max(7 * 24 * 3600_000).nullable().optional(),
});
export type AudienceUpdate = z.input<typeof audienceUpdateSchema>;


/** The config file's form: sources by name (ids differ between machines). */
export const audienceConfigSchema = z.strictObject({
  name: z.string().trim().min(1, { message: 'required' }).max(200).refine(isWellFormedText, LONE_SURROGATE),
  type: z.enum(['audience', 'computed_trait']).default('audience'),
  rule: audienceRuleSchema.optional(),
  compute: computedTraitSchema.optional(),
  sources: z.array(z.string().min(1)).min(1, { message: 'name at least one source' }),
  syncIntervalMs: z.number().int().min(1000).max(7 * 24 * 3600_000).optional(),
});
