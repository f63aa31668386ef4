import type { AttemptOutcome, AttemptTiming, AttemptTrigger, DeliveryState, OutboundType, WebhookUrl } from '../../../shared/types';
import type { StoredUrlState } from './url-states';

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
}

/** One attempt as the dispatcher records it (attempt-rows.ts writes it and builds its API shape). */
export interface NewAttempt {
  deliveryId: number;
  round: number;
  urlIndex: number;
  url: string;
  trigger: AttemptTrigger;
  startedAt: number;
  durationMs: number;
  requestHeaders: Record<string, string>;
  /** null when identical to the delivery's body. */
  body: Buffer | null;
  signature: string | null;
  responseStatus: number | null;
  responseHeaders: Record<string, string> | null;
  responseBody: string | null;
  responseTruncated: boolean;
  errorCode: string | null;
  errorMessage: string | null;
  timedOut: boolean;
  outcome: AttemptOutcome;
  timing: AttemptTiming | null;
}
