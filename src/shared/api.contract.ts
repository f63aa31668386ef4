import { z } from 'zod';
import { isoTimeSchema } from './iso-time';
import { DELIVERY_FILTERS, URL_STATE_FILTERS } from './delivery-filters';
import { createSourceSchema, webhookSettingsSchema, sourceNameSchema, rotateSecretSchema } from './source.schema';
import { settingsPatchSchema } from './settings.schema';
import type { CallDetail, CallSummary, Page, Settings, Source, Attempt, StorageState, DeliveryProgress } from './types';
import { op, type OpDef } from './api-op';
import { actionsOps } from './actions.contract';
import { flagParam } from './query-flag';
import { intParam } from './query-int';
import { MAX_BATCH_ITEMS, MAX_REPLAY_BODY_CHARS } from './limits';
import type { ErrorCode } from './error-codes';
import type { LibraryMetrics } from './library-metrics';
import { collectorFaultsSchema, type CollectorFaultCounts } from './collector-faults';
import type { CallStats } from './call-stats';
import type { BatchItemsPage } from './types';
import { simulationOps, type SimulationEvent } from './simulation.contract';
import { demoOps } from './demo.contract';
import { trackingPlanOps } from './tracking-plans.contract';
import { probeOps, type ProbeEvent } from './probe.contract';
export { probeReportOutput } from './probe.contract';
import { signatureOps } from './signature-verify.contract';

// The one declaration of the app's API (DESIGN.md lesson 2). The HTTP routes, the IPC handlers, the
// preload bridge and the renderer's client are all generated from this object, so adding an
// operation is one edit here plus its handler, and drift fails to compile.

export type { HttpMethod, OpDef } from './api-op';

const id = z.string().min(1);

export { DELIVERY_FILTERS, URL_STATE_FILTERS };

export const listMessagesSchema = z.strictObject({
  sourceId: z.string().optional(),
  type: z.string().optional(),
  status: z.enum(DELIVERY_FILTERS).optional(),
  /** Calls with at least one URL in this state (failed, retrying, in_flight, …). */
  urlState: z.enum(URL_STATE_FILTERS).optional(),
  userId: z.string().optional(),
  /** Search (src/shared/search-filter.ts): a substring, any case, of userId, anonymousId, messageId, event/name, groupId or previousId. */
  q: z.string().max(200).optional(),
  /** With q: also match keys and string values inside the call's body as received. */
  body: flagParam.optional(),
  /** true: only calls their source's tracking plan found violations in; false: only calls it checked and found clean (docs/tracking-plans.md). */
  violations: flagParam.optional(),
  /** false: without the calls of the source "probe" (Check a receiver's, about 45 a run; the Inspector hides them unless asked). */
  probe: flagParam.optional(),
  /** Cursor: only calls with an id below this. */
  before: intParam(1, Number.MAX_SAFE_INTEGER).optional(),
  limit: intParam(1, 500).default(100),
});

/** The filters of listMessages without its paging: what a bulk action over "the calls shown" takes. */
export const callFilterSchema = listMessagesSchema.omit({ before: true, limit: true });

/** A bulk retry sends at most this many calls; more matching are left for another one. */
export const RETRY_MATCHING_MAX = 10_000;

export interface RetryMatchingResult {
  /** Failed or expired calls matching the filters. */
  matched: number;
  /** Sent again (in the background, as manual attempts): at most RETRY_MATCHING_MAX; 0 for a dry run. */
  retried: number;
}


export type { BackgroundSlices, EventLoopFigures, Health } from './health.output';
import type { Health } from './health.output';

export interface ReplayResult {
  deliveryId: number;
  attempts: Attempt[];
}




export const clientSettingsPatchSchema = z.strictObject({
  flushAt: z.number().int().min(1).max(MAX_BATCH_ITEMS).optional(),
  flushAfter: z.number().int().min(10).max(3_600_000).optional(),
  endpoint: z.string().url().optional(),
  sourceId: z.string().min(1).optional(),
  writeKey: z.string().min(1).optional(),
});

// The answers' shapes (issue 43): declared in api-outputs.ts, given to each operation below.
export * from './api-outputs';
import {
  batchItemsPageOutput,
  callDetailOutput,
  callStatsOutput,
  callSummaryOutput,
  clearCallsOutput,
  clientFlushOutput,
  clientSendOutput,
  clientSettingsOutput,
  clientStateOutput,
  collectorFaultCountsOutput,
  detailsPageOutput,
  fullSourceOutput,
  healthOutput,
  libraryMetricsOutput,
  okOutput,
  pageOutput,
  replayResultOutput,
  retryMatchingOutput,
  settingsOutput,
  type ClearCallsResult,
  type ClientSettings,
  type ClientState,
} from './api-outputs';

export const api = {
  health: op<Health>()('GET', '/health', z.strictObject({}), { output: healthOutput }),

  listSources: op<Source[]>()('GET', '/sources', z.strictObject({}), { output: z.array(fullSourceOutput) }),
  createSource: op<Source>()('POST', '/sources', createSourceSchema, { output: fullSourceOutput }),
  updateSource: op<Source>()(
    'PATCH',
    '/sources/:id',
    z.strictObject({ id, name: sourceNameSchema.optional(), webhooks: webhookSettingsSchema.optional(), collectorFaults: collectorFaultsSchema.nullable().optional() }),
    { output: fullSourceOutput },
  ),
  /** Faults the collector injected per source since start (shared/collector-faults.ts). */
  getCollectorFaultCounts: op<CollectorFaultCounts>()('GET', '/collector-faults', z.strictObject({}), { output: collectorFaultCountsOutput }),
  regenerateWriteKey: op<Source>()('POST', '/sources/:id/regenerate-key', z.strictObject({ id }), { output: fullSourceOutput }),
  /**
   * A new version of one of the source's secrets (`secret`, or a random one): new deliveries sign with
   * it; older ones keep theirs; for the rotation window (settings) Standard Webhooks requests carry the
   * old version's signature too (README, Decisions: "Secrets kept once, versioned").
   */
  rotateSecret: op<Source>()('POST', '/sources/:id/rotate-secret', rotateSecretSchema, { output: fullSourceOutput }),
  deleteSource: op<{ ok: true }>()('DELETE', '/sources/:id', z.strictObject({ id }), { output: okOutput }),
  /** Sends a sample track call for this source through the collector path; returns the stored call. */
  sendTestCall: op<CallDetail>()('POST', '/sources/:id/test', z.strictObject({ id }), { output: callDetailOutput }),

  listMessages: op<Page<CallSummary>>()('GET', '/messages', listMessagesSchema, { output: pageOutput(callSummaryOutput) }),
  getMessage: op<CallDetail>()('GET', '/messages/:id', z.strictObject({ id: intParam(1, Number.MAX_SAFE_INTEGER) }), { output: callDetailOutput }),
  /**
   * Calls' details in arrival order, those with an id above `after`: how a reader keeps up with what
   * arrives a page at a time (webhook-lab/testing) without one getMessage per call. `next`: pass it
   * as `after` for the next page; null when this page reached the newest call.
   */
  listMessageDetails: op<{ items: CallDetail[]; next: number | null }>()(
    'GET',
    '/message-details',
    z.strictObject({ after: intParam(0, Number.MAX_SAFE_INTEGER).default(0), sourceId: z.string().optional(), limit: intParam(1, 500).default(100) }),
    { output: detailsPageOutput },
  ),
  /**
   * Items of an Actions batch delivery, a page at a time, each the exact JSON text sent: what a call's
   * detail leaves out of a batch body over 64 KB (Delivery.bodyTruncated). A page stops at 1 MB.
   */
  getBatchItems: op<BatchItemsPage>()(
    'GET',
    '/deliveries/:id/items',
    z.strictObject({ id: intParam(1, Number.MAX_SAFE_INTEGER), offset: intParam(0, Number.MAX_SAFE_INTEGER).default(0), limit: intParam(1, 500).default(50) }),
    { output: batchItemsPageOutput },
  ),
  /** Calls counted by outcome (delivery state, drop reasons), since a time and for one source if given. */
  getStats: op<CallStats>()(
    'GET',
    '/stats',
    z.strictObject({ since: isoTimeSchema.optional(), sourceId: z.string().min(1).optional() }),
    { output: callStatsOutput },
  ),
  replayMessage: op<ReplayResult>()(
    'POST',
    '/messages/:id/replay',
    z.strictObject({
      id: intParam(1, Number.MAX_SAFE_INTEGER),
      /** Only this URL of the delivery; all URLs when omitted. */
      urlIndex: z.number().int().min(0).max(4).optional(),
      /** A deliberately edited body (JSON text); the stored bytes when omitted. */
      body: z.string().max(MAX_REPLAY_BODY_CHARS).optional(),
      /**
       * Which of the call's deliveries (CallDetail.deliveries): its Classic one or an Actions one
       * carrying it. Omitted: the Classic delivery, or for a call with none its first Actions delivery.
       */
      deliveryId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
    }),
    { output: replayResultOutput },
  ),

  /**
   * Sends every failed or expired call matching these filters (listMessages' fields) again to all its
   * URLs, as manual attempts with the source's current secret, in chunks in the background; dropped
   * and unfinished calls are skipped. dryRun only counts them (what the confirm shows).
   */
  retryMatching: op<RetryMatchingResult>()('POST', '/messages/retry', callFilterSchema.extend({ dryRun: z.boolean().optional() }), { output: retryMatchingOutput }),
  /** Deletes every call with its request body, delivery and attempts (unfinished deliveries canceled first). */
  clearCalls: op<ClearCallsResult>()('DELETE', '/messages', z.strictObject({}), { output: clearCallsOutput }),

  /** Queue a built call through the app's batching client; body is the message with its `type`. */
  clientSend: op<{ messageId: string; queued: number }>()(
    'POST',
    '/client/calls',
    z.looseObject({ type: z.string() }),
    { output: clientSendOutput },
  ),
  clientFlush: op<{ sent: number; batches: number; errors: string[] }>()('POST', '/client/flush', z.strictObject({}), { output: clientFlushOutput }),
  clientState: op<ClientState>()('GET', '/client', z.strictObject({}), { output: clientStateOutput }),
  clientGetSettings: op<ClientSettings>()('GET', '/client/settings', z.strictObject({}), { output: clientSettingsOutput }),
  clientUpdateSettings: op<ClientSettings>()('PATCH', '/client/settings', clientSettingsPatchSchema, { output: clientSettingsOutput }),

  getSettings: op<Settings>()('GET', '/settings', z.strictObject({}), { output: settingsOutput }),
  updateSettings: op<Settings>()('PATCH', '/settings', settingsPatchSchema, { output: settingsOutput }),

  /** The analytics.js the collector serves to web pages, and the counters it posted to /v1/m since start. */
  getLibraryMetrics: op<LibraryMetrics>()('GET', '/library-metrics', z.strictObject({}), { output: libraryMetricsOutput }),

  ...actionsOps,
  ...simulationOps,
  ...demoOps,
  ...trackingPlanOps,
  ...probeOps,
  ...signatureOps,
} as const;

export type Api = typeof api;
export type OpName = keyof Api;
export type OpInput<K extends OpName> = z.input<Api[K]['input']>;
export type OpParsed<K extends OpName> = z.output<Api[K]['input']>;
export type OpOutput<K extends OpName> = Api[K] extends OpDef<z.ZodType, infer O> ? O : never;

/** What the engine implements; adapters call these with already-validated input. */
export type ApiHandlers = { [K in OpName]: (input: OpParsed<K>) => Promise<OpOutput<K>> | OpOutput<K> };

/** What the renderer (and any other client) calls; IPC and HTTP both implement it. */
export interface ApiClient {
  /**
   * `signal` cancels a request whose answer is no longer wanted (Compose's as-you-type check when the
   * source changes): where the transport can, the request is withdrawn, not just its answer ignored.
   */
  call<K extends OpName>(name: K, input: OpInput<K>, opts?: { signal?: AbortSignal }): Promise<OpOutput<K>>;
  /** Engine events, delivered in batches; returns an unsubscribe function. */
  subscribe(listener: (events: EngineEvent[]) => void): () => void;
  /**
   * exportDeliveries as a file, where the transport can stream it (HTTP: GET /api/export/file);
   * without it, callers use the operation.
   */
  exportFile?(input: OpInput<'exportDeliveries'>): Promise<{ filename: string; blob: Blob }>;
  /**
   * exportDeliveries saved by the engine's side to a file the user picks (the desktop window: a save
   * dialog, then the file streamed to disk). Preferred over exportFile where present.
   */
  saveExport?(input: OpInput<'exportDeliveries'>): Promise<SavedExport>;
}

/** What saving an export to disk came to: not saved when the user cancelled the dialog. */
export type SavedExport = { saved: false } | { saved: true; path: string; bytes: number };

/** Errors cross HTTP and IPC as this shape (built by errorAnswer in src/main/engine/errors.ts). */
export interface ApiErrorBody {
  /** For people; may be reworded. */
  error: string;
  /** For programs: what went wrong (src/shared/error-codes.ts). Optional: answers from before it existed lack it. */
  code?: ErrorCode;
  fields?: { path: string; message: string }[];
}

export type EngineEvent =
  /** New calls stored by the collector (accepted or dropped). */
  | { type: 'calls.stored'; calls: CallSummary[] }
  /** Delivery progress changed the summary of these calls. */
  | { type: 'calls.updated'; calls: CallSummary[] }
  /** Calls were deleted (retention, a deletion request's purge): lists showing them must be read again. */
  | { type: 'calls.removed'; count: number }
  /** An attempt as recorded, with its delivery's progress after the round (what the open detail patches in). */
  | { type: 'attempt.recorded'; callId: number; attempt: Attempt; delivery: DeliveryProgress }
  /**
   * An attempt whose URL answered while others of its round are still out (a round out 250 ms or
   * more): listed at once, recorded when the round ends (then its attempt.recorded replaces it). Its
   * id is provisional, negative (shared/rounds-out.ts numbers it as the detail does).
   */
  | { type: 'attempt.answered'; callId: number; attempt: Attempt }
  | { type: 'sources.changed' }
  /** A tracking plan was created, replaced or deleted (the API, a config import): the plans screen reads them again. */
  | { type: 'plans.changed' }
  | { type: 'settings.changed'; settings: Settings }
  | { type: 'client.changed'; state: ClientState }
  /** Storage started or stopped failing (a full disk, a read-only data folder): the banner shows it. */
  | { type: 'storage.changed'; storage: StorageState }
  | SimulationEvent
  | ProbeEvent;

export const OP_NAMES = Object.keys(api) as OpName[];
