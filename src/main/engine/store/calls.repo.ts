import type { CallSummary, DeliveryState, NormalizedCall, Page, StoredCall, UrlState } from '../../../shared/types';
import { NORMALIZE_VERSION } from '../../../shared/normalize';
import type Database from 'better-sqlite3';
import type { Db } from './database';
import { DedupWindow } from './dedup-window';
import type { RequestsRepo } from './requests.repo';
import type { SourceKeys } from './source-keys';
import { searchTerm, searchText } from '../../../shared/search-filter';
import { BodyIndex, mergeNewestFirst } from './body-search';
import { URL_STATE_BITS, type InFlight } from './url-states';
import { SUMMARY_COLUMNS, summaryOfRow, type SummaryCall, type SummaryRow } from './call-summary';
import { storedCall, type CallRow } from './call-record';
import { withActions } from './call-summary';
import type { ActionsLedger } from './actions-ledger';
import type { DeliveryLedger } from './delivery-ledger';
import type { ActionsOutcomes } from './actions-outcomes';
import { NOT_IN_ACTIONS, actionsStatusClause, actionsUrlStateClause } from './actions-filter';
import { backgroundSlices } from '../slice-meter';
import type { WriteTx } from './write-queue';

/** A call's Classic delivery, one row at most (its Actions deliveries are read apart: actions-outcomes.ts). */
// Exported for the restart bench's baseline, which runs the first page's query alone (tests/unit/bench-floor.test.ts).
export const CLASSIC_JOIN = "LEFT JOIN deliveries d ON d.call_id = c.id AND d.kind = 'classic'";

/** De-duplication window for messageIds per source (SPEC §3), and how many ids it remembers at most. */
export const DEDUP_WINDOW_MS = 24 * 3600 * 1000;
export const DEDUP_CAPACITY = 200_000;
/** Retired messageIds let go per retention slice, of each kind (expireRetired). */
export const EXPIRE_LIMIT = 2_000;
/** Rows read per slice while filling the window after a start (a few ms each). */
const DEDUP_LOAD_SLICE = 5_000;

/** A call row to write: what its summary shows (SummaryCall), and where its body is. */
export interface NewCall extends SummaryCall {
  /** The request row holding the body it arrived in (requests.repo.ts), and its index in a batch. */
  requestId: number;
  batchIndex: number | null;
  /** The normalized timestamp, epoch ms (null for dropped calls). */
  timestamp: number | null;
  /**
   * Stored only when it cannot be rebuilt from the request body (calls the app makes itself); the
   * collector's calls pass null and are normalized again from their item when read, by the rules of
   * the version stamped on the row (README, Decisions: normalize once).
   */
  normalized: NormalizedCall | null;
}

const wellFormed = (v: string | null | undefined): boolean => v == null || v.isWellFormed();

/**
 * The call with U+FFFD for each lone surrogate in its ids and name, as they are read back anyway
 * (text columns are UTF-8, which has none; a lone one was kept as three bytes read back as three
 * U+FFFD). The duplicate window keys ids the same way (fingerprint-table.ts), so a repeat is caught
 * before and after a restart alike. The call itself when nothing needs it: the common case allocates nothing.
 */
function wellFormedIds(c: NewCall): NewCall {
  if (wellFormed(c.messageId) && wellFormed(c.userId) && wellFormed(c.anonymousId) && wellFormed(c.label) && wellFormed(c.groupId) && wellFormed(c.previousId)) return c;
  const fix = <T extends string | null | undefined>(v: T): T => (v == null ? v : (v.toWellFormed() as T));
  return { ...c, messageId: fix(c.messageId), userId: fix(c.userId), anonymousId: fix(c.anonymousId), label: fix(c.label), groupId: fix(c.groupId), previousId: fix(c.previousId) };
}

export interface CallFilter {
  sourceId?: string;
  type?: string;
  status?: DeliveryState | 'not_forwarded' | 'blocked';
  /** Calls with at least one URL in this state. */
  urlState?: UrlState;
  userId?: string;
  /** true: only calls their source's tracking plan found violations in; false: only those it checked and found clean. */
  violations?: boolean;
  /** Search (src/shared/search-filter.ts): a substring of the call's ids and event/name, any case. */
  q?: string;
  /** Search inside request bodies too. */
  body?: boolean;
  /** Leave out this source's calls (the probe's: probe-filter.ts). */
  exceptSourceId?: string;
  before?: number;
  limit: number;
}

/** A call's messageId as stored, with its source's key and when it arrived (the window's entry for it has that time). */
export interface SourceMessageId {
  sourceKey: number | null;
  messageId: string | null;
  receivedAt: number;
}

export class CallsRepo {
  private readonly insertStmt;
  readonly dedup: DedupWindow;
  /** The calls' bodies as a trigram index, fed in the background (body-search.ts). */
  readonly bodyIndex: BodyIndex;
  private readonly getStmt;
  private readonly countStmt;
  private readonly delCalls;
  private readonly issuedStmt;
  private readonly markIssuedStmt;
  private readonly retireStmt;
  private readonly expireRetiredStmts;
  /**
   * The id the next call gets. Given here rather than by SQLite, which reuses the ids of the newest
   * calls once they are deleted (migration 19): above every call stored and every id issued before.
   */
  private nextId: number;
  /** The unfiltered total, kept in memory: COUNT(*) over 100,000 rows is most of a first page's time. */
  private total: number | null = null;
  /** Counts every removal of calls, landed or not: retention's cutoff is good only while it stands (retention.ts). */
  removals = 0;
  private dedupLoad: Promise<void> | null = null;
  /** The window holds the calls the database kept (dedupReady): arrivals need not wait. */
  dedupLoaded = false;

  constructor(
    private readonly db: Db,
    private readonly sourceName: (id: string | null) => string | null,
    private readonly requests: RequestsRepo,
    private readonly sourceKeys: SourceKeys,
    private readonly inFlight: InFlight,
    private readonly actions: { ledger: ActionsLedger; outcomes: ActionsOutcomes; deliveries: DeliveryLedger },
  ) {
    // Every call is stamped with the normalize rules it arrived under (call-record.ts reads it back by
    // them), as a constant of the statement: nothing to bind per call.
    this.insertStmt = db.prepare(`INSERT INTO calls (id, source_key, received_at, type, user_id, anonymous_id, label, message_id, group_id, previous_id, status, drop_reason, request_id, batch_index, timestamp, normalized, search, normalize_version)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ${NORMALIZE_VERSION})`);
    this.issuedStmt = db.prepare('SELECT MAX((SELECT issued_to FROM call_ids), IFNULL((SELECT MAX(id) FROM calls), 0))').pluck();
    this.markIssuedStmt = db.prepare('UPDATE call_ids SET issued_to = ? WHERE issued_to < ?');
    this.nextId = this.readNextId();
    this.retireStmt = db.prepare(`INSERT INTO dedup_retired (source_key, message_id, received_at)
      SELECT source_key, message_id, received_at FROM calls WHERE id IN (SELECT value FROM json_each(?))
        AND status <> 'dropped' AND received_at >= ? AND source_key IS NOT NULL AND message_id IS NOT NULL`);
    // Past the window (by its index), and beyond the newest DEDUP_CAPACITY (the window keeps no more
    // at start); at most EXPIRE_LIMIT of each at a time, retention's slices being short.
    this.expireRetiredStmts = [
      db.prepare(`DELETE FROM dedup_retired WHERE rowid IN (SELECT rowid FROM dedup_retired WHERE received_at < ? ORDER BY received_at LIMIT ${EXPIRE_LIMIT})`),
      db.prepare(
        `DELETE FROM dedup_retired WHERE rowid IN (SELECT rowid FROM dedup_retired WHERE rowid <= (SELECT MAX(rowid) FROM dedup_retired) - ${DEDUP_CAPACITY} ORDER BY rowid LIMIT ${EXPIRE_LIMIT})`,
      ),
    ];
    this.dedup = new DedupWindow(DEDUP_WINDOW_MS, DEDUP_CAPACITY);
    this.bodyIndex = new BodyIndex(db, requests);
    this.delCalls = db.prepare('DELETE FROM calls WHERE id IN (SELECT value FROM json_each(?))');
    this.getStmt = db.prepare('SELECT c.*, r.meta FROM calls c JOIN requests r ON r.id = c.request_id WHERE c.id = ?');
    this.countStmt = db.prepare('SELECT COUNT(*) AS n FROM calls');
  }

  /**
   * Settles once the de-duplication window holds the calls kept within 24 h (SPEC §3: duplicates are
   * caught across restarts). Filled after the constructor returns, not in it: read before the engine
   * answered, 200,000 calls were most of a full lab's start (issue 27). In slices of rows, yielding
   * between them, so a page asked for meanwhile waits for one slice at most; arrivals wait for all
   * of it (recordArrivals), so no id is admitted before the older ones are known.
   */
  dedupReady(): Promise<void> {
    this.dedupLoad ??= this.loadDedupWindow();
    return this.dedupLoad;
  }

  private async loadDedupWindow(): Promise<void> {
    const since = Date.now() - DEDUP_WINDOW_MS;
    // First the messageIds of calls retention removed within the window (retire): older than every call kept.
    const retired = this.db.prepare('SELECT rowid AS id, source_key, message_id, received_at FROM dedup_retired WHERE rowid > ? AND received_at >= ? ORDER BY rowid LIMIT ?');
    // Accepted and blocked calls count (a blocked call's repeat is a duplicate while the engine runs:
    // admitted before the plan is asked); a dropped one does not.
    const kept = this.db.prepare(
      "SELECT id, source_key, message_id, received_at FROM calls WHERE id > ? AND status <> 'dropped' AND received_at >= ? AND source_key IS NOT NULL ORDER BY id LIMIT ?",
    );
    for (const slice of [retired, kept]) if (!(await this.addToDedupWindow(slice, since))) return;
    this.dedupLoaded = true;
  }

  /**
   * Adds the rows `slice` (after an id, since a time, a limit) gives to the window, in slices of
   * DEDUP_LOAD_SLICE rows, yielding between them; false if the database closed meanwhile.
   */
  private async addToDedupWindow(slice: Database.Statement<unknown[]>, since: number): Promise<boolean> {
    for (let after = 0; ; ) {
      await new Promise((resolve) => setImmediate(resolve));
      if (!this.db.open) return false;
      const rows = backgroundSlices.time('duplicate window load', () => {
        const read = slice.all(after, since, DEDUP_LOAD_SLICE) as { id: number; source_key: number; message_id: string; received_at: number }[];
        for (const r of read) {
          const sourceId = this.sourceKeys.idOf(r.source_key);
          if (sourceId !== null) this.dedup.add(sourceId, r.message_id, r.received_at);
        }
        return read;
      });
      if (rows.length < DEDUP_LOAD_SLICE) return true;
      after = rows[rows.length - 1]!.id;
    }
  }

  insert(received: NewCall): number {
    const c = wellFormedIds(received);
    if (this.total !== null) this.total++;
    const id = this.nextId++;
    this.insertStmt.run(
      id,
      c.sourceId === null ? null : this.sourceKeys.keyOf(c.sourceId),
      c.receivedAt,
      c.type,
      c.userId,
      c.anonymousId,
      c.label,
      c.messageId,
      c.groupId ?? null,
      c.previousId ?? null,
      c.status,
      c.dropReason,
      c.requestId,
      c.batchIndex,
      c.timestamp,
      c.normalized ? JSON.stringify(c.normalized) : null,
      searchText(c),
    );
    return id;
  }

  private readNextId(): number {
    return (this.issuedStmt.get() as number) + 1;
  }


  count(): number {
    this.total ??= (this.countStmt.get() as { n: number }).n;
    return this.total;
  }

  /**
   * Deletes calls with their deliveries and attempts (retention, purges); the caller's transaction
   * decides when it lands (a rollback makes the store forget the running total).
   */
  remove(tx: WriteTx, ids: number[]): number {
    const list = JSON.stringify(ids);
    this.actions.deliveries.eraseOfCalls(tx, ids);
    if (ids.length > 0) this.removals++;
    const removed = this.delCalls.run(list).changes;
    // Whatever was removed, the ids issued so far stay issued (in the same transaction).
    this.markIssuedStmt.run(this.nextId - 1, this.nextId - 1);
    this.bodyIndex.forget(ids);
    if (this.total !== null) this.total -= removed;
    return removed;
  }

  /**
   * Retention is about to remove these calls: those still within the duplicate window keep their
   * messageId apart (dedup_retired), so the window filled at the next start still knows them.
   * Inside retention's transaction.
   */
  retire(ids: number[], now: number): void {
    this.retireStmt.run(JSON.stringify(ids), now - DEDUP_WINDOW_MS);
  }

  /** The newest retired messageId's row (Clear all calls: those up to it are cleared too). */
  lastRetired(): number {
    return this.db.prepare('SELECT IFNULL(MAX(rowid), 0) FROM dedup_retired').pluck().get() as number;
  }

  /**
   * Clear all calls: the retired messageIds up to `upTo` go too, `limit` at a time (the user starts
   * over; a call retention removed is no more shown than a cleared one). Returns them for
   * forgetMessageIds once the removal has committed.
   */
  clearRetired(upTo: number, limit: number): SourceMessageId[] {
    const rows = this.db.prepare('SELECT rowid AS id, source_key, message_id, received_at FROM dedup_retired WHERE rowid <= ? ORDER BY rowid LIMIT ?').all(upTo, limit) as {
      id: number;
      source_key: number;
      message_id: string;
      received_at: number;
    }[];
    if (rows.length > 0) this.db.prepare('DELETE FROM dedup_retired WHERE rowid IN (SELECT value FROM json_each(?))').run(JSON.stringify(rows.map((r) => r.id)));
    return rows.map((r) => ({ sourceKey: r.source_key, messageId: r.message_id, receivedAt: r.received_at }));
  }

  /** The retired messageIds past the window, or beyond the newest DEDUP_CAPACITY, are let go, EXPIRE_LIMIT of each at a time (each retention slice). */
  expireRetired(now: number): void {
    this.expireRetiredStmts[0].run(now - DEDUP_WINDOW_MS);
    this.expireRetiredStmts[1].run();
  }

  /**
   * Cleared calls leave the duplicate window (the user starts over: a call sent again after *Clear all
   * calls* is not a duplicate of one no longer shown). Called once their removal has committed.
   */
  forgetMessageIds(ids: SourceMessageId[]): void {
    for (const { sourceKey, messageId, receivedAt } of ids) {
      const sourceId = sourceKey === null ? null : this.sourceKeys.idOf(sourceKey);
      // Only the entry of that very call: the same id may have been accepted again since (a call
      // arriving while a clear runs), and that call is kept.
      if (sourceId !== null && messageId !== null) this.dedup.removeIfAt(sourceId, messageId, receivedAt);
    }
  }

  /** After a rollback the running total may count rows that never landed: count again when next asked. */
  forgetCount(): void {
    this.total = null;
    // Ids given to rows that were rolled back were not issued: counted again from what landed.
    this.nextId = this.readNextId();
    this.bodyIndex.reload();
  }

  /** The request a call arrived in (tracking plans: whether it was checked). */
  requestIdOf(id: number): number | undefined {
    return this.db.prepare('SELECT request_id FROM calls WHERE id = ?').pluck().get(id) as number | undefined;
  }

  get(id: number): StoredCall | undefined {
    const row = this.getStmt.get(id) as CallRow | undefined;
    if (!row) return undefined;
    const sourceId = this.sourceKeys.idOf(row.source_key);
    return storedCall(row, sourceId, this.sourceName(sourceId), this.requests);
  }

  list(f: CallFilter): Page<CallSummary> {
    const term = searchTerm(f.q);
    // Only a search in the fields and bodies: the two lists of ids merged (the index's ids need no join).
    const bodyOnly = term !== null && f.body && this.where({ ...f, q: undefined }).where.length === 0;
    const { where, filter, args } = bodyOnly ? { where: [] as string[], filter: '', args: [] as unknown[] } : this.where(f);
    const from = `FROM calls c ${CLASSIC_JOIN}`;
    // A search reads every row however many match: one pass for the total and the page together,
    // instead of a COUNT(*) pass and a page query that scans the whole table when little matches.
    if (term) {
      const fields = bodyOnly ? this.fieldMatches(term) : [];
      const indexed = bodyOnly ? this.bodyIndex.page(term, fields, f.before, f.limit) : null;
      if (indexed) {
        const items = this.summaries(indexed.ids).sort((a, b) => b.id - a.id);
        return { items, total: indexed.total, next: indexed.more ? indexed.ids[indexed.ids.length - 1]! : null };
      }
      const all = bodyOnly ? mergeNewestFirst(fields, this.bodyIndex.matches(term)) : (this.db.prepare(`SELECT c.id ${from} ${filter} ORDER BY c.id DESC`).pluck().all(...args) as number[]);
      const start = f.before ? all.findIndex((id) => id < f.before!) : 0;
      const page = start < 0 ? [] : all.slice(start, start + f.limit);
      const items = this.summaries(page).sort((a, b) => b.id - a.id);
      return { items, total: all.length, next: page.length === f.limit && start + f.limit < all.length ? page[page.length - 1] : null };
    }
    // The total needs the join only when filtering on delivery state; without it, counting 100,000
    // calls for the inspector's first page is several times cheaper.
    const joinForCount = (f.status !== undefined && f.status !== 'dropped' && f.status !== 'blocked') || f.urlState !== undefined;
    const total =
      where.length === 0
        ? this.count()
        : (this.db.prepare(`SELECT COUNT(*) AS n ${joinForCount ? from : 'FROM calls c'} ${filter}`).get(...args) as { n: number }).n;
    const pageWhere = f.before ? `${filter ? `${filter} AND` : 'WHERE'} c.id < ?` : filter;
    const rows = this.db
      .prepare(`SELECT ${SUMMARY_COLUMNS} ${from} ${pageWhere} ORDER BY c.id DESC LIMIT ?`)
      .all(...args, ...(f.before ? [f.before] : []), f.limit) as SummaryRow[];
    const items = this.addActions(rows.map((r) => this.toSummary(r)));
    return { items, total, next: rows.length === f.limit ? rows[rows.length - 1].id : null };
  }

  /** The ids above `after`, oldest first, at most `limit` (of one source if given): listMessageDetails' page. */
  idsAfter(after: number, limit: number, sourceId?: string): number[] {
    const bySource = sourceId === undefined ? '' : ' AND source_key = ?';
    const args: unknown[] = [after, ...(sourceId === undefined ? [] : [this.sourceKeys.find(sourceId) ?? -1]), limit];
    return this.db.prepare(`SELECT id FROM calls WHERE id > ?${bySource} ORDER BY id LIMIT ?`).pluck().all(...args) as number[];
  }

  /** The ids list() pages through (newest `limit` matching, newest first, below `before`), without building summaries. */
  ids(f: CallFilter): number[] {
    const { filter, args } = this.where(f);
    const pageWhere = f.before ? `${filter ? `${filter} AND` : 'WHERE'} c.id < ?` : filter;
    return this.db
      .prepare(`SELECT c.id FROM calls c ${CLASSIC_JOIN} ${pageWhere} ORDER BY c.id DESC LIMIT ?`)
      .pluck()
      .all(...args, ...(f.before ? [f.before] : []), f.limit) as number[];
  }

  /**
   * The ids matching `f` with `after < id <= upTo`, oldest first (newest first with 'desc'), at most
   * `limit`: an export's keyset page. The id range bounds the rows one query reads however few match.
   */
  idsInRange(f: Omit<CallFilter, 'limit' | 'before'>, after: number, upTo: number, limit: number, order: 'asc' | 'desc' = 'asc'): number[] {
    const { filter, args } = this.where({ ...f, limit });
    const range = `${filter ? `${filter} AND` : 'WHERE'} c.id > ? AND c.id <= ?`;
    return this.db
      .prepare(`SELECT c.id FROM calls c ${CLASSIC_JOIN} ${range} ORDER BY c.id ${order === 'asc' ? 'ASC' : 'DESC'} LIMIT ?`)
      .pluck()
      .all(...args, after, upTo, limit) as number[];
  }

  private where(f: CallFilter): { where: string[]; filter: string; args: unknown[] } {
    const where: string[] = [];
    const args: unknown[] = [];
    const add = (clause: string, ...values: unknown[]) => {
      where.push(clause);
      args.push(...values);
    };
    // A source id no call was ever stored for matches nothing (key -1).
    if (f.sourceId) add('c.source_key = ?', this.sourceKeys.find(f.sourceId) ?? -1);
    const except = f.exceptSourceId === undefined ? undefined : this.sourceKeys.find(f.exceptSourceId);
    if (except !== undefined) add('c.source_key IS NOT ?', except);
    if (f.type) add('c.type = ?', f.type);
    if (f.userId) add('c.user_id = ?', f.userId);
    // Calls with Actions parts match by them too (actions-filter.ts), once the store has had any.
    const actions = this.actions.ledger.seen();
    // An Actions alternative ORed with the Classic clause.
    const either = (clause: string, values: unknown[], alt: { sql: string; args: unknown[] } | null) =>
      alt ? add(`((${clause}) OR ${alt.sql})`, ...values, ...alt.args) : add(clause, ...values);
    if (f.violations) where.push('c.id IN (SELECT call_id FROM call_violations WHERE count > 0)');
    // false: checked and found clean (its request was checked, and it has no violations; dropped calls are not checked).
    else if (f.violations === false) {
      where.push(
        "c.status != 'dropped' AND c.request_id IN (SELECT request_id FROM checked_requests) AND c.id NOT IN (SELECT call_id FROM call_violations WHERE count > 0)",
      );
    }
    if (f.status === 'dropped') where.push("c.status = 'dropped'");
    else if (f.status === 'blocked') where.push("c.status = 'blocked'");
    else if (f.status === 'not_forwarded') where.push(`c.status = 'accepted' AND d.id IS NULL${actions ? ` AND ${NOT_IN_ACTIONS}` : ''}`);
    // What is in flight lives in memory (store.inFlight): those deliveries' ids go in as one parameter.
    else if (f.status) {
      const alt = actions ? actionsStatusClause(f.status, this.inFlightIds()) : null;
      if (f.status === 'in_flight') either("d.state = 'in_flight' OR d.id IN (SELECT value FROM json_each(?))", [this.inFlightIds()], alt);
      else if (f.status === 'pending') either("d.state = 'pending' AND d.id NOT IN (SELECT value FROM json_each(?))", [this.inFlightIds()], alt);
      else either('d.state = ?', [f.status], alt);
    }
    if (f.urlState) {
      const alt = actions ? actionsUrlStateClause(f.urlState, this.inFlightIds()) : null;
      if (f.urlState === 'in_flight') either('d.id IN (SELECT value FROM json_each(?))', [this.inFlightIds()], alt);
      else {
        // A URL stored as pending or retrying that is being sent now shows in flight instead.
        const out = f.urlState === 'pending' || f.urlState === 'retrying';
        either(`(d.url_mask & ?) != 0${out ? ' AND d.id NOT IN (SELECT value FROM json_each(?))' : ''}`, [URL_STATE_BITS[f.urlState], ...(out ? [this.inFlightIds()] : [])], alt);
      }
    }
    const term = searchTerm(f.q);
    // One instr() per row over the stored searchText (see migration 8 for what else was measured).
    if (term && f.body) {
      const body = this.bodyIndex.sqlTest(term);
      add(`(instr(c.search, ?) > 0 OR ${body.sql})`, term, ...body.args);
    }
    else if (term) add('instr(c.search, ?) > 0', term);
    return { where, filter: where.length ? `WHERE ${where.join(' AND ')}` : '', args };
  }

  /** The calls whose fields hold the term, newest first. */
  private fieldMatches(term: string): number[] {
    return this.db.prepare('SELECT id FROM calls WHERE instr(search, ?) > 0 ORDER BY id DESC').pluck().all(term) as number[];
  }

  private inFlightIds(): string {
    return JSON.stringify(this.inFlight.deliveryIds());
  }

  summaries(ids: number[]): CallSummary[] {
    if (ids.length === 0) return [];
    const out: CallSummary[] = [];
    // Chunked to stay under SQLite's bound-parameter limit.
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      const rows = this.db
        .prepare(`SELECT ${SUMMARY_COLUMNS} FROM calls c ${CLASSIC_JOIN} WHERE c.id IN (${chunk.map(() => '?').join(',')})`)
        .all(...chunk) as SummaryRow[];
      for (const r of rows) out.push(this.toSummary(r));
    }
    return this.addActions(out);
  }

  /** The Actions parts of these calls (one query), once the store has had any. */
  private addActions(items: CallSummary[]): CallSummary[] {
    if (!this.actions.ledger.seen() || items.length === 0) return items;
    const parts = this.actions.outcomes.of(items.map((s) => s.id));
    if (parts.size === 0) return items;
    for (const s of items) {
      const p = parts.get(s.id);
      if (p) withActions(s, p);
    }
    return items;
  }

  private toSummary(r: SummaryRow): CallSummary {
    const sourceId = this.sourceKeys.idOf(r.source_key);
    return summaryOfRow(r, sourceId, this.sourceName(sourceId), r.d_id === null ? undefined : this.inFlight.of(r.d_id));
  }
}
