import type { ActionsMethod, Attempt, BatchItemsPage, Delivery } from '../../../shared/types';
import type { Db } from './database';
import type { ActiveDelivery } from './delivery.types';
import type { ActionsLedger } from './actions-ledger';
import { toActive, toDelivery, type DeliveryRow } from './delivery-rows';
import { attemptOfRow, type AttemptRow } from './attempt-rows';
import { batchBodyPreview, batchItemsPage, DETAIL_BATCH_BODY_BYTES } from './batch-items';
import { sentBody } from '../../../shared/attempt-body';
import { UNFINISHED_SQL } from './delivery-states';

/**
 * Deliveries and their attempts as read: a call's, one by id, those to resume or due, counts, and the
 * API's shapes. Every write to these tables is a named operation of the delivery ledger
 * (delivery-ledger.ts).
 */
export class DeliveriesRepo {
  private readonly byCallStmt;
  private readonly byIdStmt;
  private readonly attemptsStmt;
  private readonly dueStmt;
  private readonly attemptTimesStmt;
  private readonly attemptsByIdStmt;
  private readonly actionsOfCallStmt;
  private readonly membersStmt;

  constructor(
    private readonly db: Db,
    private readonly actions: ActionsLedger,
  ) {
    this.actionsOfCallStmt = db.prepare(
      'SELECT d.* FROM delivery_calls dc JOIN deliveries d ON d.id = dc.delivery_id WHERE dc.call_id = ? ORDER BY d.id',
    );
    this.membersStmt = db.prepare('SELECT call_id FROM delivery_calls WHERE delivery_id = ? ORDER BY item').pluck();
    this.byCallStmt = db.prepare("SELECT * FROM deliveries WHERE call_id = ? AND kind = 'classic'");
    this.byIdStmt = db.prepare('SELECT * FROM deliveries WHERE id = ?');
    this.attemptsStmt = db.prepare('SELECT * FROM attempts WHERE delivery_id = ? ORDER BY id');
    this.dueStmt = db.prepare(
      "SELECT * FROM deliveries WHERE state = 'retrying' AND next_attempt_at <= ? AND parked_lane IS NULL ORDER BY next_attempt_at LIMIT ?",
    );
    this.attemptTimesStmt = db.prepare(
      'SELECT a.started_at, a.id FROM attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE d.call_id IN (SELECT value FROM json_each(?))',
    ).raw();
    this.attemptsByIdStmt = db.prepare(`SELECT a.*, d.body AS d_body, d.call_id, d.method AS d_method, c.message_id FROM attempts a
      JOIN deliveries d ON d.id = a.delivery_id JOIN calls c ON c.id = d.call_id WHERE a.id IN (SELECT value FROM json_each(?))`);
  }

  /** The calls an Actions delivery carries, in body order (a batch's members; one call otherwise). */
  callsOf(deliveryId: number): number[] {
    return this.membersStmt.all(deliveryId) as number[];
  }

  /** The Actions deliveries carrying this call, oldest first. */
  actionsForCall(callId: number): ActiveDelivery[] {
    return (this.actionsOfCallStmt.all(callId) as DeliveryRow[]).map(toActive);
  }

  activeForCall(callId: number): ActiveDelivery | undefined {
    const row = this.byCallStmt.get(callId) as DeliveryRow | undefined;
    return row && toActive(row);
  }

  active(id: number): ActiveDelivery | undefined {
    const row = this.byIdStmt.get(id) as DeliveryRow | undefined;
    return row && toActive(row);
  }

  /**
   * Deliveries to resume (at start, after storage recovered), a page at a time by id: never finished,
   * including those in flight when the process stopped, and retries already due; not parked ones
   * (their lanes claim them) nor retries still to come (the timer finds them).
   */
  resumable(now: number, afterId: number, limit: number): ActiveDelivery[] {
    return (
      this.db
        .prepare(`SELECT * FROM deliveries WHERE id > ? AND parked_lane IS NULL AND (state IN ('pending', 'in_flight')
          OR (state = 'retrying' AND next_attempt_at <= ?)) ORDER BY id LIMIT ?`)
        .all(afterId, now, limit) as DeliveryRow[]
    ).map(toActive);
  }

  /** Lanes that have parked deliveries (at start: each is claimed from as it frees). */
  parkedLanes(): string[] {
    return this.db.prepare('SELECT DISTINCT parked_lane FROM deliveries WHERE parked_lane IS NOT NULL').pluck().all() as string[];
  }

  /** How many deliveries wait parked (health, tests). */
  countParked(): number {
    return this.db.prepare('SELECT COUNT(*) FROM deliveries WHERE parked_lane IS NOT NULL').pluck().get() as number;
  }

  due(now: number, limit: number): ActiveDelivery[] {
    return (this.dueStmt.all(now, limit) as DeliveryRow[]).map(toActive);
  }

  nextDueAt(): number | null {
    const r = this.db.prepare("SELECT MIN(next_attempt_at) AS t FROM deliveries WHERE state = 'retrying' AND parked_lane IS NULL").get() as { t: number | null };
    return r.t;
  }

  countUnfinished(): number {
    return (this.db.prepare(`SELECT COUNT(*) AS n FROM deliveries WHERE state IN ${UNFINISHED_SQL}`).get() as { n: number }).n;
  }

  /**
   * The attempts of these calls' deliveries, as [startedAt, attemptId] pairs (unordered): what a HAR
   * export sorts by, found without reading the attempts themselves. Ids go in as one json_each
   * parameter, so a caller passes them in chunks of a few thousand.
   */
  attemptTimes(callIds: number[]): [number, number][] {
    return this.attemptTimesStmt.all(JSON.stringify(callIds)) as [number, number][];
  }

  /**
   * Attempts by id, each with the body it sent (its delivery's, or its own when edited), its
   * delivery's call id (an Actions batch's first call) and messageId; an attempt deleted meanwhile is absent.
   */
  attemptsById(ids: number[]): Map<number, { attempt: Attempt; sentBody: string; callId: number; messageId: string | null }> {
    const out = new Map<number, { attempt: Attempt; sentBody: string; callId: number; messageId: string | null }>();
    for (const r of this.attemptsByIdStmt.all(JSON.stringify(ids)) as (AttemptRow & { d_body: Buffer; call_id: number; d_method: ActionsMethod; message_id: string | null })[]) {
      const attempt = attemptOfRow(r, { method: r.d_method });
      out.set(r.id, { attempt, sentBody: sentBody({ body: r.d_body.toString('utf8') }, attempt), callId: r.call_id, messageId: r.message_id });
    }
    return out;
  }

  /**
   * The call's Classic delivery, then every Actions delivery carrying it (a batch with its members in
   * order). Actions deliveries are looked for only once the store has had any (ActionsLedger).
   */
  /**
   * pageBatches: an Actions batch over 64 KB comes with its first items only (batch-items.ts) — always
   * (a call's detail), or 'unlessFirst' (an export: whole on its first call's line, cut on the others').
   */
  forCall(callId: number, o: { pageBatches?: boolean | 'unlessFirst' } = {}): (Delivery & { attempts: Attempt[] })[] {
    const rows: DeliveryRow[] = [];
    const classic = this.byCallStmt.get(callId) as DeliveryRow | undefined;
    if (classic) rows.push(classic);
    // 'unlessFirst' (an export, one line per member): a large batch's body is not even read for the
    // members after its first (reading a 30 MB body costs some 40 ms, and a batch has up to 4,000 members).
    let unread = new Map<number, number>();
    if (this.actions.seen()) {
      if (o.pageBatches !== 'unlessFirst') rows.push(...(this.actionsOfCallStmt.all(callId) as DeliveryRow[]));
      else {
        const q = this.exportStmts();
        unread = new Map((q.largeLater.all(callId, DETAIL_BATCH_BODY_BYTES) as { id: number; bytes: number }[]).map((r) => [r.id, r.bytes]));
        const actions = q.actionsExcept.all(callId, JSON.stringify([...unread.keys()])) as DeliveryRow[];
        for (const id of unread.keys()) actions.push({ ...(q.withoutBody.get(id) as DeliveryRow), body: Buffer.alloc(0) });
        rows.push(...actions.sort((a, b) => a.id - b.id));
      }
    }
    return rows.map((row) => {
      const members = row.kind === 'actions' && row.item_count !== undefined && row.item_count > 1 ? (this.membersStmt.all(row.id) as number[]) : undefined;
      // pageBatches (a call's detail): a large batch's body is cut to its first items (batch-items.ts);
      // left unread, it is cut to none.
      const bytes = unread.get(row.id);
      const cut =
        bytes !== undefined && members
          ? { body: '', marker: { bytes, items: members.length, shownItems: 0 } }
          : o.pageBatches === true && members
            ? batchBodyPreview(row.body, members.length)
            : null;
      const body = cut ? cut.body : row.body.toString('utf8');
      const attempts = (this.attemptsStmt.all(row.id) as AttemptRow[]).map((a) => attemptOfRow(a, { method: row.method }));
      return { ...toDelivery(row, body, members), ...(cut ? { bodyTruncated: cut.marker } : {}), attempts };
    });
  }

  private exportQueries?: ReturnType<typeof exportStatements>;

  /** forCall's statements for an export, made at its first use. */
  private exportStmts() {
    return (this.exportQueries ??= exportStatements(this.db));
  }

  /** A page of an Actions batch's items (getBatchItems); undefined when the delivery is no batch. */
  batchItems(deliveryId: number, offset: number, limit: number): BatchItemsPage | undefined {
    const row = this.db.prepare("SELECT body FROM deliveries WHERE id = ? AND kind = 'actions' AND item_count > 1").get(deliveryId) as { body: Buffer } | undefined;
    return row && batchItemsPage(deliveryId, row.body, this.callsOf(deliveryId), offset, limit);
  }
}

function exportStatements(db: Db) {
  // The columns toDelivery reads, all but the body.
  const columns = `id, call_id, source_id, type, state, urls, round, attempt_count, next_attempt_at, next_sim_offset_ms, first_attempt_at,
    last_attempt_at, delivered_at, last_error, kind, mapping, method, item_count, sw_id`;
  return {
    // Batches carrying the call after their first item, with bodies over the detail's size.
    largeLater: db.prepare(`SELECT d.id, length(d.body) AS bytes FROM delivery_calls dc JOIN deliveries d ON d.id = dc.delivery_id
      WHERE dc.call_id = ? AND dc.item > 0 AND length(d.body) > ?`),
    actionsExcept: db.prepare(`SELECT d.* FROM delivery_calls dc JOIN deliveries d ON d.id = dc.delivery_id
      WHERE dc.call_id = ? AND d.id NOT IN (SELECT value FROM json_each(?))`),
    withoutBody: db.prepare(`SELECT ${columns} FROM deliveries WHERE id = ?`),
  };
}
