import { z } from 'zod';
import type { CallStats } from './call-stats';
import type { CollectorFaultCounts } from './collector-faults';
import type { LibraryMetrics } from './library-metrics';
import { sourceAnswer, webhookSettingsAnswer } from './source.output';
import { deliveryStateAnswer, urlOutcomeOutput } from './call-summary.output';
import { attemptAnswer, callDetailAnswer, deliveryAnswer, forwardingAnswer, storedCallAnswer } from './call-detail.output';
import { same } from './same-shape';

// The answers' shapes as zod schemas (issues 39 and 43): what the HTTP API, the IPC bridge, the MCP
// tools, `webhook-lab check` and the tests read. Where a type is declared here it comes from its
// schema (z.output); where types.ts still declares one, `same` below fails to compile when the two
// say different things. Nested records an agent reads but no program relies on field by field (a call
// as received, an attempt's facts) are open objects with the fields that are relied on named.

// A call's summary and its URLs' outcomes are declared once in call-summary.output.ts.
export { callSummaryAnswer, callSummaryOutput, urlOutcomeOutput } from './call-summary.output';
export const deliveryStateOutput = deliveryStateAnswer;
export const pageOutput = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item), total: z.number().int(), next: z.number().int().nullable() });
// The readers' views of a detail, made from its declaration (call-detail.output.ts): the fields programs
// rely on, the rest kept as it came (labs released before some fields answer too).
export const attemptOutput = attemptAnswer
  .pick({ id: true, deliveryId: true, round: true, urlIndex: true, url: true, trigger: true, startedAt: true, durationMs: true, signature: true, responseStatus: true, responseBody: true, errorCode: true, errorMessage: true, timedOut: true, outcome: true })
  .loose();
export const deliveryOutput = deliveryAnswer
  .pick({ id: true, callId: true, state: true, kind: true, round: true, attemptCount: true, nextAttemptAt: true, lastError: true, body: true })
  .extend({ attempts: z.array(attemptOutput) })
  .loose();
export const forwardingOutput = forwardingAnswer;
export const callDetailOutput = callDetailAnswer.extend({
  call: storedCallAnswer.pick({ id: true, receivedAt: true, type: true, status: true, dropReason: true, sourceId: true, sourceName: true }).extend({ raw: z.unknown() }).loose(),
  urls: z.array(urlOutcomeOutput),
  deliveries: z.array(deliveryOutput),
  violations: z.array(z.looseObject({ kind: z.string(), path: z.string(), message: z.string() })).nullable(),
});
// The readers' view of a source (webhook-lab check, the MCP tools): what they rely on, the rest kept as it came.
export const sourceOutput = sourceAnswer
  .pick({ id: true, name: true, writeKey: true, createdAt: true })
  .extend({ webhooks: webhookSettingsAnswer.pick({ enabled: true, sharedSecret: true, standardWebhooksSecret: true }).extend({ urls: z.array(z.looseObject({ url: z.string() })) }).loose() })
  .loose();
// storage is optional in healthOutput: a lab released before it (e554b8f) answers health without it, and connectLab asks health first.
export { healthAnswer, healthOutput, storageOutput } from './health.output';
export const replayResultOutput = z.object({ deliveryId: z.number().int(), attempts: z.array(attemptOutput) });
export const retryMatchingOutput = z.object({ matched: z.number().int(), retried: z.number().int() });

const count = z.number().int().min(0);
const isoOrNull = z.string().nullable();

export const okOutput = z.object({ ok: z.literal(true) });

/** A source as stored: its settings as the schema accepted them (source.schema.ts says what each may hold). */
export const fullSourceOutput = sourceAnswer;

export const collectorFaultCountsOutput = z.object({ since: z.string(), sources: z.record(z.string(), z.record(z.string(), count)) });
same<z.output<typeof collectorFaultCountsOutput>, CollectorFaultCounts>(true);

export const detailsPageOutput = z.object({ items: z.array(callDetailOutput), next: z.number().int().nullable() });

export const batchItemsPageOutput = z.object({
  deliveryId: z.number().int(),
  offset: count,
  /** Items in the batch. */
  total: count,
  /** From `offset`, in array order; fewer than asked near the end, or when a page reaches 1 MB. */
  items: z.array(z.object({ item: count, callId: z.number().int(), data: z.string() })),
});
/** A page of an Actions batch's items (getBatchItems): each item's exact JSON text in the body sent. */
export type BatchItemsPage = z.output<typeof batchItemsPageOutput>;

const statsStates = z.object({ pending: count, in_flight: count, retrying: count, delivered: count, failed: count, expired: count, canceled: count });
export const callStatsOutput = z.object({
  since: isoOrNull,
  sourceId: z.string().nullable(),
  calls: count,
  dropped: count,
  dropReasons: z.array(z.object({ reason: z.string(), count })),
  blocked: count.optional(),
  notForwarded: count,
  deliveries: statsStates,
  unfinished: count,
});
same<z.output<typeof callStatsOutput>, CallStats>(true);

export const clearCallsOutput = z.object({
  /** Calls deleted, with their requests, deliveries and attempts. */
  removed: count,
  /** Unfinished deliveries among them, canceled before the delete. */
  canceled: count,
});
export type ClearCallsResult = z.output<typeof clearCallsOutput>;

export const clientSettingsOutput = z.object({
  flushAt: z.number().int(),
  flushAfter: z.number().int(),
  endpoint: z.string(),
  /** The source whose write key the client uses (null when a raw writeKey was set). */
  sourceId: z.string().nullable(),
  writeKey: z.string(),
});
export type ClientSettings = z.output<typeof clientSettingsOutput>;

export const clientBatchRecordOutput = z.object({
  at: z.string(),
  count,
  bytes: count,
  status: z.number().int().nullable(),
  durationMs: z.number(),
  retries: count,
  error: z.string().nullable(),
});
export type ClientBatchRecord = z.output<typeof clientBatchRecordOutput>;

export const clientStateOutput = z.object({
  settings: clientSettingsOutput,
  queued: count,
  queuedBytes: count,
  lastFlushAt: isoOrNull,
  lastFlushResult: z.string().nullable(),
  nextFlushAt: isoOrNull,
  batchesSent: count,
  retries: count,
  drops: count,
  recentBatches: z.array(clientBatchRecordOutput),
  /** Recent DEBUG-style log lines of the client. */
  log: z.array(z.object({ at: z.string(), line: z.string() })),
});
export type ClientState = z.output<typeof clientStateOutput>;

export const clientSendOutput = z.object({ messageId: z.string(), queued: count });
export const clientFlushOutput = z.object({ sent: count, batches: count, errors: z.array(z.string()) });

export { settingsOutput } from './settings.output';

export const libraryMetricsOutput = z.object({
  analyticsNext: z.object({ version: z.string() }).nullable(),
  since: z.string(),
  reports: count,
  lastReportAt: isoOrNull,
  metrics: z.array(z.object({ metric: z.string(), library: z.string().nullable(), libraryVersion: z.string().nullable(), count })),
  overflow: count,
});
same<z.output<typeof libraryMetricsOutput>, LibraryMetrics>(true);
