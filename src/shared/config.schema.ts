import { z } from 'zod';
import {
  actionsMappingSchema,
  mappingDirectiveSchema,
  headersSchema,
  classicUrlSchema,
  receiverUrlSchema,
  sourceNameSchema,
  webhookSettingsSchemaOf,
  writeKeySchema,
} from './source.schema';
import { collectorFaultsSchema } from './collector-faults';
import { settingsPatchSchema } from './settings.schema';
import { mockReceiversSchema } from './mock-receiver.schema';
import { audienceConfigSchema } from './audience.schema';
import { trackingPlanConnectionSchema, trackingPlanInputSchema } from './tracking-plan.schema';

// The config file (SPEC §8). Strict objects everywhere: an unknown key is refused with its path.

/**
 * Where a receiver URL goes in a source (a Classic URL entry, an Actions mapping), the config file
 * may name one of the lab's own mock receivers instead: `{ "mockReceiver": "flaky" }`. The lab that
 * reads the file puts its own URL for that receiver there, so a config exported from one lab and
 * imported into another sends to the second lab's receiver, not to the first's port (issue 26).
 */
export const mockReceiverRefSchema = z.string().trim().min(1, { message: "the name of one of this lab's mock receivers" }).max(200);

function urlOrReceiver(entry: { url?: unknown; mockReceiver?: string }, ctx: z.RefinementCtx): void {
  if (entry.url === undefined && entry.mockReceiver === undefined) {
    ctx.addIssue({ code: 'custom', path: ['url'], message: "required: an absolute http(s) URL, or mockReceiver: the name of one of this lab's mock receivers" });
  } else if (entry.url !== undefined && entry.mockReceiver !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['mockReceiver'], message: 'give either url or mockReceiver, not both' });
  }
}

export const configWebhookUrlSchema = z
  .strictObject({ url: classicUrlSchema.optional(), mockReceiver: mockReceiverRefSchema.optional(), headers: headersSchema.default({}) })
  .superRefine(urlOrReceiver);

export const configActionsMappingSchema = actionsMappingSchema
  .omit({ url: true })
  .extend({ url: z.union([receiverUrlSchema, mappingDirectiveSchema]).optional(), mockReceiver: mockReceiverRefSchema.optional() })
  .superRefine(urlOrReceiver);

export const configWebhooksSchema = webhookSettingsSchemaOf(configWebhookUrlSchema, configActionsMappingSchema);

export const configSourceSchema = z.strictObject({
  name: sourceNameSchema,
  writeKey: writeKeySchema.optional(),
  webhooks: configWebhooksSchema.optional(),
  collectorFaults: collectorFaultsSchema.nullable().optional(),
  /** The tracking plan its calls are checked against, with Protocols' enforcement (null: none). */
  trackingPlan: trackingPlanConnectionSchema.nullable().optional(),
});

/**
 * The config file's version (issue 27): export writes it; a file without one is version 1 (made
 * before versions, e554b8f and earlier) and reads as it is, since version 2 only added shapes
 * (`mockReceiver` references, tracking plans). A file of a newer version than this lab reads is
 * refused by name rather than half understood. Raise it when a shape changes meaning, and convert
 * older files to the new shape before this schema reads them.
 */
export const CONFIG_VERSION = 2;

/**
 * The most bytes a config may have: a file (`serve --config`, load-config.ts) and an import over the
 * control API alike, so any export imports back; tracking plans over the API take as much.
 */
export const MAX_CONFIG_BYTES = 10 * 1024 * 1024;

export const configSchema = z.strictObject({
  $schema: z.string().optional(),
  version: z
    .number()
    .int()
    .min(1, { message: 'a config version is 1 or more' })
    .max(CONFIG_VERSION, { message: `this file was made by a newer Webhook Lab: this one reads config versions 1 to ${CONFIG_VERSION}; update Webhook Lab, or export again from a lab of this version` })
    .optional(),
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
export type ConfigWebhooks = z.output<typeof configWebhooksSchema>;

/** What a config import or a config file at start adjusted or doubts, applied anyway (answered with the import, logged at start). */
export interface ConfigWarning {
  /** The field, as errors name it: `sources[0].webhooks.urls[1].url`. */
  path: string;
  /** mock_receiver_resolved: a mockReceiver name was given this lab's URL, or a stored source followed a receiver the file gave a new path or TLS (notes, not doubts); loopback_port_not_owned: a URL on this machine, at a port this lab does not listen on; short_standard_webhooks_key: a Standard Webhooks key shorter than 24 bytes, already stored or for a source the file creates, kept (README, Decisions); segment_refuses_url: an Actions mapping's URL Segment's payload validation refuses (no valid URI): kept, and not sent, as Segment does; trigger_reads_otherwise: a trigger Segment's parser takes but reads otherwise than it looks (a dropped `not` or `!`, quotes kept, an operator typo); headers_joined: mapping header names that differ only in case, sent as one header with both values; key_dropped: a `__proto__` key in a mapping's data, which Segment's mapping kit drops. The last three are the lab's own checks: Segment takes these, so the lab does too. */
  code: 'mock_receiver_resolved' | 'loopback_port_not_owned' | 'short_standard_webhooks_key' | 'segment_refuses_url' | 'trigger_reads_otherwise' | 'headers_joined' | 'key_dropped';
  message: string;
}
