import { z } from 'zod';

// A call's row in the list (GET /api/messages) and its URLs' outcomes as this lab answers them: the one
// declaration (issue 43). `CallSummary`, `UrlOutcome`, `ActionsVia` and the state unions are its types;
// api-outputs.ts reads answers with a looser schema made from it, since labs released before some
// fields (groupId, previousId, a URL's `via`) answer too. Imports only zod: types.ts re-exports it.

const nullableStr = z.string().nullable();
const count = z.number().int().min(0);

/** `blocked`: accepted, but its source's tracking plan blocked it (stored, never forwarded; dropReason says why). */
export const callStatusAnswer = z.enum(['accepted', 'dropped', 'blocked']);

/** `canceled`: its source was deleted, or its Webhooks turned off, before it finished: never sent again. */
export const deliveryStateAnswer = z.enum(['pending', 'in_flight', 'delivered', 'retrying', 'failed', 'expired', 'canceled', 'dropped']);

/**
 * One URL's part in a delivery. `failed`: its last attempt failed and it will not be tried again
 * (not retryable, or another URL delivered the call); `expired`: its retries ran out of the window;
 * `not_attempted`: the delivery ended without ever sending to it (a replay of another URL only, or
 * another URL delivered the call while this one waited for a slot in its receiver's lane).
 */
export const urlStateAnswer = z.enum(['pending', 'in_flight', 'delivered', 'retrying', 'failed', 'expired', 'canceled', 'not_attempted']);

/**
 * Which Actions request an outcome belongs to. deliveryId is null while the call waits in its
 * mapping's batch (then `waiting` says how many items are queued of the batch size); `batch` is
 * present when the delivery carries several calls (item = the call's 0-based position in the array).
 */
export const actionsMethodAnswer = z.enum(['POST', 'PUT', 'PATCH']);

export const actionsViaAnswer = z.object({
  kind: z.literal('actions'),
  mapping: z.string(),
  method: actionsMethodAnswer,
  deliveryId: z.number().int().nullable(),
  batch: z.object({ size: count, item: count }).optional(),
  waiting: z.object({ queued: count, of: count }).optional(),
});

export const urlOutcomeAnswer = z.object({
  url: z.string(),
  state: urlStateAnswer,
  /** HTTP status of its last answered attempt; null before any, or when the last had no answer (TLS, timeout). */
  lastStatus: z.number().int().nullable(),
  /** Attempts recorded for this URL (an attempt still in flight is not counted yet). */
  attempts: count,
  /** While an attempt to it is in flight: when that attempt started (ISO); otherwise null. */
  startedAt: nullableStr,
  /** Present when the outcome is an Actions mapping's request rather than a Classic URL. */
  via: actionsViaAnswer.optional(),
});

export const callSummaryAnswer = z.object({
  id: z.number().int(),
  receivedAt: z.string(),
  sourceId: nullableStr,
  sourceName: nullableStr,
  type: z.string(),
  userId: nullableStr,
  anonymousId: nullableStr,
  label: nullableStr,
  messageId: nullableStr,
  /** A group call's groupId, an alias call's previousId (searched: src/shared/search-filter.ts). */
  groupId: nullableStr,
  previousId: nullableStr,
  status: callStatusAnswer,
  dropReason: nullableStr,
  /** Delivery state of the Webhooks destination, or null when not routed to it. */
  deliveryState: deliveryStateAnswer.nullable(),
  deliveryId: z.number().int().nullable(),
  attemptCount: count,
  nextAttemptAt: nullableStr,
  /** Duration of the last attempt in ms. */
  latencyMs: z.number().nullable(),
  /** Each URL of the delivery, in order (empty when not routed to Webhooks): what happened there. */
  urls: z.array(urlOutcomeAnswer),
  /** Tracking plan violations found when it arrived: 0 checked and clean, null (or absent) when its source had no plan. */
  violations: z.number().int().min(0).nullable().optional(),
});

export type CallStatus = z.output<typeof callStatusAnswer>;
export type DeliveryState = z.output<typeof deliveryStateAnswer>;
export type UrlState = z.output<typeof urlStateAnswer>;
export type ActionsVia = z.output<typeof actionsViaAnswer>;
export type UrlOutcome = z.output<typeof urlOutcomeAnswer>;
export type CallSummary = z.output<typeof callSummaryAnswer>;

/**
 * What a reader of any lab's list relies on: a URL's state as text (a newer lab may have a state this
 * one does not know), no groupId or previousId (older labs answer without them), the rest kept as it came.
 */
export const urlOutcomeOutput = urlOutcomeAnswer.omit({ via: true }).extend({ state: z.string(), lastStatus: z.number().nullable(), attempts: z.number() }).loose();
export const callSummaryOutput = callSummaryAnswer.omit({ groupId: true, previousId: true }).extend({ urls: z.array(urlOutcomeOutput) }).loose();
