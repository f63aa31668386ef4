import { z } from 'zod';
import { CALL_TYPES } from './call-types';
import { actionsMethodAnswer, callStatusAnswer, deliveryStateAnswer, urlOutcomeAnswer } from './call-summary.output';
import { violationOutput } from './tracking-plan.schema';

// A call's detail (GET /api/messages/:id) as this lab answers it: the one declaration (issue 43). The
// call as stored, its deliveries and their attempts, and why it was or was not forwarded; types.ts
// re-exports their types. api-outputs.ts reads answers with looser schemas (open records with the
// fields programs rely on named), since labs released before some fields answer too.

const nullableStr = z.string().nullable();
const count = z.number().int().min(0);
const jsonObject = z.record(z.string(), z.json());

/** Types that can reach a receiver: the six call types plus deletion notifications. */
export const outboundTypeAnswer = z.enum([...CALL_TYPES, 'delete']);

/** A call after the collector normalized it (SPEC §3): the record the dispatcher builds bodies from. */
export const normalizedCallAnswer = z.object({
  type: outboundTypeAnswer,
  messageId: z.string(),
  userId: nullableStr.optional(),
  anonymousId: nullableStr.optional(),
  event: z.string().optional(),
  name: z.string().optional(),
  category: z.string().optional(),
  groupId: z.string().optional(),
  previousId: z.string().optional(),
  properties: jsonObject.optional(),
  traits: jsonObject.optional(),
  context: jsonObject.optional(),
  integrations: jsonObject.optional(),
  /** ISO 8601 UTC with milliseconds and `Z`. */
  timestamp: z.string(),
  originalTimestamp: z.string().optional(),
  sentAt: z.string().optional(),
  receivedAt: z.string(),
});

/** How a call arrived: route, content type, how the write key was given, batch position. */
export const requestMetaAnswer = z.object({
  path: z.string(),
  contentType: nullableStr,
  userAgent: nullableStr,
  writeKeyFrom: z.enum(['basic', 'body', 'none']),
  batchIndex: z.number().int().nullable(),
  batchSize: z.number().int().nullable(),
  /** Set when the body came compressed (`gzip`, `deflate`); the body kept is the decoded one. */
  contentEncoding: z.string().optional(),
});

/** What the collector stored for one call (one item of a batch is one call). */
export const storedCallAnswer = z.object({
  id: z.number().int(),
  sourceId: nullableStr,
  sourceName: nullableStr,
  receivedAt: z.string(),
  type: z.string(),
  userId: nullableStr,
  anonymousId: nullableStr,
  /** event for track, name for page/screen. */
  label: nullableStr,
  messageId: nullableStr,
  status: callStatusAnswer,
  dropReason: nullableStr,
  /**
   * The item exactly as the client sent it (before envelope merge); null when it nests deeper than
   * MAX_CALL_DEPTH (src/shared/nesting.ts), and then given as rawText instead.
   */
  raw: z.json(),
  /**
   * Only for an item nested deeper than MAX_CALL_DEPTH: its compact JSON text, which every reader
   * (HTTP, IPC, the inspector) can carry and show at any depth, where a value would overflow the stack.
   */
  rawText: z.string().optional(),
  request: requestMetaAnswer,
  /** As it was when the call arrived (README, Decisions: normalize once); null when dropped as invalid. */
  normalized: normalizedCallAnswer.nullable(),
  /**
   * Why there is no normalized form although the call was not dropped as invalid: it was stored by a
   * newer build, with normalization rules this one does not have (it is shown as received only).
   */
  normalizedNote: z.string().optional(),
});

export const attemptTriggerAnswer = z.enum(['scheduled', 'manual', 'replay', 'probe']);
export const attemptOutcomeAnswer = z.enum(['success', 'retryable', 'failed']);
export const tlsErrorKindAnswer = z.enum(['self_signed', 'expired', 'not_yet_valid', 'hostname_mismatch', 'untrusted_ca', 'revoked', 'not_tls', 'other']);

/**
 * One attempt's time split (ms, to 0.1 ms), as the HTTP sender measures it. connectMs and tlsMs are
 * null when the request went out on a kept-alive connection an earlier request opened (reused), and
 * tlsMs for http. ttfbMs counts from the start of the attempt (any wait for a connection, connect and
 * TLS included) to the response's first byte, so connectMs + tlsMs ≤ ttfbMs ≤ totalMs.
 */
export const attemptTimingAnswer = z.object({
  connectMs: z.number().nullable(),
  tlsMs: z.number().nullable(),
  ttfbMs: z.number().nullable(),
  totalMs: z.number(),
  reused: z.boolean(),
});

export const attemptAnswer = z.object({
  id: z.number().int(),
  deliveryId: z.number().int(),
  round: z.number().int(),
  urlIndex: z.number().int(),
  url: z.string(),
  /** The HTTP method it was sent with: its delivery's (Classic: POST; Actions: the mapping's). */
  method: actionsMethodAnswer,
  trigger: attemptTriggerAnswer,
  startedAt: z.string(),
  durationMs: z.number(),
  requestHeaders: z.record(z.string(), z.string()),
  /**
   * Present only when the attempt sent other bytes than its delivery's `body` (a replay with an
   * edited body, a probe's tampered request): those exact bytes, as UTF-8 text. Otherwise it sent
   * its delivery's body, which a call's detail carries once (shared/attempt-body.ts `sentBody`).
   */
  requestBody: z.string().optional(),
  signature: nullableStr,
  responseStatus: z.number().int().nullable(),
  responseHeaders: z.record(z.string(), z.string()).nullable(),
  responseBody: nullableStr,
  responseTruncated: z.boolean(),
  errorCode: nullableStr,
  errorMessage: nullableStr,
  timedOut: z.boolean(),
  /** The time limit that was hit (ms), when the attempt timed out; null otherwise. */
  timeoutMs: z.number().nullable(),
  /** A certificate or handshake failure: the code (errorCode) and its kind; null otherwise. */
  tlsError: z.object({ code: z.string(), kind: tlsErrorKindAnswer }).nullable(),
  /** No HTTP response because the connection failed or broke before one (ECONNREFUSED, ENOTFOUND, ECONNRESET…); null otherwise. */
  connectError: z.object({ code: z.string() }).nullable(),
  outcome: attemptOutcomeAnswer,
  /** Where the time went; null when the request never had a connection, or for attempts made before v9. */
  timing: attemptTimingAnswer.nullable(),
  /**
   * A scheduled attempt: where it started in the delivery's simulated time, in ms from its first
   * attempt (the retry schedule's clock, warped by the time-warp setting). Absent for manual attempts,
   * replays, probes and attempts made before it was kept.
   */
  simOffsetMs: z.number().optional(),
});

export const webhookUrlAnswer = z.object({ url: z.string(), headers: z.record(z.string(), z.string()) });

export const deliveryAnswer = z.object({
  id: z.number().int(),
  callId: z.number().int(),
  sourceId: z.string(),
  type: outboundTypeAnswer,
  state: deliveryStateAnswer,
  urls: z.array(webhookUrlAnswer),
  /** Round number of the last attempt (0 before any). */
  round: count,
  attemptCount: count,
  /** Real (wall-clock) time of the next scheduled round. */
  nextAttemptAt: nullableStr,
  /** Simulated time offset of the next round since the first attempt (time-warp view). */
  nextAttemptSimOffsetMs: z.number().nullable(),
  firstAttemptAt: nullableStr,
  lastAttemptAt: nullableStr,
  deliveredAt: nullableStr,
  lastError: nullableStr,
  /** Serialized once; every retry (and replay, unless edited) sends these bytes: its attempts do not repeat them. */
  body: z.string(),
  /** Which request it is: the Classic destination's, or one Webhooks (Actions) mapping's. */
  kind: z.enum(['classic', 'actions']),
  /** The Actions mapping's name; null for Classic. */
  mapping: nullableStr,
  /** HTTP method every attempt uses (Classic: always POST). */
  method: actionsMethodAnswer,
  /** Calls it carries: 1, or a batch's size. */
  itemCount: count,
  /** An Actions batch's member calls, in array order (callId is the first); absent otherwise. */
  callIds: z.array(z.number().int()).optional(),
  /**
   * Present when `body` is cut (an Actions batch over 64 KB, in a call's detail): `body` is then a JSON
   * array of the batch's first `shownItems` items (what each attempt that sent it unedited is shown
   * with). Page through every item with getBatchItems.
   */
  bodyTruncated: z.object({ bytes: count, items: count, shownItems: count }).optional(),
  /** Standard Webhooks `webhook-id`, fixed at creation; null when the source had no standardWebhooksSecret. */
  swId: nullableStr,
  /** The version of the source's Standard Webhooks secret it signs with (Source.secretVersions); null when none or unknown. */
  swVersion: z.number().int().nullable().optional(),
});

export const FORWARDING_REASONS = ['webhooks_off', 'integrations', 'no_mapping_matched', 'dropped', 'blocked'] as const;

/** Why a call was or was not forwarded to Webhooks (shared/forwarding.ts decides it: the one source of that sentence). */
export const forwardingAnswer = z.object({
  forwarded: z.boolean(),
  /** Why not; absent when forwarded. */
  reason: z.enum(FORWARDING_REASONS).optional(),
  /** With `no_mapping_matched`: the source's mappings that did not match, with their triggers (FQL; '' for none). */
  mappings: z.array(z.object({ name: z.string(), trigger: z.string() })).optional(),
});

export const callDetailAnswer = z.object({
  call: storedCallAnswer,
  /** The same per-URL outcomes as the call's summary. */
  urls: z.array(urlOutcomeAnswer),
  deliveries: z.array(deliveryAnswer.extend({ attempts: z.array(attemptAnswer) })),
  /**
   * What its source's tracking plan found when the call arrived (kept as it was then; docs/tracking-plans.md):
   * [] when checked and clean, null when the source had no plan.
   */
  violations: z.array(violationOutput).nullable(),
  /** The plan it was checked against, and what enforcement did (blocked reason, omitted properties); null when not checked. */
  planCheck: z.object({ planId: z.string(), planName: nullableStr, blocked: nullableStr, omitted: z.array(z.string()) }).nullable(),
  forwarding: forwardingAnswer,
});

export type OutboundType = z.output<typeof outboundTypeAnswer>;
export type NormalizedCall = z.output<typeof normalizedCallAnswer>;
export type RequestMeta = z.output<typeof requestMetaAnswer>;
export type StoredCall = z.output<typeof storedCallAnswer>;
export type AttemptTrigger = z.output<typeof attemptTriggerAnswer>;
export type AttemptOutcome = z.output<typeof attemptOutcomeAnswer>;
export type TlsErrorKind = z.output<typeof tlsErrorKindAnswer>;
export type AttemptTiming = z.output<typeof attemptTimingAnswer>;
export type Attempt = z.output<typeof attemptAnswer>;
export type WebhookUrl = z.output<typeof webhookUrlAnswer>;
export type Delivery = z.output<typeof deliveryAnswer>;
export type DeliveryKind = Delivery['kind'];
export type ForwardingReason = (typeof FORWARDING_REASONS)[number];
export type Forwarding = z.output<typeof forwardingAnswer>;
export type UnmatchedMapping = NonNullable<Forwarding['mappings']>[number];
export type CallDetail = z.output<typeof callDetailAnswer>;
