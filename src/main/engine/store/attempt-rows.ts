import type { ActionsMethod, Attempt, AttemptOutcome, AttemptTrigger, TlsErrorKind } from '../../../shared/types';
import { formatTimestamp } from '../../../shared/timestamp';
import { maskUrlPassword } from '../../../shared/url-credentials';
import type { NewAttempt } from './delivery.types';

// An attempt between its three forms: what the dispatcher records (NewAttempt), its row in
// `attempts`, and what the API shows (Attempt). The API shape has one builder, attemptOf, used both
// for an attempt just written and for one read back, so the two can never differ.

/** The columns an attempt is written with (delivery-ledger.ts), in attemptParams' order. */
export const ATTEMPT_COLUMNS = `delivery_id, round, url_index, url, trigger, started_at, duration_ms,
  request_headers, body, signature, response_status, response_headers, response_body, response_truncated, error_code,
  error_message, timed_out, outcome, connect_ms, tls_ms, ttfb_ms, total_ms, conn_reused, timeout_ms, tls_kind, connect_error, sim_offset_ms`;

export interface AttemptRow {
  id: number;
  delivery_id: number;
  round: number;
  url_index: number;
  url: string;
  trigger: AttemptTrigger;
  started_at: number;
  duration_ms: number;
  request_headers: string;
  body: Buffer | null;
  signature: string | null;
  response_status: number | null;
  response_headers: string | null;
  response_body: string | null;
  response_truncated: number;
  error_code: string | null;
  error_message: string | null;
  timed_out: number;
  outcome: AttemptOutcome;
  connect_ms: number | null;
  tls_ms: number | null;
  ttfb_ms: number | null;
  total_ms: number | null;
  conn_reused: number | null;
  /** Since v16 (migration 16 filled them in for older attempts): the facts of how it failed. */
  timeout_ms: number | null;
  tls_kind: TlsErrorKind | null;
  connect_error: number | null;
  /** Since v25: a scheduled attempt's simulated offset (Attempt.simOffsetMs). */
  sim_offset_ms?: number | null;
}

/** An attempt's values, in ATTEMPT_COLUMNS' order. */
export function attemptParams(a: NewAttempt): unknown[] {
  return [
    a.deliveryId,
    a.round,
    a.urlIndex,
    a.url,
    a.trigger,
    a.startedAt,
    a.durationMs,
    JSON.stringify(a.requestHeaders),
    a.body,
    a.signature,
    a.responseStatus,
    a.responseHeaders ? JSON.stringify(a.responseHeaders) : null,
    a.responseBody,
    a.responseTruncated ? 1 : 0,
    a.errorCode,
    a.errorMessage,
    a.timedOut ? 1 : 0,
    a.outcome,
    a.timing?.connectMs ?? null,
    a.timing?.tlsMs ?? null,
    a.timing?.ttfbMs ?? null,
    a.timing?.totalMs ?? null,
    a.timing ? (a.timing.reused ? 1 : 0) : null,
    a.timeoutMs,
    a.tlsError?.kind ?? null,
    a.connectError ? 1 : 0,
    a.simOffsetMs ?? null,
  ];
}

/** A stored attempt as the dispatcher recorded it. */
export function attemptFromRow(a: AttemptRow): NewAttempt {
  return {
    deliveryId: a.delivery_id,
    round: a.round,
    urlIndex: a.url_index,
    url: a.url,
    trigger: a.trigger,
    startedAt: a.started_at,
    durationMs: a.duration_ms,
    requestHeaders: JSON.parse(a.request_headers),
    body: a.body,
    signature: a.signature,
    responseStatus: a.response_status,
    responseHeaders: a.response_headers ? JSON.parse(a.response_headers) : null,
    responseBody: a.response_body,
    responseTruncated: a.response_truncated === 1,
    errorCode: a.error_code,
    errorMessage: a.error_message,
    timedOut: a.timed_out === 1,
    // The codes are the attempt's errorCode; the row says which fact it is.
    timeoutMs: a.timed_out === 1 ? a.timeout_ms ?? null : null,
    tlsError: a.tls_kind && a.error_code ? { code: a.error_code, kind: a.tls_kind } : null,
    connectError: a.connect_error === 1 && a.error_code ? { code: a.error_code } : null,
    outcome: a.outcome,
    ...(a.sim_offset_ms === null || a.sim_offset_ms === undefined ? {} : { simOffsetMs: a.sim_offset_ms }),
    // Written with the attempt since v9 (total_ms set whenever the request had a connection).
    timing:
      a.total_ms === null || a.total_ms === undefined
        ? null
        : { connectMs: a.connect_ms, tlsMs: a.tls_ms, ttfbMs: a.ttfb_ms, totalMs: a.total_ms, reused: a.conn_reused === 1 },
  };
}

/** What an attempt takes from its delivery: the method. */
export interface AttemptDelivery {
  method: ActionsMethod;
}

/**
 * The API shape of an attempt. It carries a request body only when it sent other bytes than its
 * delivery's (a replay with an edited body: the row's body is NULL otherwise, round.ts); the
 * delivery's body is sent once, on the delivery (shared/attempt-body.ts). Its method is always the
 * delivery's (every attempt of a delivery, replays too, goes out with it: round.ts).
 */
export function attemptOf(id: number, a: NewAttempt, delivery: AttemptDelivery): Attempt {
  return {
    id,
    deliveryId: a.deliveryId,
    round: a.round,
    urlIndex: a.urlIndex,
    url: maskUrlPassword(a.url),
    method: delivery.method,
    trigger: a.trigger,
    startedAt: formatTimestamp(a.startedAt),
    durationMs: a.durationMs,
    requestHeaders: a.requestHeaders,
    ...(a.body ? { requestBody: a.body.toString('utf8') } : {}),
    signature: a.signature,
    responseStatus: a.responseStatus,
    responseHeaders: a.responseHeaders,
    responseBody: a.responseBody,
    responseTruncated: a.responseTruncated,
    ...(a.simOffsetMs === undefined ? {} : { simOffsetMs: a.simOffsetMs }),
    errorCode: a.errorCode,
    errorMessage: a.errorMessage,
    timedOut: a.timedOut,
    timeoutMs: a.timeoutMs,
    tlsError: a.tlsError,
    connectError: a.connectError,
    outcome: a.outcome,
    timing: a.timing,
  };
}

/** An attempt read back from its row, with its delivery's method (rows made before Actions: POST). */
export function attemptOfRow(r: AttemptRow, delivery: { method: ActionsMethod | undefined }): Attempt {
  return attemptOf(r.id, attemptFromRow(r), { method: delivery.method ?? 'POST' });
}
