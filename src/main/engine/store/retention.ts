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
  const chunk = o.chunk ?? CHUNK;
  let chunks = o.maxChunks ?? Infinity;
  const cutoffRow = db.prepare('SELECT id FROM calls ORDER BY id DESC LIMIT 1 OFFSET ?').get(keep) as { id: number } | undefined;
  if (!cutoffRow) return { removed: 0, more: false };
  const cutoff = cutoffRow.id + 1;
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
  if (removed > 0) {
    db.prepare(
      `DELETE FROM requests WHERE id < COALESCE((SELECT request_id FROM calls WHERE id >= @cutoff ORDER BY id LIMIT 1), (SELECT MAX(id) + 1 FROM requests))
        AND id NOT IN (SELECT request_id FROM calls WHERE id < @cutoff)`,
    ).run({ cutoff });
  }
  return { removed, more };
}
