import type { Db } from './database';
import type { QueuedBatchItem } from './delivery.types';

// Webhooks (Actions) in the call ledger: calls waiting for their mapping's batch
// (actions_batch_items), and whether the store holds anything of Actions at all. Lists and details
// of Classic-only data never pay for Actions: the extra queries run only once `seen()` (kept in
// memory, rebuilt at start from the tables). What is read here; the items are queued and taken out by
// the delivery ledger's named operations (delivery-ledger.ts), with the deliveries they become.

export interface BatchGroup {
  sourceId: string;
  mapping: string;
  count: number;
  /** Epoch ms the oldest waiting item was queued. */
  firstQueuedAt: number;
}

export class ActionsLedger {
  private any: boolean;
  private readonly takeStmt;
  private readonly groupsStmt;
  private readonly groupStmt;
  private readonly ofSourceStmt;

  constructor(private readonly db: Db) {
    this.any =
      db.prepare('SELECT 1 FROM delivery_calls LIMIT 1').get() !== undefined || db.prepare('SELECT 1 FROM actions_batch_items LIMIT 1').get() !== undefined;
    // The batch's body is `[` + items joined by `,` + `]` (an empty item is `null`): `run` is its size
    // up to and including each item, so a batch stops before the item that would pass maxBytes
    // without reading the items after it. The first item always goes.
    this.takeStmt = db.prepare(`SELECT * FROM (SELECT b.*, c.type AS call_type,
        1 + SUM(CASE WHEN b.data = '' THEN 4 ELSE length(CAST(b.data AS BLOB)) END + 1) OVER (ORDER BY b.id ROWS UNBOUNDED PRECEDING) AS run,
        ROW_NUMBER() OVER (ORDER BY b.id) AS n
      FROM actions_batch_items b LEFT JOIN calls c ON c.id = b.call_id
      WHERE b.source_id = @sourceId AND b.mapping = @mapping
        AND b.target = (SELECT o.target FROM actions_batch_items o WHERE o.source_id = @sourceId AND o.mapping = @mapping ORDER BY o.id LIMIT 1)
      ORDER BY b.id LIMIT @limit) WHERE n = 1 OR run <= @maxBytes ORDER BY id`);
    this.groupsStmt = db.prepare(
      'SELECT source_id, mapping, COUNT(*) AS count, MIN(queued_at) AS first FROM actions_batch_items GROUP BY source_id, mapping',
    );
    this.groupStmt = db.prepare('SELECT COUNT(*) AS count, MIN(queued_at) AS first FROM actions_batch_items WHERE source_id = ? AND mapping = ?');
    this.ofSourceStmt = db.prepare('SELECT DISTINCT mapping FROM actions_batch_items WHERE source_id = ?').pluck();
  }

  /** Whether any Actions delivery or batch item was ever stored (since the tables were last found empty at start). */
  seen(): boolean {
    return this.any;
  }

  /** An Actions delivery or batch item was written (delivery-ledger.ts). */
  noteActions(): void {
    this.any = true;
  }

  /**
   * The oldest `limit` items of a (source, mapping) batch, in queue order, as many of them as make a
   * body of at most `maxBytes` (at least one), all going where the oldest goes: items whose directives
   * resolved to another URL or headers wait for a batch of their own, as Segment's batch keys keep them apart.
   */
  take(sourceId: string, mapping: string, limit: number, maxBytes = Number.MAX_SAFE_INTEGER): QueuedBatchItem[] {
    return (this.takeStmt.all({ sourceId, mapping, limit, maxBytes }) as ItemRow[]).map((r) => ({
      id: r.id,
      sourceId: r.source_id,
      mapping: r.mapping,
      callId: r.call_id,
      data: r.data,
      target: r.target,
      queuedAt: r.queued_at,
      callType: r.call_type ?? 'track',
    }));
  }

  /** Every batch with items waiting (at start: leftovers). */
  groups(): BatchGroup[] {
    return (this.groupsStmt.all() as { source_id: string; mapping: string; count: number; first: number }[]).map((r) => ({
      sourceId: r.source_id,
      mapping: r.mapping,
      count: r.count,
      firstQueuedAt: r.first,
    }));
  }

  /** One batch's size and age; null when empty. */
  group(sourceId: string, mapping: string): BatchGroup | null {
    const r = this.groupStmt.get(sourceId, mapping) as { count: number; first: number | null };
    return r.count === 0 ? null : { sourceId, mapping, count: r.count, firstQueuedAt: r.first! };
  }

  /** The mappings of a source with items waiting. */
  mappingsWaiting(sourceId: string): string[] {
    return this.ofSourceStmt.all(sourceId) as string[];
  }
}

interface ItemRow {
  id: number;
  source_id: string;
  mapping: string;
  call_id: number;
  data: string;
  target: string;
  queued_at: number;
  call_type: string | null;
}
