import type { CallStatus, CallSummary, DeliveryState, UrlOutcome, WebhookUrl } from '../../../shared/types';
import { formatTimestamp } from '../../../shared/timestamp';
import { combinedState } from '../../../shared/url-outcome';
import { answeredCount, hasUrlOut, urlOutcomes, type InFlightRound, type StoredUrlState } from './url-states';

// The one builder of a call's summary (the inspector's list row, the calls.stored event): used for a
// call just stored (arrivals.ts, from what was written) and for one read back (calls.repo.ts, from
// its row), so the list never shows a call differently after a reload.

/** What a summary shows of the call itself: the fields of its row (NewCall has them all). */
export interface SummaryCall {
  sourceId: string | null;
  /** Epoch ms. */
  receivedAt: number;
  type: string;
  userId: string | null;
  anonymousId: string | null;
  label: string | null;
  messageId: string | null;
  groupId?: string | null;
  previousId?: string | null;
  status: CallStatus;
  dropReason: string | null;
  /** Tracking plan violations (null: not checked). */
  violations?: number | null;
}

/** What it shows of the call's delivery (an ActiveDelivery just made has it all but latency). */
export interface SummaryDelivery {
  id: number;
  state: DeliveryState;
  attemptCount: number;
  /** Epoch ms of the next scheduled round. */
  nextAttemptAt: number | null;
  urls: WebhookUrl[];
  /** null: no attempt yet (every URL pending). */
  urlStates: StoredUrlState[] | null;
  lastDurationMs?: number | null;
}

/**
 * A dropped call shows dropped; a delivery with a URL out now shows in flight, without a next
 * attempt time, and its URLs with the rounds out laid over their stored states.
 */
export function callSummary(id: number, c: SummaryCall, sourceName: string | null, d: SummaryDelivery | null, rounds: Set<InFlightRound> | undefined): CallSummary {
  const out = hasUrlOut(rounds);
  // Spelled out, not spread: this runs for every call the collector stores.
  return {
    id,
    receivedAt: formatTimestamp(c.receivedAt),
    sourceId: c.sourceId,
    sourceName,
    type: c.type,
    userId: c.userId,
    anonymousId: c.anonymousId,
    label: c.label,
    messageId: c.messageId,
    groupId: c.groupId ?? null,
    previousId: c.previousId ?? null,
    status: c.status,
    dropReason: c.dropReason,
    deliveryState: c.status === 'dropped' ? 'dropped' : d === null ? null : out ? 'in_flight' : d.state,
    deliveryId: d === null ? null : d.id,
    // A URL that answered while its round is still out counts at once (the round records it when it ends).
    attemptCount: d === null ? 0 : d.attemptCount + answeredCount(rounds),
    nextAttemptAt: d !== null && d.nextAttemptAt !== null && d.state === 'retrying' && !out ? formatTimestamp(d.nextAttemptAt) : null,
    latencyMs: d?.lastDurationMs ?? null,
    urls: d === null ? [] : urlOutcomes(d.urls, d.urlStates, rounds),
    violations: c.violations ?? null,
  };
}

/** The columns a summary is read from: the call's own and its delivery's (d_*), by a LEFT JOIN. */
export const SUMMARY_COLUMNS = `c.id, c.source_key, c.received_at, c.type, c.user_id, c.anonymous_id, c.label, c.message_id,
  c.group_id, c.previous_id, c.status, c.drop_reason, d.id AS d_id, d.state AS d_state, d.attempt_count AS d_attempts,
  d.next_attempt_at AS d_next, d.last_duration_ms AS d_latency, d.urls AS d_urls, d.url_states AS d_url_states,
  COALESCE((SELECT v.count FROM call_violations v WHERE v.call_id = c.id),
    CASE WHEN c.status != 'dropped' AND EXISTS (SELECT 1 FROM checked_requests q WHERE q.request_id = c.request_id) THEN 0 END) AS violations`;

/** The columns of a call row a summary reads (call-record.ts reads them and more). */
export interface CallRowColumns {
  id: number;
  source_key: number | null;
  received_at: number;
  type: string;
  user_id: string | null;
  anonymous_id: string | null;
  label: string | null;
  message_id: string | null;
  group_id: string | null;
  previous_id: string | null;
  status: CallStatus;
  drop_reason: string | null;
}

export interface SummaryRow extends CallRowColumns {
  d_id: number | null;
  d_state: DeliveryState | null;
  d_attempts: number | null;
  d_next: number | null;
  d_latency: number | null;
  d_urls: string | null;
  d_url_states: string | null;
  /** Tracking plan violations (call_violations.count); null when the call was not checked. */
  violations: number | null;
}

/** A summary read back: the source's id and name resolved by the caller, with the delivery's rounds in flight. */
export function summaryOfRow(r: SummaryRow, sourceId: string | null, sourceName: string | null, rounds: Set<InFlightRound> | undefined): CallSummary {
  const call: SummaryCall = {
    sourceId,
    receivedAt: r.received_at,
    type: r.type,
    userId: r.user_id,
    anonymousId: r.anonymous_id,
    label: r.label,
    messageId: r.message_id,
    groupId: r.group_id,
    previousId: r.previous_id,
    status: r.status,
    dropReason: r.drop_reason,
    violations: r.violations,
  };
  const delivery: SummaryDelivery | null =
    r.d_id === null
      ? null
      : {
          id: r.d_id,
          state: r.d_state!,
          attemptCount: r.d_attempts ?? 0,
          nextAttemptAt: r.d_next,
          urls: JSON.parse(r.d_urls!) as WebhookUrl[],
          urlStates: r.d_url_states === null ? null : (JSON.parse(r.d_url_states) as StoredUrlState[]),
          lastDurationMs: r.d_latency,
        };
  return callSummary(r.id, call, sourceName, delivery, rounds);
}

/** One Actions request a call is part of (a delivery, or its place in a batch still waiting), for its summary. */
export interface ActionsPart {
  /** null while waiting in its batch. */
  deliveryId: number | null;
  /** The delivery's state ('pending' while waiting), in flight when a round is out. */
  state: DeliveryState;
  attemptCount: number;
  nextAttemptAt: number | null;
  /** Its `urls` entry, with `via`. */
  outcome: UrlOutcome;
}

/**
 * A summary with its call's Actions parts: their outcomes after the Classic URLs; for a call with no
 * Classic delivery, its delivery state, id, attempts and next attempt are the Actions parts' combined.
 */
export function withActions(s: CallSummary, parts: readonly ActionsPart[]): CallSummary {
  if (parts.length === 0) return s;
  for (const p of parts) s.urls.push(p.outcome);
  if (s.deliveryId === null && s.status === 'accepted') {
    const state = combinedState(parts);
    s.deliveryState = state;
    s.deliveryId = parts.find((p) => p.deliveryId !== null)?.deliveryId ?? null;
    let attempts = 0;
    let next: number | null = null;
    for (const p of parts) {
      attempts += p.attemptCount;
      if (p.state === 'retrying' && p.nextAttemptAt !== null && (next === null || p.nextAttemptAt < next)) next = p.nextAttemptAt;
    }
    s.attemptCount = attempts;
    s.nextAttemptAt = state === 'retrying' && next !== null ? formatTimestamp(next) : null;
  }
  return s;
}
