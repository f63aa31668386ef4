import type { ActionsMethod, Attempt, DeliveryState, OutboundType, UrlState, WebhookUrl } from '../../../shared/types';

/** A URL's stored outcome (url-states.ts): its state, its last answer's status, its attempts. */
export type StoredUrlState = [state: Exclude<UrlState, 'in_flight'>, lastStatus: number | null, attempts: number];

// The shapes the dispatcher and the store exchange about deliveries and attempts (the rows behind
// them: delivery-rows.ts, attempt-rows.ts).

/** The request a delivery sends on every scheduled attempt, besides its URLs' own headers. */
export interface FrozenRequest {
  userAgent: string;
  /** X-Signature of the body; null when the source had no secret. */
  signature: string | null;
}

/** Everything a new delivery carries (DESIGN: a retry is the same request). */
export interface NewDelivery extends FrozenRequest {
  urls: WebhookUrl[];
  /** Serialized once; every attempt sends these exact bytes. */
  body: Buffer;
  /** Standard Webhooks id and the version of the source's secret it signs with; null when the source had no standardWebhooksSecret. */
  standardWebhooks: StandardWebhooksRef | null;
}

/**
 * A delivery's Standard Webhooks: its webhook-id (fixed at creation) and the version of its source's
 * secret each attempt signs with (source-secrets.ts), never the secret itself; version null for a
 * request signed with a secret the lab does not keep (the probe's).
 */
export interface StandardWebhooksRef {
  id: string;
  version: number | null;
}

/**
 * The secrets an attempt signs webhook-signature with, for its source and secret version at a time
 * (the store's SourceSecrets.signingSecrets, with the rotation window setting; the probe's own secret).
 */
export type SigningSecrets = (sourceId: string, version: number | null, now: number) => string[];

/**
 * An Actions mapping's delivery: one URL (the mapping's, with Segment's and the mapping's headers,
 * lowercased as they go out), the mapping's method and timeout, X-Signature (frozen) over the first
 * item's data (shared/actions/request.ts).
 */
export interface NewActionsDelivery extends NewDelivery {
  mapping: string;
  method: ActionsMethod;
  timeoutMs: number;
  /** The calls it carries, in body order (one unless a batch); the first is the row's call_id. */
  callIds: number[];
  /**
   * Set when the request is never sent (its call's mapped data passed MAX_MAPPED_BODY_BYTES): the
   * delivery is stored failed, with this as its error, and never reaches the dispatcher.
   */
  notSent?: string;
}

/** A call waiting in its mapping's batch (actions_batch_items). */
export interface NewBatchItem {
  mapping: string;
  /** JSON of the call's mapped data (`null` when it resolved to nothing, as the batch array writes it). */
  data: string;
  /** JSON of the url and headers the mapping's directives resolved to for this call; '' = the mapping's own (literal). */
  target: string;
}

/** A batch item read back. */
export interface QueuedBatchItem {
  id: number;
  sourceId: string;
  mapping: string;
  callId: number;
  data: string;
  /** As NewBatchItem's: '' = the mapping's literal URL and headers. */
  target: string;
  queuedAt: number;
  /** Its call's type (the first item's is the batch delivery's). */
  callType: string;
}

/** What the dispatcher needs in memory to run a delivery's next round. */
export interface ActiveDelivery {
  id: number;
  callId: number;
  sourceId: string;
  type: OutboundType;
  state: DeliveryState;
  urls: WebhookUrl[];
  pendingUrls: number[];
  round: number;
  attemptCount: number;
  simElapsedMs: number;
  firstAttemptAt: number | null;
  nextAttemptAt: number | null;
  body: Buffer;
  /** Each URL's outcome so far (url-states.ts). */
  urlStates: StoredUrlState[];
  /** User-Agent and signature fixed at creation, which every scheduled attempt sends; null for deliveries made before v7. */
  frozen: FrozenRequest | null;
  /** Classic (one body to the source's URLs) or Actions (one mapping's request); 'classic' for rows made before Actions. */
  kind: 'classic' | 'actions';
  /** The HTTP method every attempt uses; POST for Classic. */
  method: ActionsMethod;
  /** Whole-attempt budget; null = the retry schedule's (the settings' preset). */
  timeoutMs: number | null;
  /** Standard Webhooks: webhook-id fixed at creation and the secret version each attempt signs with; null when the source had none. */
  standardWebhooks: StandardWebhooksRef | null;
  /** The Actions mapping's name; null for Classic. */
  mapping: string | null;
  /** Calls carried: 1 unless an Actions batch. */
  itemCount: number;
}

export interface DeliveryUpdate {
  id: number;
  state: DeliveryState;
  pendingUrls: number[];
  round: number;
  attemptCount: number;
  nextAttemptAt: number | null;
  nextSimOffsetMs: number | null;
  simElapsedMs: number;
  firstAttemptAt: number | null;
  lastAttemptAt: number | null;
  lastDurationMs: number | null;
  deliveredAt: number | null;
  lastError: string | null;
  urlStates: StoredUrlState[];
}

export interface CanceledDelivery {
  deliveryId: number;
  callId: number;
  /** Calls carried: more than 1 for an Actions batch (its members: DeliveriesRepo.callsOf). */
  itemCount: number;
}

/**
 * One attempt as the dispatcher records it (attempt-rows.ts writes it and builds its API shape): the
 * API's Attempt before it has an id, its start in epoch ms, its body as bytes — null when identical to
 * the delivery's — and its method read from the delivery.
 */
export interface NewAttempt extends Omit<Attempt, 'id' | 'startedAt' | 'requestBody' | 'method'> {
  startedAt: number;
  body: Buffer | null;
}
