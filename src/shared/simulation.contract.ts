import { z } from 'zod';
import { flagParam } from './query-flag';
import { op } from './api-op';
import { URL_STATE_FILTERS } from './delivery-filters';
import { mockBehaviorSchema, mockReceiverSchema, type MockReceiver, type MockRequestRecord } from './mock-receiver.schema';
import { configSchema, MAX_CONFIG_BYTES, type Config, type ConfigWarning } from './config.schema';
import { audienceInputSchema, audienceRuleSchema, audienceUpdateSchema, computedTraitSchema, type AudienceRule, type ComputedTraitDef } from './audience.schema';
export * from './audience.schema';
import type { DeliveryState, Source } from './types';
import type { ReceiverUse } from './receiver-uses';

// The simulation features of SPEC §6–§7 (issue 5): mock receivers, deletion requests, audiences and
// computed traits, the load generator, export/import. Spread into `api` by api.contract.ts.

const id = z.string().min(1);

// ---------- mock receivers ----------
export interface MockReceiverView extends MockReceiver {
  /** Where to send to it (http or https per `tls`). */
  url: string;
  requestCount: number;
  lastRequestAt: string | null;
}

// ---------- deletion requests ----------
export interface DeletionNotification {
  sourceId: string;
  sourceName: string;
  /** The stored `delete` call (shown in the inspector like any call). */
  callId: number;
  deliveryState: DeliveryState | null;
}

export interface DeletionRequest {
  id: string;
  userId: string;
  createdAt: string;
  purge: boolean;
  /** Calls of this user removed from local history (purge only). */
  purgedCalls: number;
  /** done when every notification is delivered, failed/expired when one ended so, else pending. */
  status: 'pending' | 'done' | 'failed' | 'no_sources';
  notifications: DeletionNotification[];
  /**
   * Sources that received this user's calls but got no notice, and why: one that sends only Webhooks
   * (Actions) (Segment's Actions webhook destination has no delete action), or a Classic one with no URL.
   */
  skipped: { sourceId: string; sourceName: string; reason: string }[];
}

// ---------- audiences and computed traits (schemas in audience.schema.ts) ----------
export interface Audience {
  id: string;
  name: string;
  /** snake_cased name: the trait key sent in the identify calls. */
  key: string;
  type: 'audience' | 'computed_trait';
  rule?: AudienceRule;
  compute?: ComputedTraitDef;
  sourceIds: string[];
  syncIntervalMs: number | null;
  createdAt: string;
  lastSyncAt: string | null;
  /** Members (audience) or users with a value (computed trait) at the last sync. */
  memberCount: number;
}

export interface AudienceMember {
  userId: string;
  /** true for audience members; the computed value for computed traits. */
  value: string | number | boolean | null;
}

export interface SyncResult {
  audienceId: string;
  /** identify calls stored (one per changed user per source). */
  sent: number;
  entered: number;
  exited: number;
  changed: number;
  callIds: number[];
}

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

export interface LoadSample {
  /** Seconds since start. */
  t: number;
  sent: number;
  accepted: number;
  delivered: number;
  failed: number;
  retrying: number;
  /** Delivery latency (collector 200 → receiver answer) over the last second. */
  p50Ms: number | null;
  p99Ms: number | null;
}

export interface LoadRun {
  id: string;
  state: 'running' | 'done' | 'stopped' | 'error';
  startedAt: string;
  endedAt: string | null;
  rate: number;
  target: number;
  sent: number;
  accepted: number;
  errors: number;
  lastError: string | null;
  samples: LoadSample[];
}

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
  limit: z.coerce.number().int().min(1).max(200_000).default(10_000),
});

export interface ExportFile {
  filename: string;
  contentType: string;
  content: string;
}

export const simulationOps = {
  listReceivers: op<MockReceiverView[]>()('GET', '/receivers', z.strictObject({})),
  createReceiver: op<MockReceiverView>()('POST', '/receivers', mockReceiverSchema),
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
  ),
  /**
   * Refused (409, naming the sources) while a source sends to it, unless `detach`: then its URL is
   * removed from them first (receiver-uses.ts says what that does to each); `detached` lists them.
   */
  deleteReceiver: op<{ ok: true; detached: ReceiverUse[] }>()('DELETE', '/receivers/:id', z.strictObject({ id, detach: flagParam.optional() })),
  listReceiverRequests: op<MockRequestRecord[]>()(
    'GET',
    '/receivers/:id/requests',
    z.strictObject({ id, limit: z.coerce.number().int().min(1).max(1000).default(200) }),
  ),
  /** Resets failFirst counters and clears its recorded requests. */
  resetReceiver: op<MockReceiverView>()('POST', '/receivers/:id/reset', z.strictObject({ id })),
  /** One click: add the receiver's URL to a source's Webhooks URLs (and enable them). */
  attachReceiver: op<Source>()('POST', '/receivers/:id/attach', z.strictObject({ id, sourceId: id })),

  listDeletions: op<DeletionRequest[]>()('GET', '/deletions', z.strictObject({})),
  createDeletion: op<DeletionRequest>()('POST', '/deletions', z.strictObject({ userId: z.string().trim().min(1, { message: 'required' }), purge: z.boolean().default(false) })),

  listAudiences: op<Audience[]>()('GET', '/audiences', z.strictObject({})),
  createAudience: op<Audience & { sync: SyncResult }>()('POST', '/audiences', audienceInputSchema),
  deleteAudience: op<{ ok: true }>()('DELETE', '/audiences/:id', z.strictObject({ id })),
  /** Edits and re-syncs at once (only changed users get identify calls); see audienceUpdateSchema. */
  updateAudience: op<Audience & { sync: SyncResult }>()('PATCH', '/audiences/:id', audienceUpdateSchema),
  /** Members (audience) or users with a value (computed trait) as of the last sync, by userId. */
  listAudienceMembers: op<{ members: AudienceMember[]; total: number }>()(
    'GET',
    '/audiences/:id/members',
    z.strictObject({ id, limit: z.coerce.number().int().min(1).max(5000).default(1000) }),
  ),
  previewAudience: op<{ members: AudienceMember[]; total: number }>()(
    'POST',
    '/audiences/preview',
    z.strictObject({ type: z.enum(['audience', 'computed_trait']).default('audience'), rule: audienceRuleSchema.optional(), compute: computedTraitSchema.optional() }),
  ),
  syncAudience: op<SyncResult>()('POST', '/audiences/:id/sync', z.strictObject({ id })),

  startLoad: op<LoadRun>()('POST', '/load', loadInputSchema),
  getLoad: op<LoadRun | null>()('GET', '/load', z.strictObject({})),
  stopLoad: op<LoadRun | null>()('POST', '/load/stop', z.strictObject({})),

  exportDeliveries: op<ExportFile>()('GET', '/export', exportInputSchema),
  getConfig: op<Config>()('GET', '/config', z.strictObject({})),
  /** `warnings`: what the import adjusted or doubts, applied anyway (config-receivers.ts); [] when nothing. */
  importConfig: op<{ ok: true; sources: number; mockReceivers: number; audiences: number; warnings: ConfigWarning[] }>()('POST', '/config', configSchema, { bodyLimit: MAX_CONFIG_BYTES }),
} as const;

export type SimulationEvent =
  | { type: 'receiver.request'; receiverId: string; request: MockRequestRecord }
  | { type: 'receivers.changed' }
  | { type: 'deletions.changed' }
  | { type: 'audiences.changed' }
  | { type: 'load.progress'; run: LoadRun };
