import type { Attempt, AttemptOutcome, AttemptTiming, AttemptTrigger, Delivery, DeliveryState, OutboundType, WebhookUrl } from '../../../shared/types';
import type { Db } from './database';
import { canceledUrlStates, decodeUrlStates, urlMask, type StoredUrlState } from './url-states';

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

interface DeliveryRow {
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
}

const iso = (ms: number | null) => (ms == null ? null : new Date(ms).toISOString());

export class DeliveriesRepo {
  private readonly insertStmt;
  private readonly updateStmt;
  private readonly stateStmt;
  private readonly attemptStmt;
  private readonly byCallStmt;
  private readonly byIdStmt;
  private readonly attemptsStmt;
  private readonly dueStmt;
  private readonly attemptTimesStmt;
  private readonly attemptsByIdStmt;

  constructor(private readonly db: Db) {
    this.insertStmt = db.prepare(
      `INSERT INTO deliveries (call_id, source_id, type, state, urls, pending_urls, body, user_agent, signature) VALUES (?, ?, ?, 'pending', ?, ?, ?, ?, ?)`,
    );
    this.updateStmt = db.prepare(`UPDATE deliveries SET state = @state, pending_urls = @pendingUrls, round = @round,
      attempt_count = @attemptCount, next_attempt_at = @nextAttemptAt, next_sim_offset_ms = @nextSimOffsetMs,
      sim_elapsed_ms = @simElapsedMs, first_attempt_at = @firstAttemptAt, last_attempt_at = @lastAttemptAt,
      last_duration_ms = @lastDurationMs, delivered_at = @deliveredAt, last_error = @lastError,
      url_states = @urlStates, url_mask = @urlMask WHERE id = @id`);
    // Never over a cancel: a round's "in flight" write may reach the queue after the source was deleted.
    this.stateStmt = db.prepare("UPDATE deliveries SET state = ? WHERE id = ? AND state != 'canceled'");
    this.attemptStmt = db.prepare(`INSERT INTO attempts (delivery_id, round, url_index, url, trigger, started_at, duration_ms,
      request_headers, body, signature, response_status, response_headers, response_body, response_truncated, error_code,
      error_message, timed_out, outcome, connect_ms, tls_ms, ttfb_ms, total_ms, conn_reused)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.byCallStmt = db.prepare('SELECT * FROM deliveries WHERE call_id = ?');
    this.byIdStmt = db.prepare('SELECT * FROM deliveries WHERE id = ?');
    this.attemptsStmt = db.prepare('SELECT * FROM attempts WHERE delivery_id = ? ORDER BY id');
    this.dueStmt = db.prepare("SELECT * FROM deliveries WHERE state = 'retrying' AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?");
    this.attemptTimesStmt = db.prepare(
      'SELECT a.started_at, a.id FROM attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE d.call_id IN (SELECT value FROM json_each(?))',
    ).raw();
    this.attemptsByIdStmt = db.prepare(`SELECT a.*, d.body AS d_body, d.call_id, c.message_id FROM attempts a
      JOIN deliveries d ON d.id = a.delivery_id JOIN calls c ON c.id = d.call_id WHERE a.id IN (SELECT value FROM json_each(?))`);
  }

  insert(callId: number, sourceId: string, type: OutboundType, plan: NewDelivery): number {
    const pending = JSON.stringify(plan.urls.map((_, i) => i));
    return Number(this.insertStmt.run(callId, sourceId, type, JSON.stringify(plan.urls), pending, plan.body, plan.userAgent, plan.signature).lastInsertRowid);
  }

  /** False when the delivery is gone (its call purged while an attempt was out). */
  update(u: DeliveryUpdate): boolean {
    return this.updateStmt.run({ ...u, pendingUrls: JSON.stringify(u.pendingUrls), urlStates: JSON.stringify(u.urlStates), urlMask: urlMask(u.urlStates) }).changes > 0;
  }

  setState(id: number, state: DeliveryState): void {
    this.stateStmt.run(state, id);
  }

  /**
   * Ends a source's unfinished deliveries as canceled (SPEC §4: its source was deleted or its
   * Webhooks turned off); a round already out is recorded when it ends, but never retried. Returns
   * the deliveries changed, with their calls. Run it inside a write job.
   */
  cancelUnfinished(sourceId: string, reason: string): CanceledDelivery[] {
    return this.cancel(
      this.db
        .prepare("SELECT id, call_id, urls, url_states FROM deliveries WHERE source_id = ? AND state IN ('pending', 'in_flight', 'retrying')")
        .all(sourceId) as CancelRow[],
      reason,
    );
  }

  /**
   * The same for at most `limit` unfinished deliveries of calls up to this id (clearing the calls):
   * the caller repeats it, one small write job each, until it returns fewer than `limit`.
   */
  cancelUnfinishedUpTo(maxCallId: number, reason: string, limit: number): CanceledDelivery[] {
    return this.cancel(
      this.db
        .prepare("SELECT id, call_id, urls, url_states FROM deliveries WHERE call_id <= ? AND state IN ('pending', 'in_flight', 'retrying') LIMIT ?")
        .all(maxCallId, limit) as CancelRow[],
      reason,
    );
  }

  private cancel(rows: CancelRow[], reason: string): CanceledDelivery[] {
    const set = this.db.prepare(
      "UPDATE deliveries SET state = 'canceled', pending_urls = '[]', next_attempt_at = NULL, next_sim_offset_ms = NULL, last_error = ?, url_states = ?, url_mask = ? WHERE id = ?",
    );
    for (const r of rows) {
      const states = canceledUrlStates(decodeUrlStates(r.url_states, (JSON.parse(r.urls) as unknown[]).length));
      set.run(reason, JSON.stringify(states), urlMask(states), r.id);
    }
    return rows.map((r) => ({ deliveryId: r.id, callId: r.call_id }));
  }

  insertAttempt(a: NewAttempt): number {
    return Number(
      this.attemptStmt.run(
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
      ).lastInsertRowid,
    );
  }

  activeForCall(callId: number): ActiveDelivery | undefined {
    const row = this.byCallStmt.get(callId) as DeliveryRow | undefined;
    return row && toActive(row);
  }

  active(id: number): ActiveDelivery | undefined {
    const row = this.byIdStmt.get(id) as DeliveryRow | undefined;
    return row && toActive(row);
  }

  /** Deliveries to resume at start: never finished, including those in flight when the process stopped. */
  unfinished(): ActiveDelivery[] {
    return (this.db.prepare("SELECT * FROM deliveries WHERE state IN ('pending', 'in_flight', 'retrying')").all() as DeliveryRow[]).map(toActive);
  }

  due(now: number, limit: number): ActiveDelivery[] {
    return (this.dueStmt.all(now, limit) as DeliveryRow[]).map(toActive);
  }

  nextDueAt(): number | null {
    const r = this.db.prepare("SELECT MIN(next_attempt_at) AS t FROM deliveries WHERE state = 'retrying'").get() as { t: number | null };
    return r.t;
  }

  countUnfinished(): number {
    return (this.db.prepare("SELECT COUNT(*) AS n FROM deliveries WHERE state IN ('pending', 'in_flight', 'retrying')").get() as { n: number }).n;
  }

  /** Time-warp changed: stretch or shrink the real wait of every scheduled retry. */
  rescale(now: number, factor: number): void {
    this.db
      .prepare("UPDATE deliveries SET next_attempt_at = ? + CAST(MAX(0, next_attempt_at - ?) * ? AS INTEGER) WHERE state = 'retrying'")
      .run(now, now, factor);
  }

  /**
   * The attempts of these calls' deliveries, as [startedAt, attemptId] pairs (unordered): what a HAR
   * export sorts by, found without reading the attempts themselves. Ids go in as one json_each
   * parameter, so a caller passes them in chunks of a few thousand.
   */
  attemptTimes(callIds: number[]): [number, number][] {
    return this.attemptTimesStmt.all(JSON.stringify(callIds)) as [number, number][];
  }

  /** Attempts by id, each with its call's id and messageId; an attempt deleted meanwhile is absent. */
  attemptsById(ids: number[]): Map<number, { attempt: Attempt; callId: number; messageId: string | null }> {
    const out = new Map<number, { attempt: Attempt; callId: number; messageId: string | null }>();
    for (const r of this.attemptsByIdStmt.all(JSON.stringify(ids)) as (AttemptRow & { d_body: Buffer; call_id: number; message_id: string | null })[]) {
      out.set(r.id, { attempt: toAttempt(r, r.d_body.toString('utf8')), callId: r.call_id, messageId: r.message_id });
    }
    return out;
  }

  forCall(callId: number): (Delivery & { attempts: Attempt[] })[] {
    const row = this.byCallStmt.get(callId) as DeliveryRow | undefined;
    if (!row) return [];
    const body = row.body.toString('utf8');
    const attempts = (this.attemptsStmt.all(row.id) as AttemptRow[]).map((a) => toAttempt(a, body));
    return [{ ...toDelivery(row, body), attempts }];
  }


}

export interface CanceledDelivery {
  deliveryId: number;
  callId: number;
}

interface CancelRow {
  id: number;
  call_id: number;
  urls: string;
  url_states: string | null;
}

interface AttemptRow {
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
}

/** The API shape of an attempt just written (same as toAttempt of its row). */
export function recordedAttempt(a: NewAttempt, id: number, deliveryBody: Buffer): Attempt {
  return {
    id,
    deliveryId: a.deliveryId,
    round: a.round,
    urlIndex: a.urlIndex,
    url: a.url,
    trigger: a.trigger,
    startedAt: new Date(a.startedAt).toISOString(),
    durationMs: a.durationMs,
    requestHeaders: a.requestHeaders,
    requestBody: (a.body ?? deliveryBody).toString('utf8'),
    signature: a.signature,
    responseStatus: a.responseStatus,
    responseHeaders: a.responseHeaders,
    responseBody: a.responseBody,
    responseTruncated: a.responseTruncated,
    errorCode: a.errorCode,
    errorMessage: a.errorMessage,
    timedOut: a.timedOut,
    outcome: a.outcome,
    timing: a.timing,
  };
}

export function toAttempt(a: AttemptRow, deliveryBody: string): Attempt {
  return {
    id: a.id,
    deliveryId: a.delivery_id,
    round: a.round,
    urlIndex: a.url_index,
    url: a.url,
    trigger: a.trigger,
    startedAt: new Date(a.started_at).toISOString(),
    durationMs: a.duration_ms,
    requestHeaders: JSON.parse(a.request_headers),
    requestBody: a.body ? a.body.toString('utf8') : deliveryBody,
    signature: a.signature,
    responseStatus: a.response_status,
    responseHeaders: a.response_headers ? JSON.parse(a.response_headers) : null,
    responseBody: a.response_body,
    responseTruncated: a.response_truncated === 1,
    errorCode: a.error_code,
    errorMessage: a.error_message,
    timedOut: a.timed_out === 1,
    outcome: a.outcome,
    // Written with the attempt since v9 (total_ms set whenever the request had a connection).
    timing:
      a.total_ms === null || a.total_ms === undefined
        ? null
        : { connectMs: a.connect_ms, tlsMs: a.tls_ms, ttfbMs: a.ttfb_ms, totalMs: a.total_ms, reused: a.conn_reused === 1 },
  };
}

function toActive(r: DeliveryRow): ActiveDelivery {
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
  };
}

function toDelivery(r: DeliveryRow, body: string): Delivery {
  return {
    id: r.id,
    callId: r.call_id,
    sourceId: r.source_id,
    type: r.type,
    state: r.state,
    urls: JSON.parse(r.urls),
    round: r.round,
    attemptCount: r.attempt_count,
    nextAttemptAt: r.state === 'retrying' ? iso(r.next_attempt_at) : null,
    nextAttemptSimOffsetMs: r.state === 'retrying' ? r.next_sim_offset_ms : null,
    firstAttemptAt: iso(r.first_attempt_at),
    lastAttemptAt: iso(r.last_attempt_at),
    deliveredAt: iso(r.delivered_at),
    lastError: r.last_error,
    body,
  };
}
