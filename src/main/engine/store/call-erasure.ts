import type { Db } from './database';
import type { CallsRepo } from './calls.repo';
import type { RequestsRepo } from './requests.repo';
import type { WriteTx } from './write-queue';

type CallRef = { id: number; requestId: number; batchIndex: number | null };

/**
 * Erasing chosen calls: their rows with deliveries and attempts, and their items from the stored
 * request bodies (the rest of a batch stays readable). A deletion request erases a user's calls,
 * the demo erases the calls it made. Callers run these inside one write-queue job (one transaction).
 */
export class CallErasure {
  private readonly userCalls;
  private readonly byId;

  constructor(
    db: Db,
    private readonly calls: CallsRepo,
    private readonly requests: RequestsRepo,
  ) {
    // Deletion notices are left out: they are the record of what was asked of receivers.
    this.userCalls = db.prepare("SELECT id, request_id AS requestId, batch_index AS batchIndex FROM calls WHERE user_id = ? AND type != 'delete'");
    this.byId = db.prepare('SELECT id, request_id AS requestId, batch_index AS batchIndex FROM calls WHERE id IN (SELECT value FROM json_each(?))');
  }

  /** The user's calls except deletion notices; returns how many calls were removed. */
  ofUser(tx: WriteTx, userId: string): number {
    return this.erase(tx, this.userCalls.all(userId) as CallRef[]);
  }

  /** The calls with these ids (ids no longer stored are skipped); returns how many were removed. */
  ofCalls(tx: WriteTx, ids: number[]): number {
    return this.erase(tx, this.byId.all(JSON.stringify(ids)) as CallRef[]);
  }

  private erase(tx: WriteTx, rows: CallRef[]): number {
    this.requests.redact(rows);
    return this.calls.remove(tx, rows.map((r) => r.id));
  }
}
