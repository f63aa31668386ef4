import { z } from 'zod';
import { collectorFaultsSchema } from './collector-faults';
import { actionsMethodAnswer } from './call-summary.output';
import { webhookUrlAnswer } from './call-detail.output';

// A source as this lab stores and answers it (GET /api/sources and every operation that answers a
// source): the one declaration (issue 43). `Source`, `WebhookSettings`, `ActionsMapping` and their
// parts are its types; types.ts re-exports them. What a source's settings may hold as input, with
// its limits and messages, is source.schema.ts's; this is what such input became.

/** A bare string means equals. */
export const triggerConditionAnswer = z.union([z.string(), z.object({ equals: z.string() }), z.object({ contains: z.string() }), z.object({ oneOf: z.array(z.string()) })]);

/** Conditions on the call; every one given must hold, none given matches every call. */
export const actionsTriggerAnswer = z.object({ type: triggerConditionAnswer.optional(), event: triggerConditionAnswer.optional() });

/** A mapping field's value: literal text, or one of the mapping kit's directives (`{"@path": "$.userId"}`). */
export const mappingValueAnswer = z.union([z.string(), z.record(z.string(), z.json())]);

/** One Webhooks (Actions) mapping: which calls it takes and the request it makes of each. */
export const actionsMappingAnswer = z.object({
  name: z.string(),
  /** FQL as Segment's trigger editor writes it (`type = "track" and properties.plan = "pro"`), or the older object form. */
  trigger: z.union([actionsTriggerAnswer, z.string()]),
  /** A URL, or a mapping directive resolved per call (`{"@template": "https://r.example/u/{{userId}}"}`), as Segment's field takes either. */
  url: mappingValueAnswer,
  method: actionsMethodAnswer,
  /** Each value text or a directive, resolved per call. */
  headers: z.record(z.string(), mappingValueAnswer),
  /** omitted = the whole event ({"@path": "$."}) */
  data: z.json().optional(),
  /** omitted = no batching; 1..4000 */
  batchSize: z.number().int().min(1).optional(),
});

/** Which requests a source's Webhooks destination sends: Classic's, Webhooks (Actions)', or both. */
export const destinationModeAnswer = z.enum(['classic', 'actions', 'both']);

/**
 * The new fields are optional so that settings stored or written before Actions existed stay valid;
 * read them through webhookMode() and webhookMappings() (src/shared/actions/mode.ts), never directly.
 */
export const webhookSettingsAnswer = z.object({
  enabled: z.boolean(),
  urls: z.array(webhookUrlAnswer),
  sharedSecret: z.string().optional(),
  /** Omitted = 'classic'. */
  mode: destinationModeAnswer.optional(),
  /** Omitted = none. At most 5. */
  mappings: z.array(actionsMappingAnswer).optional(),
  /** `whsec_` + base64 key: adds the Standard Webhooks headers to Classic and Actions requests. */
  standardWebhooksSecret: z.string().optional(),
});

/** One version of a source's secret (the secret itself is in its webhooks). */
export const secretVersionAnswer = z.object({
  /** 1, 2, …: each change of the secret is a new version. */
  version: z.number().int().min(1),
  createdAt: z.string(),
  /** Made by a rotation: until createdAt + the secretRotationWindowMs setting, Standard Webhooks requests carry the previous version's signature too. */
  rotated: z.boolean(),
});

export const sourceAnswer = z.object({
  id: z.string(),
  name: z.string(),
  writeKey: z.string(),
  createdAt: z.string(),
  webhooks: webhookSettingsAnswer,
  /** Fault injection on the way in (shared/collector-faults.ts); null when none. In memory only. */
  collectorFaults: collectorFaultsSchema.nullable(),
  /** The current version of each secret (kept once, versioned: README, Decisions); absent or null = none. Read-only. */
  secretVersions: z.object({ sharedSecret: secretVersionAnswer.nullable().optional(), standardWebhooksSecret: secretVersionAnswer.nullable().optional() }).optional(),
});

export type TriggerCondition = z.output<typeof triggerConditionAnswer>;
export type ActionsTrigger = z.output<typeof actionsTriggerAnswer>;
export type MappingValue = z.output<typeof mappingValueAnswer>;
export type ActionsMapping = z.output<typeof actionsMappingAnswer>;
export type DestinationMode = z.output<typeof destinationModeAnswer>;
export type WebhookSettings = z.output<typeof webhookSettingsAnswer>;
export type SecretVersion = z.output<typeof secretVersionAnswer>;
export type Source = z.output<typeof sourceAnswer>;
