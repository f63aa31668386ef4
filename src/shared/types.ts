// Domain types shared by the engine, the control API, IPC and the renderer.
// Plain data only: everything here crosses a process or network boundary as JSON.
import type { CollectorFaults } from './collector-faults';
import type { Violation } from './tracking-plan.schema';
import type { Forwarding } from './forwarding.types';

export type { Forwarding } from './forwarding.types';
import type { TlsErrorKind } from './tls-codes';
import type { z } from 'zod';
import type { settingsOutput } from './settings.output';
import type { CallStatus, DeliveryState, UrlOutcome } from './call-summary.output';

/** A call's row in the list and its URLs' outcomes come from their one declaration (call-summary.output.ts). */
export type { ActionsVia, CallStatus, CallSummary, DeliveryState, UrlOutcome, UrlState } from './call-summary.output';

export const CALL_TYPES = ['identify', 'track', 'page', 'screen', 'group', 'alias'] as const;
export type CallType = (typeof CALL_TYPES)[number];
/** Types that can reach a receiver: the six call types plus deletion notifications. */
export type OutboundType = CallType | 'delete';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** A call after the collector normalized it (SPEC §3): the record the dispatcher builds bodies from. */
export interface NormalizedCall {
  type: OutboundType;
  messageId: string;
  userId?: string | null;
  anonymousId?: string | null;
  event?: string;
  name?: string;
  category?: string;
  groupId?: string;
  previousId?: string;
  properties?: JsonObject;
  traits?: JsonObject;
  context?: JsonObject;
  integrations?: JsonObject;
  /** ISO 8601 UTC with milliseconds and `Z`. */
  timestamp: string;
  originalTimestamp?: string;
  sentAt?: string;
  receivedAt: string;
}

export interface WebhookUrl {
  url: string;
  headers: Record<string, string>;
}

/** Which requests a source's Webhooks destination sends: Classic's, Webhooks (Actions)', or both. */
export type DestinationMode = 'classic' | 'actions' | 'both';
export type ActionsMethod = 'POST' | 'PUT' | 'PATCH';
/** A bare string means equals. */
export type TriggerCondition = string | { equals: string } | { contains: string } | { oneOf: string[] };
/** Conditions on the call; every one given must hold, none given matches every call. */
export interface ActionsTrigger {
  type?: TriggerCondition;
  event?: TriggerCondition;
}

/** A mapping field's value: literal text, or one of the mapping kit's directives (`{"@path": "$.userId"}`). */
export type MappingValue = string | JsonObject;

/** One Webhooks (Actions) mapping: which calls it takes and the request it makes of each. */
export interface ActionsMapping {
  name: string;
  /** FQL as Segment's trigger editor writes it (`type = "track" and properties.plan = "pro"`), or the older object form. */
  trigger: ActionsTrigger | string;
  /** A URL, or a mapping directive resolved per call (`{"@template": "https://r.example/u/{{userId}}"}`), as Segment's field takes either. */
  url: MappingValue;
  method: ActionsMethod;
  /** Each value text or a directive, resolved per call. */
  headers: Record<string, MappingValue>;
  /** omitted = the whole event ({"@path": "$."}) */
  data?: Json;
  /** omitted = no batching; 1..4000 */
  batchSize?: number;
}

/**
 * The new fields are optional so that settings stored or written before Actions existed stay valid;
 * read them through webhookMode() and webhookMappings() (src/shared/actions/mode.ts), never directly.
 */
export interface WebhookSettings {
  enabled: boolean;
  urls: WebhookUrl[];
  sharedSecret?: string;
  /** Omitted = 'classic'. */
  mode?: DestinationMode;
  /** Omitted = none. At most 5. */
  mappings?: ActionsMapping[];
  /** `whsec_` + base64 key: adds the Standard Webhooks headers to Classic and Actions requests. */
  standardWebhooksSecret?: string;
}

export interface Source {
  id: string;
  name: string;
  writeKey: string;
  createdAt: string;
  webhooks: WebhookSettings;
  /** Fault injection on the way in (shared/collector-faults.ts); null when none. In memory only. */
  collectorFaults: CollectorFaults | null;
  /** The current version of each secret (kept once, versioned: README, Decisions); absent or null = none. Read-only. */
  secretVersions?: { sharedSecret?: SecretVersion | null; standardWebhooksSecret?: SecretVersion | null };
}

/** One version of a source's secret (the secret itself is in its webhooks). */
export interface SecretVersion {
  /** 1, 2, …: each change of the secret is a new version. */
  version: number;
  createdAt: string;
  /** Made by a rotation: until createdAt + the secretRotationWindowMs setting, Standard Webhooks requests carry the previous version's signature too. */
  rotated: boolean;
}

/** The settings' types come from their one declaration, the API's output schema (settings.output.ts). */
export type Settings = z.output<typeof settingsOutput>;
export type RetrySchedule = Settings['retrySchedule'];
export type PayloadFormat = Settings['payloadFormat'];
/** Alias bodies' id keys: both spellings, only the documented `"Previous ID"`/`"User ID"`, or only `previousId`. */
export type AliasKeys = Settings['aliasKeys'];

/** What the collector stored for one call (one item of a batch is one call). */
export interface StoredCall {
  id: number;
  sourceId: string | null;
  sourceName: string | null;
  receivedAt: string;
  type: string;
  userId: string | null;
  anonymousId: string | null;
  /** event for track, name for page/screen. */
  label: string | null;
  messageId: string | null;
  status: CallStatus;
  dropReason: string | null;
  /**
   * The item exactly as the client sent it (before envelope merge); null when it nests deeper than
   * MAX_CALL_DEPTH (src/shared/nesting.ts), and then given as rawText instead.
   */
  raw: Json;
  /**
   * Only for an item nested deeper than MAX_CALL_DEPTH: its compact JSON text, which every reader
   * (HTTP, IPC, the inspector) can carry and show at any depth, where a value would overflow the stack.
   */
  rawText?: string;
  /** How it arrived: route, content type, how the write key was given, batch position. */
  request: RequestMeta;
  /** As it was when the call arrived (README, Decisions: normalize once); null when dropped as invalid. */
  normalized: NormalizedCall | null;
  /**
   * Why there is no normalized form although the call was not dropped as invalid: it was stored by a
   * newer build, with normalization rules this one does not have (it is shown as received only).
   */
  normalizedNote?: string;
}

export interface RequestMeta {
  path: string;
  contentType: string | null;
  userAgent: string | null;
  writeKeyFrom: 'basic' | 'body' | 'none';
  batchIndex: number | null;
  batchSize: number | null;
  /** Set when the body came compressed (`gzip`, `deflate`); the body kept is the decoded one. */
  contentEncoding?: string;
}

export type AttemptTrigger = 'scheduled' | 'manual' | 'replay' | 'probe';
export type AttemptOutcome = 'success' | 'retryable' | 'failed';
export type { TlsErrorKind } from './tls-codes';

export interface Attempt {
  id: number;
  deliveryId: number;
  round: number;
  urlIndex: number;
  url: string;
  /** The HTTP method it was sent with: its delivery's (Classic: POST; Actions: the mapping's). */
  method: ActionsMethod;
  trigger: AttemptTrigger;
  startedAt: string;
  durationMs: number;
  requestHeaders: Record<string, string>;
  /**
   * Present only when the attempt sent other bytes than its delivery's `body` (a replay with an
   * edited body, a probe's tampered request): those exact bytes, as UTF-8 text. Otherwise it sent
   * its delivery's body, which a call's detail carries once (shared/attempt-body.ts `sentBody`).
   */
  requestBody?: string;
  signature: string | null;
  responseStatus: number | null;
  responseHeaders: Record<string, string> | null;
  responseBody: string | null;
  responseTruncated: boolean;
  errorCode: string | null;
  errorMessage: string | null;
  timedOut: boolean;
  /** The time limit that was hit (ms), when the attempt timed out; null otherwise. */
  timeoutMs: number | null;
  /** A certificate or handshake failure: the code (errorCode) and its kind; null otherwise. */
  tlsError: { code: string; kind: TlsErrorKind } | null;
  /** No HTTP response because the connection failed or broke before one (ECONNREFUSED, ENOTFOUND, ECONNRESET…); null otherwise. */
  connectError: { code: string } | null;
  outcome: AttemptOutcome;
  /** Where the time went; null when the request never had a connection, or for attempts made before v9. */
  timing: AttemptTiming | null;
  /**
   * A scheduled attempt: where it started in the delivery's simulated time, in ms from its first
   * attempt (the retry schedule's clock, warped by the time-warp setting). Absent for manual attempts,
   * replays, probes and attempts made before it was kept.
   */
  simOffsetMs?: number;
}

/**
 * One attempt's time split (ms, to 0.1 ms), as the HTTP sender measures it. connectMs and tlsMs are
 * null when the request went out on a kept-alive connection an earlier request opened (reused), and
 * tlsMs for http. ttfbMs counts from the start of the attempt (any wait for a connection, connect and
 * TLS included) to the response's first byte, so connectMs + tlsMs ≤ ttfbMs ≤ totalMs.
 */
export interface AttemptTiming {
  connectMs: number | null;
  tlsMs: number | null;
  ttfbMs: number | null;
  totalMs: number;
  reused: boolean;
}

export interface Delivery {
  id: number;
  callId: number;
  sourceId: string;
  type: OutboundType;
  state: DeliveryState;
  urls: WebhookUrl[];
  /** Round number of the last attempt (0 before any). */
  round: number;
  attemptCount: number;
  /** Real (wall-clock) time of the next scheduled round. */
  nextAttemptAt: string | null;
  /** Simulated time offset of the next round since the first attempt (time-warp view). */
  nextAttemptSimOffsetMs: number | null;
  firstAttemptAt: string | null;
  lastAttemptAt: string | null;
  deliveredAt: string | null;
  lastError: string | null;
  /** Serialized once; every retry (and replay, unless edited) sends these bytes: its attempts do not repeat them. */
  body: string;
  /** Which request it is: the Classic destination's, or one Webhooks (Actions) mapping's. */
  kind: DeliveryKind;
  /** The Actions mapping's name; null for Classic. */
  mapping: string | null;
  /** HTTP method every attempt uses (Classic: always POST). */
  method: ActionsMethod;
  /** Calls it carries: 1, or a batch's size. */
  itemCount: number;
  /** An Actions batch's member calls, in array order (callId is the first); absent otherwise. */
  callIds?: number[];
  /**
   * Present when `body` is cut (an Actions batch over 64 KB, in a call's detail): `body` is then a JSON
   * array of the batch's first `shownItems` items (what each attempt that sent it unedited is shown
   * with). Page through every item with getBatchItems.
   */
  bodyTruncated?: { bytes: number; items: number; shownItems: number };
  /** Standard Webhooks `webhook-id`, fixed at creation; null when the source had no standardWebhooksSecret. */
  swId: string | null;
  /** The version of the source's Standard Webhooks secret it signs with (Source.secretVersions); null when none or unknown. */
  swVersion?: number | null;
}

/**
 * A delivery's progress fields as a recorded round left them: sent with each `attempt.recorded` event,
 * so the open detail is patched from the event (src/renderer/stores/detail-patch.ts), not read again.
 */
export type DeliveryProgress = Pick<
  Delivery,
  'state' | 'round' | 'attemptCount' | 'nextAttemptAt' | 'nextAttemptSimOffsetMs' | 'firstAttemptAt' | 'lastAttemptAt' | 'deliveredAt' | 'lastError'
>;

export type DeliveryKind = 'classic' | 'actions';

/** A page of an Actions batch's items (getBatchItems): each item's exact JSON text in the body sent. */
export interface BatchItemsPage {
  deliveryId: number;
  offset: number;
  /** Items in the batch. */
  total: number;
  /** From `offset`, in array order; fewer than asked near the end, or when a page reaches 1 MB. */
  items: { item: number; callId: number; data: string }[];
}

export interface CallDetail {
  call: StoredCall;
  /** The same per-URL outcomes as the call's summary. */
  urls: UrlOutcome[];
  deliveries: (Delivery & { attempts: Attempt[] })[];
  /**
   * What its source's tracking plan found when the call arrived (kept as it was then; docs/tracking-plans.md):
   * [] when checked and clean, null when the source had no plan.
   */
  violations: Violation[] | null;
  /** The plan it was checked against, and what enforcement did (blocked reason, omitted properties); null when not checked. */
  planCheck: { planId: string; planName: string | null; blocked: string | null; omitted: string[] } | null;
  /** Why it was or was not forwarded to Webhooks (shared/forwarding.ts): the one source of that sentence. */
  forwarding: Forwarding;
}

export interface Page<T> {
  items: T[];
  total: number;
  /** Cursor for the next page (pass as `before`), null at the end. */
  next: number | null;
}

export type { StorageState } from './health.output';
