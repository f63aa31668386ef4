import type { Db } from './database';
import type { CallsRepo } from './calls.repo';
import { ownTransaction } from './write-queue';
import { UNFINISHED_SQL } from './delivery-states';

/** Calls per chunk when retention runs beside the lab's other work (5,000 held the loop for seconds; so did 1,000 on a loaded machine). */
export const SLICE_CHUNK = 250;

/** Calls the cutoff's search counts per slice: about 2 ms of the loop on this machine. */
export const CUTOFF_STEP = 25_000;

/**
 * Retention a slice at a time (the engine runs one a turn of the loop, each ≤ 20 ms). Finding the
 * cutoff means counting `keep` calls down from the newest: 200,000 at the default, 10-30 ms in one
 * go. So the count is made in steps of CUTOFF_STEP, below the newest id when the run began (calls
 * arriving meanwhile are above it and only add to what is kept), and the cutoff found serves every
 * slice of the run. A run starts over when anything else removed calls (a clear, an erasure: the
 * count below the anchor would be too high, and the cutoff too high, removing calls it must keep)
 * or the limit changed.
 */
export class RetentionRun {
  private run: { keep: number; removals: number; at: number; counted: number; cutoff: number | null } | null = null;
  private readonly newest;
  private readonly nthBelow;
  private readonly pick;
  private readonly delRequests;
  private readonly delRequestsKept;
  /**
   * The cleanup owed for calls removed by a run that did not get to it (started over, or the cleanup
   * failed): the highest cutoff such a run had. Any cutoff is safe for it (it deletes only requests no
   * call refers to), and a higher one covers a lower one.
   */
  private owedCutoff: number | null = null;

  constructor(
    private readonly db: Db,
    private readonly calls: CallsRepo,
    private readonly step = CUTOFF_STEP,
  ) {
    // At least one call a slice, or a run would never end.
    this.step = Math.max(1, Math.floor(step));
    this.newest = db.prepare('SELECT MAX(id) FROM calls').pluck();
    this.nthBelow = db.prepare('SELECT id FROM calls WHERE id < ? ORDER BY id DESC LIMIT 1 OFFSET ?').pluck();
    // A call an unfinished delivery carries (an Actions one: any member of a batch, not only its
    // row's call_id), or waiting in a batch, is kept: pruning must not lose work the dispatcher
    // still owes a receiver.
    this.pick = db
      .prepare(
        `SELECT c.id FROM calls c LEFT JOIN deliveries d ON d.call_id = c.id AND d.kind = 'classic'
          WHERE c.id < ? AND (d.id IS NULL OR d.state NOT IN ${UNFINISHED_SQL})
            AND NOT EXISTS (SELECT 1 FROM delivery_calls dc JOIN deliveries a ON a.id = dc.delivery_id
              WHERE dc.call_id = c.id AND a.state IN ${UNFINISHED_SQL})
            AND NOT EXISTS (SELECT 1 FROM actions_batch_items b WHERE b.call_id = c.id) ORDER BY c.id LIMIT ?`,
      )
      .pluck();
    // Calls are written in request order: while pruning, every request older than the oldest
    // remaining call's is unreferenced.
    this.delRequests = db.prepare('DELETE FROM requests WHERE id < COALESCE((SELECT request_id FROM calls ORDER BY id LIMIT 1), (SELECT MAX(id) + 1 FROM requests))');
    // Once a run is over, the calls left below its cutoff are only those kept for their delivery (few),
    // and any other request below the newest calls' is unreferenced too: without this, one call
    // retrying for hours would keep every request body received after it.
    this.delRequestsKept = db.prepare(
      `DELETE FROM requests WHERE id < COALESCE((SELECT request_id FROM calls WHERE id >= @cutoff ORDER BY id LIMIT 1), (SELECT MAX(id) + 1 FROM requests))
        AND id NOT IN (SELECT request_id FROM calls WHERE id < @cutoff)`,
    );
  }

  slice(keep: number, chunk: number): { removed: number; more: boolean } {
    let r = this.run;
    if (r === null || r.keep !== keep || r.removals !== this.calls.removals) {
      // The running total (in memory) says whether there is anything to do at all.
      const newest = this.calls.count() > keep ? (this.newest.get() as number | null) : null;
      if (newest === null) return this.done({ removed: 0, more: false });
      r = this.run = { keep, removals: this.calls.removals, at: newest + 1, counted: 0, cutoff: null };
    }
    if (r.cutoff === null) {
      // Counts up to `step` more calls down from `at`; once `keep` are counted, the next one below is the newest to go.
      const skip = Math.min(this.step, r.keep - r.counted);
      const reached = skip > 0 ? (this.nthBelow.get(r.at, skip - 1) as number | undefined) : r.at;
      if (reached === undefined) return this.done({ removed: 0, more: false });
      r.at = reached;
      r.counted += skip;
      if (r.counted < r.keep) return { removed: 0, more: true };
      const newestToGo = this.nthBelow.get(r.at, 0) as number | undefined;
      if (newestToGo === undefined) return this.done({ removed: 0, more: false });
      r.cutoff = newestToGo + 1;
      return { removed: 0, more: true };
    }
    const ids = this.pick.all(r.cutoff, chunk) as number[];
    if (ids.length > 0) {
      // Each chunk its own short transaction: the collector's group commits are never held up for long.
      ownTransaction(this.db, (tx) => {
        this.calls.retire(ids, Date.now());
        this.calls.remove(tx, ids);
        this.delRequests.run();
      });
    }
    this.calls.expireRetired(Date.now());
    if (ids.length > 0) this.owedCutoff = Math.max(this.owedCutoff ?? 0, r.cutoff);
    // Its own removals do not start the run over.
    r.removals = this.calls.removals;
    if (ids.length === chunk) return { removed: ids.length, more: true };
    // Over: the cleanup is owed for every call removed (by this run, or one that did not finish), once.
    if (this.owedCutoff !== null) {
      this.delRequestsKept.run({ cutoff: this.owedCutoff });
      this.owedCutoff = null;
    }
    return this.done({ removed: ids.length, more: false });
  }

  /** Forgets the run (after a failed slice: the next one starts over). */
  reset(): void {
    this.run = null;
  }

  private done<T>(result: T): T {
    this.run = null;
    return result;
  }
}
