import type { Db } from './database';
import type { CallsRepo } from './calls.repo';
import { ownTransaction } from './write-queue';

const CHUNK = 5000;
/** Calls per chunk when retention runs beside the lab's other work (5,000 held the loop for seconds; so did 1,000 on a loaded machine). */
export const SLICE_CHUNK = 250;

/**
 * Keeps the newest `keep` calls. Deletes in small chunks (each its own short transaction) so the
 * collector's group commits are never held up for long. Calls whose delivery is still unfinished
 * are kept: pruning must not lose work the dispatcher still owes a receiver.
 *
 * Request rows go with their calls. Calls are written in request order, so while pruning, every
 * request older than the oldest remaining call's is unreferenced. Once done, the calls left below the
 * cutoff are only those kept for their delivery (few), and any other request below the newest calls'
 * is unreferenced too: without that pass, one call retrying for hours would keep every request body
 * received after it.
 */
export function pruneCalls(db: Db, calls: CallsRepo, keep: number, o: { chunk?: number; maxChunks?: number } = {}): { removed: number; more: boolean } {
  const cutoffRow = db.prepare('SELECT id FROM calls ORDER BY id DESC LIMIT 1 OFFSET ?').get(keep) as { id: number } | undefined;
  if (!cutoffRow) return { removed: 0, more: false };
  return pruneBelow(db, calls, cutoffRow.id + 1, o);
}

/**
 * Removes the calls below `cutoff` but those a delivery still needs, `chunk` at a time. `removedBefore`:
 * calls the run's earlier slices removed (the cleanup once it is over is owed for those too).
 */
function pruneBelow(db: Db, calls: CallsRepo, cutoff: number, o: { chunk?: number; maxChunks?: number }, removedBefore = 0): { removed: number; more: boolean } {
  const chunk = o.chunk ?? CHUNK;
  let chunks = o.maxChunks ?? Infinity;
  // A call an unfinished Actions delivery carries (any member of a batch, not only its row's
  // call_id), or waiting in a batch, is kept as well.
  const pick = db.prepare(`SELECT c.id FROM calls c LEFT JOIN deliveries d ON d.call_id = c.id AND d.kind = 'classic'
    WHERE c.id < ? AND (d.id IS NULL OR d.state NOT IN ('pending', 'in_flight', 'retrying'))
      AND NOT EXISTS (SELECT 1 FROM delivery_calls dc JOIN deliveries a ON a.id = dc.delivery_id
        WHERE dc.call_id = c.id AND a.state IN ('pending', 'in_flight', 'retrying'))
      AND NOT EXISTS (SELECT 1 FROM actions_batch_items b WHERE b.call_id = c.id) ORDER BY c.id LIMIT ${chunk}`);
  const delRequests = db.prepare(
    'DELETE FROM requests WHERE id < COALESCE((SELECT request_id FROM calls ORDER BY id LIMIT 1), (SELECT MAX(id) + 1 FROM requests))',
  );
  let removed = 0;
  let more = false;
  for (;;) {
    const ids = (pick.all(cutoff) as { id: number }[]).map((r) => r.id);
    if (ids.length === 0) break;
    ownTransaction(db, (tx) => {
      calls.retire(ids, Date.now());
      calls.remove(tx, ids);
      delRequests.run();
    });
    removed += ids.length;
    if (ids.length < chunk) break;
    if (--chunks <= 0) {
      more = true;
      break;
    }
  }
  calls.expireRetired(Date.now());
  // Only once no more are left below the cutoff: the calls below it are then the few kept for their
  // delivery. Run after every slice, it read every call still waiting below the cutoff each time.
  if (removed + removedBefore > 0 && !more) {
    db.prepare(
      `DELETE FROM requests WHERE id < COALESCE((SELECT request_id FROM calls WHERE id >= @cutoff ORDER BY id LIMIT 1), (SELECT MAX(id) + 1 FROM requests))
        AND id NOT IN (SELECT request_id FROM calls WHERE id < @cutoff)`,
    ).run({ cutoff });
  }
  return { removed, more };
}

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
  private run: { keep: number; removals: number; at: number; counted: number; cutoff: number | null; removed: number } | null = null;
  private readonly newest;
  private readonly nthBelow;

  constructor(
    private readonly db: Db,
    private readonly calls: CallsRepo,
    private readonly step = CUTOFF_STEP,
  ) {
    this.newest = db.prepare('SELECT MAX(id) FROM calls').pluck();
    this.nthBelow = db.prepare('SELECT id FROM calls WHERE id < ? ORDER BY id DESC LIMIT 1 OFFSET ?').pluck();
  }

  slice(keep: number, chunk: number): { removed: number; more: boolean } {
    let r = this.run;
    if (r === null || r.keep !== keep || r.removals !== this.calls.removals) {
      // The running total (in memory) says whether there is anything to do at all.
      const newest = this.calls.count() > keep ? (this.newest.get() as number | null) : null;
      if (newest === null) return this.done({ removed: 0, more: false });
      r = this.run = { keep, removals: this.calls.removals, at: newest + 1, counted: 0, cutoff: null, removed: 0 };
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
    const result = pruneBelow(this.db, this.calls, r.cutoff, { chunk, maxChunks: 1 }, r.removed);
    r.removed += result.removed;
    // Its own removals do not start the run over.
    r.removals = this.calls.removals;
    return result.more ? result : this.done(result);
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
