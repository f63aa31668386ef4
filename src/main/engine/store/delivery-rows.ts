import type { ActionsMethod, Delivery, DeliveryProgress, DeliveryState, OutboundType, WebhookUrl } from '../../../shared/types';
import { formatOptionalTimestamp } from '../../../shared/timestamp';
import { maskUrlPassword, maskUrlPasswordsIn } from '../../../shared/url-credentials';
import type { ActiveDelivery, DeliveryUpdate, NewActionsDelivery, NewDelivery } from './delivery.types';
import { decodeUrlStates } from './url-states';

// A `deliveries` row and the two shapes read from it: what the dispatcher runs (ActiveDelivery) and
// what the API shows (Delivery).

export interface DeliveryRow {
  id: number;
  call_id: number;
  source_id: string;
  type: OutboundType;
  state: DeliveryState;
  urls: string;
  pending_urls: string;
  round: number;
  attempt_count: number;
  next_attempt_at: number | null;
  next_sim_offset_ms: number | null;
  sim_elapsed_ms: number;
  first_attempt_at: number | null;
  last_attempt_at: number | null;
  last_duration_ms: number | null;
  delivered_at: number | null;
  last_error: string | null;
  body: Buffer;
  url_states: string | null;
  user_agent: string | null;
  signature: string | null;
  // Actions columns; absent (undefined) until the migration that adds them, null/default after.
  kind?: 'classic' | 'actions';
  method?: ActionsMethod;
  timeout_ms?: number | null;
  sw_id?: string | null;
  /** The source's Standard Webhooks secret version (source_secrets); the secret itself is never in the row. */
  sw_version?: number | null;
  mapping?: string | null;
  item_count?: number;
}

export function toActive(r: DeliveryRow): ActiveDelivery {
  const urls = JSON.parse(r.urls) as WebhookUrl[];
  return {
    id: r.id,
    callId: r.call_id,
    sourceId: r.source_id,
    type: r.type,
    state: r.state,
    urls,
    pendingUrls: JSON.parse(r.pending_urls),
    round: r.round,
    attemptCount: r.attempt_count,
    simElapsedMs: r.sim_elapsed_ms,
    firstAttemptAt: r.first_attempt_at,
    nextAttemptAt: r.next_attempt_at,
    body: r.body,
    urlStates: decodeUrlStates(r.url_states, urls.length),
    frozen: r.user_agent === null ? null : { userAgent: r.user_agent, signature: r.signature },
    kind: r.kind ?? 'classic',
    method: r.method ?? 'POST',
    timeoutMs: r.timeout_ms ?? null,
    standardWebhooks: r.sw_id ? { id: r.sw_id, version: r.sw_version ?? null } : null,
    mapping: r.mapping ?? null,
    itemCount: r.item_count ?? 1,
  };
}

/** The API's shape; callIds for a delivery carrying several calls (delivery_calls, in item order). A URL's password never leaves. */
export function toDelivery(r: DeliveryRow, body: string, callIds?: number[]): Delivery {
  return {
    id: r.id,
    callId: r.call_id,
    sourceId: r.source_id,
    type: r.type,
    state: r.state,
    urls: (JSON.parse(r.urls) as WebhookUrl[]).map((u) => ({ ...u, url: maskUrlPassword(u.url) })),
    round: r.round,
    attemptCount: r.attempt_count,
    nextAttemptAt: r.state === 'retrying' ? formatOptionalTimestamp(r.next_attempt_at) : null,
    nextAttemptSimOffsetMs: r.state === 'retrying' ? r.next_sim_offset_ms : null,
    firstAttemptAt: formatOptionalTimestamp(r.first_attempt_at),
    lastAttemptAt: formatOptionalTimestamp(r.last_attempt_at),
    deliveredAt: formatOptionalTimestamp(r.delivered_at),
    // It names the failing URLs (round.ts), passwords and all: masked like urls above.
    lastError: r.last_error === null ? null : maskUrlPasswordsIn(r.last_error),
    body,
    kind: r.kind ?? 'classic',
    mapping: r.mapping ?? null,
    method: r.method ?? 'POST',
    itemCount: r.item_count ?? 1,
    ...(callIds ? { callIds } : {}),
    swId: r.sw_id ?? null,
    swVersion: r.sw_id ? (r.sw_version ?? null) : null,
  };
}

/** The progress fields of toDelivery, from the update a round wrote (as toDelivery would read them back). */
export function progressOf(u: DeliveryUpdate): DeliveryProgress {
  return {
    state: u.state,
    round: u.round,
    attemptCount: u.attemptCount,
    nextAttemptAt: u.state === 'retrying' ? formatOptionalTimestamp(u.nextAttemptAt) : null,
    nextAttemptSimOffsetMs: u.state === 'retrying' ? u.nextSimOffsetMs : null,
    firstAttemptAt: formatOptionalTimestamp(u.firstAttemptAt),
    lastAttemptAt: formatOptionalTimestamp(u.lastAttemptAt),
    deliveredAt: formatOptionalTimestamp(u.deliveredAt),
    lastError: u.lastError === null ? null : maskUrlPasswordsIn(u.lastError),
  };
}

/**
 * A delivery just created, as the dispatcher runs it: the one place a new delivery's defaults are
 * written (pending, every URL pending, round 0, no attempt), and the object its row is written from
 * (delivery-ledger.ts), so the row read back (toActive) is the same delivery. The probe's requests,
 * sent before they are stored, start from it too.
 */
export function newActive(id: number, callId: number, sourceId: string, type: OutboundType, plan: NewDelivery | NewActionsDelivery): ActiveDelivery {
  const { urls, body, userAgent, signature } = plan;
  const actions = 'mapping' in plan;
  return {
    id,
    callId,
    sourceId,
    type,
    state: 'pending',
    urls,
    pendingUrls: urls.map((_, i) => i),
    round: 0,
    attemptCount: 0,
    simElapsedMs: 0,
    firstAttemptAt: null,
    nextAttemptAt: null,
    body,
    urlStates: urls.map(() => ['pending', null, 0]),
    frozen: { userAgent, signature },
    kind: actions ? 'actions' : 'classic',
    method: actions ? plan.method : 'POST',
    timeoutMs: actions ? plan.timeoutMs : null,
    standardWebhooks: plan.standardWebhooks,
    mapping: actions ? plan.mapping : null,
    itemCount: actions ? plan.callIds.length : 1,
  };
}
