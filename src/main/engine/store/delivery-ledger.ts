import type { OutboundType } from '../../../shared/types';
import type { Db } from './database';
import { ownTransaction, type WriteTx } from './write-queue';
import type { ActionsLedger } from './actions-ledger';
import { ATTEMPT_COLUMNS, attemptParams } from './attempt-rows';
import { decodeUrlStates, urlMask, type StoredUrlState } from './url-states';
import { bornForReplay, canceledFields, OUT_STATE, transition } from './delivery-transition';
import { newActive, toActive, type DeliveryRow } from './delivery-rows';
import type { ActiveDelivery, CanceledDelivery, DeliveryUpdate, NewActionsDelivery, NewAttempt, NewBatchItem, NewDelivery } from './delivery.types';
import { UNFINISHED_SQL } from './delivery-states';

// The delivery ledger (issue 27: one delivery lifecycle): every write to `deliveries`, `attempts`,
// `delivery_calls` and `actions_batch_items` is one of the named operations below, whoever asks —
// arrivals, the Actions batcher, the dispatcher's rounds and lanes, replay and bulk retries, the
// probe, a canceled source, clearing and erasing calls. A delivery is created here (with its one set
// of defaults: `newActive`), scheduled (in flight, parked, claimed, rescaled), finished (a round
// recorded with its attempts) and canceled here; nothing else holds SQL that writes those tables
// (tests/unit/core-sql-ownership.test.ts). Reads stay in deliveries.repo.ts and actions-ledger.ts.

/** The tables only this module writes (tests/unit/core-sql-ownership.test.ts; migrations.ts aside). */
export const LEDGER_TABLES = ['deliveries', 'attempts', 'delivery_calls', 'actions_batch_items'] as const;

/** Which unfinished deliveries a cancel ends. */
const UNFINISHED = `state IN ${UNFINISHED_SQL}`;

export class DeliveryLedger {
  private readonly insertStmt;
  private readonly insertClassicStmt;
  private readonly linkStmt;
  private readonly updateStmt;
  private readonly inFlightStmt;
  private readonly attemptStmt;
  private readonly cancelStmt;
  private readonly queueStmt;
  private readonly unqueueStmt;
  private readonly unqueueUpToStmt;
  private readonly eraseStmts;

  constructor(
    private readonly db: Db,
    private readonly actions: ActionsLedger,
  ) {
    // Written from the object the dispatcher is handed (newActive). A Classic row leaves kind, mapping,
    // method, timeout and item count to the columns' defaults, which are newActive's for Classic
    // (delivery-ledger.test.ts reads each kind back): five values fewer to bind per forwarded call.
    this.insertClassicStmt = db.prepare(`INSERT INTO deliveries (call_id, source_id, type, state, urls, pending_urls, body, user_agent, signature,
      sw_id, sw_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.insertStmt = db.prepare(`INSERT INTO deliveries (call_id, source_id, type, state, urls, pending_urls, body, user_agent, signature,
      sw_id, sw_version, kind, mapping, method, timeout_ms, item_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.linkStmt = db.prepare('INSERT INTO delivery_calls (delivery_id, call_id, item) VALUES (?, ?, ?)');
    this.updateStmt = db.prepare(`UPDATE deliveries SET state = @state, pending_urls = @pendingUrls, round = @round,
      attempt_count = @attemptCount, next_attempt_at = @nextAttemptAt, next_sim_offset_ms = @nextSimOffsetMs,
      sim_elapsed_ms = @simElapsedMs, first_attempt_at = @firstAttemptAt, last_attempt_at = @lastAttemptAt,
      last_duration_ms = @lastDurationMs, delivered_at = @deliveredAt, last_error = @lastError,
      url_states = @urlStates, url_mask = @urlMask, parked_lane = NULL WHERE id = @id`);
    // Never over a cancel: a round's "in flight" write may reach the queue after the source was deleted.
    this.inFlightStmt = db.prepare(`UPDATE deliveries SET state = ? WHERE id = ? AND state IN ${UNFINISHED_SQL}`);
    this.attemptStmt = db.prepare(`INSERT INTO attempts (${ATTEMPT_COLUMNS}) VALUES (${ATTEMPT_COLUMNS.split(',').map(() => '?').join(', ')})`);
    this.cancelStmt = db.prepare(`UPDATE deliveries SET state = @state, pending_urls = @pendingUrls, next_attempt_at = @nextAttemptAt,
      next_sim_offset_ms = @nextSimOffsetMs, last_error = @lastError, url_states = @urlStates, url_mask = @urlMask, parked_lane = NULL WHERE id = @id`);
    this.queueStmt = db.prepare('INSERT INTO actions_batch_items (source_id, mapping, call_id, data, queued_at, target) VALUES (?, ?, ?, ?, ?, ?)');
    this.unqueueStmt = db.prepare('DELETE FROM actions_batch_items WHERE id IN (SELECT value FROM json_each(?))');
    this.unqueueUpToStmt = db.prepare('DELETE FROM actions_batch_items WHERE call_id <= ?');
    this.eraseStmts = {
      attempts: db.prepare('DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM deliveries WHERE call_id IN (SELECT value FROM json_each(?)))'),
      deliveries: db.prepare('DELETE FROM deliveries WHERE call_id IN (SELECT value FROM json_each(?))'),
      // An Actions delivery goes with its first call (its row's call_id); its other members lose their link.
      links: db.prepare(`DELETE FROM delivery_calls WHERE call_id IN (SELECT value FROM json_each(@ids))
        OR delivery_id IN (SELECT id FROM deliveries WHERE call_id IN (SELECT value FROM json_each(@ids)))`),
      items: db.prepare('DELETE FROM actions_batch_items WHERE call_id IN (SELECT value FROM json_each(?))'),
    };
  }

  // --- retargeted -------------------------------------------------------------------------------

  /**
   * Unfinished deliveries' URLs rewritten by `move` (at start, before the dispatcher reads them back:
   * a mock receiver that had to take other ports takes its retries along, rather than leave them to
   * whatever program holds its old port). Returns how many deliveries changed.
   */
  retargetUnfinished(move: (url: string) => string): number {
    // One transaction: all of them move or none (and one commit, not one a delivery).
    return ownTransaction(this.db, () => {
      const rows = this.db.prepare(`SELECT id, urls FROM deliveries WHERE ${UNFINISHED}`).all() as { id: number; urls: string }[];
      const update = this.db.prepare('UPDATE deliveries SET urls = ? WHERE id = ?');
      let changed = 0;
      for (const r of rows) {
        const urls = JSON.parse(r.urls) as { url: string }[];
        const moved = urls.map((u) => ({ ...u, url: move(u.url) }));
        if (moved.every((u, i) => u.url === urls[i]!.url)) continue;
        update.run(JSON.stringify(moved), r.id);
        changed++;
      }
      return changed;
    });
  }

  // --- created ---------------------------------------------------------------------------------

  /** A call's Classic delivery, pending: the dispatcher sends it once the write job has committed. Inside a write job. */
  create(_tx: WriteTx, callId: number, sourceId: string, type: OutboundType, plan: NewDelivery): ActiveDelivery {
    return this.insert(newActive(0, callId, sourceId, type, plan));
  }

  /**
   * A call's Classic delivery made only to be replayed by hand (a call that was never forwarded):
   * created `failed`, which nothing schedules, at start or after. Inside a write job.
   */
  createForReplay(_tx: WriteTx, callId: number, sourceId: string, type: OutboundType, plan: NewDelivery): ActiveDelivery {
    return this.insert(bornForReplay(newActive(0, callId, sourceId, type, plan)));
  }

  /**
   * An Actions delivery with the calls it carries (delivery_calls; its row's call_id is the first).
   * Pending, unless its request is never sent (plan.notSent: its mapped body passed the limit): then
   * it is finished at once as failed, with the reason, and must not be handed to the dispatcher.
   * Inside a write job.
   */
  createActions(_tx: WriteTx, sourceId: string, type: OutboundType, plan: NewActionsDelivery): ActiveDelivery {
    const d = this.insert(newActive(0, plan.callIds[0], sourceId, type, plan));
    for (let i = 0; i < plan.callIds.length; i++) this.linkStmt.run(d.id, plan.callIds[i], i);
    this.actions.noteActions();
    return plan.notSent === undefined ? d : this.failNeverSent(d, plan.notSent);
  }

  /**
   * A batch flushed: its Actions delivery (pending), and its items out of the queue, in one step.
   * Inside a write job.
   */
  createBatch(tx: WriteTx, sourceId: string, type: OutboundType, plan: NewActionsDelivery, itemIds: number[]): ActiveDelivery {
    const d = this.createActions(tx, sourceId, type, plan);
    this.unqueueStmt.run(JSON.stringify(itemIds));
    return d;
  }

  private insert(d: ActiveDelivery): ActiveDelivery {
    const sw = d.standardWebhooks;
    const { userAgent, signature } = d.frozen!;
    const urls = JSON.stringify(d.urls);
    const pending = JSON.stringify(d.pendingUrls);
    const r =
      d.kind === 'classic'
        ? this.insertClassicStmt.run(d.callId, d.sourceId, d.type, d.state, urls, pending, d.body, userAgent, signature, sw && sw.id, sw && sw.version)
        : this.insertStmt.run(d.callId, d.sourceId, d.type, d.state, urls, pending, d.body, userAgent, signature, sw && sw.id, sw && sw.version, d.kind, d.mapping, d.method, d.timeoutMs, d.itemCount);
    d.id = Number(r.lastInsertRowid);
    return d;
  }

  /** Finishes a delivery just created, never sent, as failed with this reason (each URL failed, 0 attempts). */
  private failNeverSent(d: ActiveDelivery, reason: string): ActiveDelivery {
    const u = transition(d, { kind: 'not-sendable', reason });
    this.record(u);
    return { ...d, state: u.state, pendingUrls: u.pendingUrls, urlStates: u.urlStates };
  }

  // --- waiting in a batch (Actions) ------------------------------------------------------------

  /** Queues a call in its mapping's batch. Inside the call's write job. */
  queueItem(_tx: WriteTx, sourceId: string, callId: number, item: NewBatchItem, at: number): void {
    this.queueStmt.run(sourceId, item.mapping, callId, item.data, at, item.target);
    this.actions.noteActions();
  }

  /** Takes the items of calls up to this id out of their batches (clearing the calls); returns how many. */
  dropItemsUpTo(_tx: WriteTx, maxCallId: number): number {
    return this.unqueueUpToStmt.run(maxCallId).changes;
  }

  // --- scheduled -------------------------------------------------------------------------------

  /** A retry's round goes out: the row says in flight (resumed at start if the process stops). Never over a cancel. */
  markInFlight(_tx: WriteTx, id: number): void {
    this.inFlightStmt.run(OUT_STATE, id);
  }

  /**
   * Parks deliveries that no lane has room for (dispatcher/lanes.ts): their rows wait, with the lane
   * named, instead of their bodies in memory. One transaction; not through the write queue, because a
   * lane's claim must see every park made before it (the dispatcher parks and claims in order).
   */
  park(parks: { id: number; lane: string }[]): void {
    const stmt = this.db.prepare(`UPDATE deliveries SET parked_lane = ? WHERE id = ? AND ${UNFINISHED}`);
    ownTransaction(this.db, () => {
      for (const p of parks) stmt.run(p.lane, p.id);
    });
  }

  /** Takes up to `limit` of a lane's parked deliveries back, oldest first, and unparks them. */
  claimParked(lane: string, limit: number): ActiveDelivery[] {
    return ownTransaction(this.db, () => {
      const rows = this.db.prepare(`SELECT * FROM deliveries WHERE parked_lane = ? AND ${UNFINISHED} ORDER BY id LIMIT ?`).all(lane, limit) as DeliveryRow[];
      if (rows.length) this.db.prepare('UPDATE deliveries SET parked_lane = NULL WHERE id IN (SELECT value FROM json_each(?))').run(JSON.stringify(rows.map((r) => r.id)));
      return rows.map(toActive);
    });
  }

  /**
   * Time-warp changed: stretch or shrink the real wait of every scheduled retry. One statement, so a
   * transaction of its own, now: the dispatcher arms its timers from these rows at once.
   */
  rescale(now: number, factor: number): void {
    this.db.prepare("UPDATE deliveries SET next_attempt_at = ? + CAST(MAX(0, next_attempt_at - ?) * ? AS INTEGER) WHERE state = 'retrying'").run(now, now, factor);
  }

  // --- a round recorded (retrying, delivered, failed, expired) -----------------------------------

  /**
   * A round's outcome and its attempts, in one step: returns the attempts' ids, or null when the
   * delivery is gone (its call purged while the round was out; nothing is written then). Inside a write job.
   */
  recordRound(_tx: WriteTx, u: DeliveryUpdate, attempts: NewAttempt[]): number[] | null {
    if (!this.record(u)) return null;
    return attempts.map((a) => Number(this.attemptStmt.run(attemptParams(a)).lastInsertRowid));
  }

  private record(u: DeliveryUpdate): boolean {
    return this.updateStmt.run({ ...u, pendingUrls: JSON.stringify(u.pendingUrls), urlStates: JSON.stringify(u.urlStates), urlMask: urlMask(u.urlStates) }).changes > 0;
  }

  // --- canceled --------------------------------------------------------------------------------

  /**
   * Ends a source's unfinished deliveries as canceled (SPEC §4: its source was deleted or its
   * Webhooks turned off); a round already out is recorded when it ends, but never retried. Returns
   * the deliveries changed, with their calls. Inside a write job.
   */
  cancelOfSource(_tx: WriteTx, sourceId: string, reason: string, kind?: 'classic' | 'actions'): CanceledDelivery[] {
    return this.cancel(
      this.db.prepare(`SELECT id, call_id, urls, url_states, item_count FROM deliveries WHERE source_id = ? AND ${UNFINISHED} AND kind LIKE ?`).all(sourceId, kind ?? '%') as CancelRow[],
      reason,
    );
  }

  /**
   * The same for at most `limit` unfinished deliveries of calls up to this id (clearing the calls):
   * the caller repeats it, one small write job each, until it returns fewer than `limit`.
   */
  cancelUpTo(_tx: WriteTx, maxCallId: number, reason: string, limit: number): CanceledDelivery[] {
    return this.cancel(
      this.db.prepare(`SELECT id, call_id, urls, url_states, item_count FROM deliveries WHERE call_id <= ? AND ${UNFINISHED} LIMIT ?`).all(maxCallId, limit) as CancelRow[],
      reason,
    );
  }

  /**
   * A batch whose items are canceled while they wait (its source or mapping gone): one Actions
   * delivery, created canceled, that carries them (never sent), and the items out of the queue.
   * Inside a write job.
   */
  cancelBatch(tx: WriteTx, sourceId: string, type: OutboundType, plan: NewActionsDelivery, itemIds: number[], reason: string): void {
    const d = this.createBatch(tx, sourceId, type, plan, itemIds);
    this.writeCanceled(d.id, d.urlStates, reason);
  }

  private cancel(rows: CancelRow[], reason: string): CanceledDelivery[] {
    for (const r of rows) this.writeCanceled(r.id, decodeUrlStates(r.url_states, (JSON.parse(r.urls) as unknown[]).length), reason);
    return rows.map((r) => ({ deliveryId: r.id, callId: r.call_id, itemCount: r.item_count }));
  }

  /** A cancel as delivery-transition.ts states it: only the fields a cancel changes, so a round's bookkeeping stays. */
  private writeCanceled(id: number, urlStates: StoredUrlState[], reason: string): void {
    const c = canceledFields(urlStates, reason);
    this.cancelStmt.run({ ...c, id, pendingUrls: JSON.stringify(c.pendingUrls), urlStates: JSON.stringify(c.urlStates), urlMask: urlMask(c.urlStates) });
  }

  // --- erased with their calls -------------------------------------------------------------------

  /** These calls' deliveries, attempts, links and waiting items (the calls are being deleted: retention, clear, erasure). */
  eraseOfCalls(_tx: WriteTx, callIds: number[]): void {
    const list = JSON.stringify(callIds);
    this.eraseStmts.attempts.run(list);
    if (this.actions.seen()) {
      this.eraseStmts.links.run({ ids: list });
      this.eraseStmts.items.run(list);
    }
    this.eraseStmts.deliveries.run(list);
  }
}

interface CancelRow {
  id: number;
  call_id: number;
  urls: string;
  url_states: string | null;
  item_count: number;
}
