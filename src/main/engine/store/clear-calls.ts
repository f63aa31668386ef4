import type { Db } from './database';
import type { CallsRepo, SourceMessageId } from './calls.repo';
import type { WriteTx } from './write-queue';

/** Rows per write job: each chunk is a short transaction, so the collector's commits go on between them. */
export const CLEAR_CHUNK = 1000;

/** Where a clear stops: calls and requests stored after it started are kept. */
export interface ClearCutoff {
  callId: number;
  requestId: number;
  /** The newest messageId retention set apart (dedup_retired), cleared with the calls. */
  retiredId: number;
}

/**
 * Deleting every call in small steps (clearCalls): the cutoff is read once, then the caller runs
 * deleteCallsChunk and deleteRequestsChunk in write jobs of their own until each returns less than
 * CLEAR_CHUNK. The SQL over calls, requests, deliveries and attempts stays in the store.
 */
export class CallsClearer {
  private readonly pick;
  private readonly delRequestsBelowCalls;
  private readonly delRequests;

  constructor(
    private readonly db: Db,
    private readonly calls: CallsRepo,
  ) {
    this.pick = db.prepare(`SELECT id, source_key, message_id, received_at, status FROM calls WHERE id <= ? ORDER BY id LIMIT ${CLEAR_CHUNK}`);
    // Calls are written in request order: every request older than the oldest remaining call's is
    // unreferenced (the same rule as retention.ts).
    this.delRequestsBelowCalls = db.prepare(
      'DELETE FROM requests WHERE id <= ? AND id < COALESCE((SELECT request_id FROM calls ORDER BY id LIMIT 1), (SELECT MAX(id) + 1 FROM requests))',
    );
    // What is left once the calls are gone: request rows no call referenced (none is left below the cutoff).
    this.delRequests = db.prepare(
      `DELETE FROM requests WHERE id IN (SELECT id FROM requests WHERE id <= ? AND id NOT IN (SELECT request_id FROM calls WHERE id <= ?) ORDER BY id LIMIT ${CLEAR_CHUNK})`,
    );
  }

  cutoff(): ClearCutoff {
    const callId = (this.db.prepare('SELECT MAX(id) FROM calls').pluck().get() as number | null) ?? 0;
    const requestId = (this.db.prepare('SELECT MAX(id) FROM requests').pluck().get() as number | null) ?? 0;
    return { callId, requestId, retiredId: this.calls.lastRetired() };
  }

  /** The messageIds retention set apart up to the cutoff, CLEAR_CHUNK at a time, for forgetMessageIds once committed. */
  deleteRetiredChunk(c: ClearCutoff): SourceMessageId[] {
    return this.calls.clearRetired(c.retiredId, CLEAR_CHUNK);
  }

  /**
   * The oldest CLEAR_CHUNK calls up to the cutoff, with their deliveries, attempts and requests.
   * Returns how many calls, and their messageIds for forgetMessageIds once this has committed.
   */
  deleteCallsChunk(tx: WriteTx, c: ClearCutoff): { removed: number; messageIds: SourceMessageId[] } {
    const rows = this.pick.all(c.callId) as { id: number; source_key: number | null; message_id: string | null; received_at: number; status: string }[];
    if (rows.length === 0) return { removed: 0, messageIds: [] };
    const removed = this.calls.remove(tx, rows.map((r) => r.id));
    this.delRequestsBelowCalls.run(c.requestId);
    // A dropped call was never in the window (its messageId there is another call's).
    const remembered = rows.filter((r) => r.status !== 'dropped');
    return { removed, messageIds: remembered.map((r) => ({ sourceKey: r.source_key, messageId: r.message_id, receivedAt: r.received_at })) };
  }

  /** Request rows up to the cutoff that no call refers to, CLEAR_CHUNK at a time. */
  deleteRequestsChunk(c: ClearCutoff): number {
    return this.delRequests.run(c.requestId, c.callId).changes;
  }
}
