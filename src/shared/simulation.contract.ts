import { z } from 'zod';
import { flagParam } from './query-flag';
import { intParam } from './query-int';
import { op } from './api-op';
import { URL_STATE_FILTERS } from './delivery-filters';
import { mockBehaviorSchema, mockReceiverSchema, mockReceiverViewOutput, mockRequestRecordOutput, type MockReceiver, type MockRequestRecord } from './mock-receiver.schema';
import { configSchema, MAX_CONFIG_BYTES, type Config, type ConfigWarning } from './config.schema';
import { audienceInputSchema, audienceRuleSchema, audienceUpdateSchema, computedTraitSchema } from './audience.schema';
export * from './audience.schema';
import type { Source } from './types';
import { deliveryStateOutput, fullSourceOutput, okOutput } from './api-outputs';
import { same } from './same-shape';

import type { ReceiverUse } from './receiver-uses';

// The simulation features of SPEC §6–§7 (issue 5): mock receivers, deletion requests, audiences and
// computed traits, the load generator, export/import. Spread into `api` by api.contract.ts.

const id = z.string().min(1);

// ---------- mock receivers ----------
export type MockReceiverView = z.output<typeof mockReceiverViewOutput>;
same<MockReceiverView, MockReceiver & { url: string; requestCount: number; lastRequestAt: string | null }>(true);

// ---------- deletion requests ----------
export const deletionNotificationOutput = z.object({
  sourceId: z.string(),
  sourceName: z.string(),
  /** The stored `delete` call (shown in the inspector like any call). */
  callId: z.number().int(),
  deliveryState: deliveryStateOutput.nullable(),
});
export type DeletionNotification = z.output<typeof deletionNotificationOutput>;

export const deletionRequestOutput = z.object({
  id: z.string(),
  userId: z.string(),
  createdAt: z.string(),
  purge: z.boolean(),
  /** Calls of this user removed from local history (purge only). */
  purgedCalls: z.number().int(),
  /** done when every notification is delivered, failed/expired when one ended so, else pending. */
  status: z.enum(['pending', 'done', 'failed', 'no_sources']),
  notifications: z.array(deletionNotificationOutput),
  /**
   * Sources that received this user's calls but got no notice, and why: one that sends only Webhooks
   * (Actions) (Segment's Actions webhook destination has no delete action), or a Classic one with no URL.
   */
  skipped: z.array(z.object({ sourceId: z.string(), sourceName: z.string(), reason: z.string() })),
});
export type DeletionRequest = z.output<typeof deletionRequestOutput>;

// ---------- audiences and computed traits (schemas in audience.schema.ts) ----------
export const audienceOutput = z.object({
  id: z.string(),
  name: z.string(),
  /** snake_cased name: the trait key sent in the identify calls. */
  key: z.string(),
  type: z.enum(['audience', 'computed_trait']),
  rule: audienceRuleSchema.optional(),
  compute: computedTraitSchema.optional(),
  sourceIds: z.array(z.string()),
  syncIntervalMs: z.number().nullable(),
  createdAt: z.string(),
  lastSyncAt: z.string().nullable(),
  /** Members (audience) or users with a value (computed trait) at the last sync. */
  memberCount: z.number().int(),
});
export type Audience = z.output<typeof audienceOutput>;

export const audienceMemberOutput = z.object({
  userId: z.string(),
  /** true for audience members; the computed value for computed traits (a last property's value may be any JSON). */
  value: z.json(),
});
export type AudienceMember = z.output<typeof audienceMemberOutput>;
const audienceMembersOutput = z.object({ members: z.array(audienceMemberOutput), total: z.number().int() });

export const syncResultOutput = z.object({
  audienceId: z.string(),
  /** identify calls stored (one per changed user per source). */
  sent: z.number().int(),
  entered: z.number().int(),
  exited: z.number().int(),
  changed: z.number().int(),
  callIds: z.array(z.number().int()),
});
export type SyncResult = z.output<typeof syncResultOutput>;
const syncedAudienceOutput = audienceOutput.extend({ sync: syncResultOutput });

// ---------- load generator ----------
export const loadInputSchema = z
  .strictObject({
    /** Calls per second offered. */
    rate: z.number().positive().max(20_000),
    durationS: z.number().positive().max(3600).optional(),
    total: z.number().int().positive().max(5_000_000).optional(),
    /** A call template: `type` plus message fields; `{{userId}}` and `{{i}}` are replaced per call. */
    template: z.looseObject({ type: z.enum(['identify', 'track', 'page', 'screen', 'group', 'alias']) }),
    /** Random user ids drawn from this many users. */
    users: z.number().int().min(1).max(10_000_000).default(100),
    /** Source to send as (its write key); the client's source when absent. */
    sourceId: z.string().optional(),
  })
  .superRefine((l, ctx) => {
    if (l.durationS === undefined && l.total === undefined) ctx.addIssue({ code: 'custom', path: ['durationS'], message: 'give durationS or total' });
  });
export type LoadInput = z.input<typeof loadInputSchema>;

export const loadSampleOutput = z.object({
  /** Seconds since start. */
  t: z.number(),
  sent: z.number().int(),
  accepted: z.number().int(),
  delivered: z.number().int(),
  failed: z.number().int(),
  retrying: z.number().int(),
  /** Delivery latency (collector 200 → receiver answer) over the last second. */
  p50Ms: z.number().nullable(),
  p99Ms: z.number().nullable(),
});
export type LoadSample = z.output<typeof loadSampleOutput>;

export const loadRunOutput = z.object({
  id: z.string(),
  state: z.enum(['running', 'done', 'stopped', 'error']),
  startedAt: z.string(),
  endedAt: z.string().nullable(),
  rate: z.number(),
  target: z.number().int(),
  sent: z.number().int(),
  accepted: z.number().int(),
  errors: z.number().int(),
  lastError: z.string().nullable(),
  samples: z.array(loadSampleOutput),
});
export type LoadRun = z.output<typeof loadRunOutput>;

// ---------- export ----------
export const exportInputSchema = z.strictObject({
  format: z.enum(['jsonl', 'har']),
  sourceId: z.string().optional(),
  type: z.string().optional(),
  status: z.string().optional(),
  /** Calls with at least one URL in this state, as the inspector's list filters. */
  urlState: z.enum(URL_STATE_FILTERS).optional(),
  userId: z.string().optional(),
  q: z.string().max(200).optional(),
  body: flagParam.optional(),
  limit: intParam(1, 200_000).default(10_000),
});

export const exportFileOutput = z.object({ filename: z.string(), contentType: z.string(), content: z.string() });
export type ExportFile = z.output<typeof exportFileOutput>;

const receiverUseOutput = z.object({
  sourceId: z.string(),
  sourceName: z.string(),
  urls: z.array(z.number().int()),
  mappings: z.array(z.string()),
  effect: z.enum(['url_removed', 'webhooks_off', 'actions_only']),
});
same<z.output<typeof receiverUseOutput>, ReceiverUse>(true);
const configWarningOutput = z.object({
  path: z.string(),
  code: z.enum(['mock_receiver_resolved', 'loopback_port_not_owned', 'short_standard_webhooks_key', 'segment_refuses_url', 'trigger_reads_otherwise', 'headers_joined', 'key_dropped']),
  message: z.string(),
});
same<z.output<typeof configWarningOutput>, ConfigWarning>(true);
const importConfigOutput = z.object({ ok: z.literal(true), sources: z.number().int(), mockReceivers: z.number().int(), audiences: z.number().int(), warnings: z.array(configWarningOutput) });

export const simulationOps = {
  listReceivers: op<MockReceiverView[]>()('GET', '/receivers', z.strictObject({}), { output: z.array(mockReceiverViewOutput) }),
  createReceiver: op<MockReceiverView>()('POST', '/receivers', mockReceiverSchema, { output: mockReceiverViewOutput }),
  /** Fields given replace the stored ones; `secret: null` stops checking signatures. */
  updateReceiver: op<MockReceiverView>()(
    'PATCH',
    '/receivers/:id',
    // Without the create defaults: a field left out keeps its stored value (zod keeps defaults under partial()).
    mockReceiverSchema.partial().extend({
      id,
      secret: z.string().min(1).max(1024).nullable().optional(),
      tls: z.boolean().optional(),
      behavior: mockBehaviorSchema.optional(),
    }),
    { output: mockReceiverViewOutput },
  ),
  /**
   * Refused (409, naming the sources) while a source sends to it, unless `detach`: then its URL is
   * removed from them first (receiver-uses.ts says what that does to each); `detached` lists them.
   */
  deleteReceiver: op<{ ok: true; detached: ReceiverUse[] }>()('DELETE', '/receivers/:id', z.strictObject({ id, detach: flagParam.optional() }), {
    output: z.object({ ok: z.literal(true), detached: z.array(receiverUseOutput) }),
  }),
  listReceiverRequests: op<MockRequestRecord[]>()(
    'GET',
    '/receivers/:id/requests',
    z.strictObject({ id, limit: intParam(1, 1000).default(200) }),
    { output: z.array(mockRequestRecordOutput) },
  ),
  /** Resets failFirst counters and clears its recorded requests. */
  resetReceiver: op<MockReceiverView>()('POST', '/receivers/:id/reset', z.strictObject({ id }), { output: mockReceiverViewOutput }),
  /** One click: add the receiver's URL to a source's Webhooks URLs (and enable them). */
  attachReceiver: op<Source>()('POST', '/receivers/:id/attach', z.strictObject({ id, sourceId: id }), { output: fullSourceOutput }),

  listDeletions: op<DeletionRequest[]>()('GET', '/deletions', z.strictObject({}), { output: z.array(deletionRequestOutput) }),
  createDeletion: op<DeletionRequest>()('POST', '/deletions', z.strictObject({ userId: z.string().trim().min(1, { message: 'required' }), purge: z.boolean().default(false) }), {
    output: deletionRequestOutput,
  }),

  listAudiences: op<Audience[]>()('GET', '/audiences', z.strictObject({}), { output: z.array(audienceOutput) }),
  createAudience: op<Audience & { sync: SyncResult }>()('POST', '/audiences', audienceInputSchema, { output: syncedAudienceOutput }),
  deleteAudience: op<{ ok: true }>()('DELETE', '/audiences/:id', z.strictObject({ id }), { output: okOutput }),
  /** Edits and re-syncs at once (only changed users get identify calls); see audienceUpdateSchema. */
  updateAudience: op<Audience & { sync: SyncResult }>()('PATCH', '/audiences/:id', audienceUpdateSchema, { output: syncedAudienceOutput }),
  /** Members (audience) or users with a value (computed trait) as of the last sync, by userId. */
  listAudienceMembers: op<{ members: AudienceMember[]; total: number }>()(
    'GET',
    '/audiences/:id/members',
    z.strictObject({ id, limit: intParam(1, 5000).default(1000) }),
    { output: audienceMembersOutput },
  ),
  previewAudience: op<{ members: AudienceMember[]; total: number }>()(
    'POST',
    '/audiences/preview',
    z.strictObject({ type: z.enum(['audience', 'computed_trait']).default('audience'), rule: audienceRuleSchema.optional(), compute: computedTraitSchema.optional() }),
    { output: audienceMembersOutput },
  ),
  syncAudience: op<SyncResult>()('POST', '/audiences/:id/sync', z.strictObject({ id }), { output: syncResultOutput }),

  startLoad: op<LoadRun>()('POST', '/load', loadInputSchema, { output: loadRunOutput }),
  getLoad: op<LoadRun | null>()('GET', '/load', z.strictObject({}), { output: loadRunOutput.nullable() }),
  stopLoad: op<LoadRun | null>()('POST', '/load/stop', z.strictObject({}), { output: loadRunOutput.nullable() }),

  exportDeliveries: op<ExportFile>()('GET', '/export', exportInputSchema, { output: exportFileOutput }),
  getConfig: op<Config>()('GET', '/config', z.strictObject({}), { output: configSchema.strip() }),
  /** `warnings`: what the import adjusted or doubts, applied anyway (config-receivers.ts); [] when nothing. */
  importConfig: op<{ ok: true; sources: number; mockReceivers: number; audiences: number; warnings: ConfigWarning[] }>()('POST', '/config', configSchema, {
    bodyLimit: MAX_CONFIG_BYTES,
    output: importConfigOutput,
  }),
} as const;

export type SimulationEvent =
  | { type: 'receiver.request'; receiverId: string; request: MockRequestRecord }
  | { type: 'receivers.changed' }
  | { type: 'deletions.changed' }
  | { type: 'audiences.changed' }
  | { type: 'load.progress'; run: LoadRun };
