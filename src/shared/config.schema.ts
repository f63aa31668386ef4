import { z } from 'zod';
import { sourceNameSchema, webhookSettingsSchema, writeKeySchema } from './source.schema';
import { collectorFaultsSchema } from './collector-faults';
import { settingsPatchSchema } from './settings.schema';
import { mockReceiversSchema } from './mock-receiver.schema';
import { audienceConfigSchema } from './audience.schema';
import { trackingPlanConnectionSchema, trackingPlanInputSchema } from './tracking-plan.schema';

// The config file (SPEC §8). Strict objects everywhere: an unknown key is refused with its path.
export const configSourceSchema = z.strictObject({
  name: sourceNameSchema,
  writeKey: writeKeySchema.optional(),
  webhooks: webhookSettingsSchema.optional(),
  collectorFaults: collectorFaultsSchema.nullable().optional(),
  /** The tracking plan its calls are checked against, with Protocols' enforcement (null: none). */
  trackingPlan: trackingPlanConnectionSchema.nullable().optional(),
});

export const configSchema = z.strictObject({
  $schema: z.string().optional(),
  sources: z.array(configSourceSchema).default([]).superRefine((sources, ctx) => {
    const names = new Set<string>();
    const keys = new Set<string>();
    sources.forEach((s, i) => {
      if (names.has(s.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate source name "${s.name}"` });
      names.add(s.name);
      if (s.writeKey) {
        if (keys.has(s.writeKey)) ctx.addIssue({ code: 'custom', path: [i, 'writeKey'], message: 'duplicate write key' });
        keys.add(s.writeKey);
      }
    });
  }),
  settings: settingsPatchSchema.default({}),
  mockReceivers: mockReceiversSchema.default([]),
  audiences: z.array(audienceConfigSchema).default([]),
  /** Tracking plans by name (docs/tracking-plans.md): a plan given replaces the stored rules of that name. */
  trackingPlans: z.array(trackingPlanInputSchema).default([]).superRefine((plans, ctx) => {
    const names = new Set<string>();
    plans.forEach((p, i) => {
      if (names.has(p.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate tracking plan name "${p.name}"` });
      names.add(p.name);
    });
  }),
});

export type Config = z.output<typeof configSchema>;
