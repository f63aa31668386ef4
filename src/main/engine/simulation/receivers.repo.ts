import type { MockReceiver, MockRequestRecord } from '../../../shared/mock-receiver.schema';
import type { FeatureDb } from '../store/feature-db';

/** Mock receiver definitions and the requests they received (the feature's own tables). */
export class ReceiversRepo {
  private readonly upsertDef;
  private readonly allDefs;
  private readonly deleteDef;
  private readonly deleteLog;
  private readonly counts;
  private readonly newest;
  private readonly insert;
  private readonly oldestKept;
  private readonly deleteOlder;
  private readonly removeBoth;

  constructor(db: FeatureDb) {
    this.upsertDef = db.prepare(
      'INSERT INTO mock_receivers (id, name, definition, created_at) VALUES (?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET name = excluded.name, definition = excluded.definition',
    );
    this.allDefs = db.prepare('SELECT definition FROM mock_receivers ORDER BY created_at');
    this.deleteDef = db.prepare('DELETE FROM mock_receivers WHERE id = ?');
    this.deleteLog = db.prepare('DELETE FROM receiver_requests WHERE receiver_id = ?');
    this.counts = db.prepare('SELECT receiver_id AS id, COUNT(*) AS n, MAX(at) AS last FROM receiver_requests GROUP BY receiver_id');
    this.newest = db.prepare('SELECT record FROM receiver_requests WHERE receiver_id = ? ORDER BY at DESC, rowid DESC LIMIT ?');
    this.insert = db.prepare('INSERT OR IGNORE INTO receiver_requests (id, receiver_id, at, record) VALUES (?, ?, ?, ?)');
    // The oldest row kept, then up to `chunk` rows older than it: both walk the (receiver_id, at)
    // index, in the order the log is listed (at, then rowid), never the whole table.
    this.oldestKept = db.prepare('SELECT at, rowid AS rid FROM receiver_requests WHERE receiver_id = ? ORDER BY at DESC, rowid DESC LIMIT 1 OFFSET ?');
    this.deleteOlder = db.prepare(
      'DELETE FROM receiver_requests WHERE rowid IN (SELECT rowid FROM receiver_requests WHERE receiver_id = ? AND (at < ? OR (at = ? AND rowid < ?)) ORDER BY at, rowid LIMIT ?)',
    );
    this.removeBoth = db.transaction((id: string) => {
      this.deleteDef.run(id);
      this.deleteLog.run(id);
    });
  }

  definitions(): MockReceiver[] {
    return (this.allDefs.all() as { definition: string }[]).map((r) => JSON.parse(r.definition) as MockReceiver);
  }

  /** The definition and its log, in one transaction. */
  remove(id: string): void {
    this.removeBoth(id);
  }

  save(r: MockReceiver, createdAt: number): void {
    this.upsertDef.run(r.id, r.name, JSON.stringify(r), createdAt);
  }

  /** Requests logged and the time of the newest (epoch ms), per receiver that has any. */
  requestCounts(): { id: string; n: number; last: number }[] {
    return this.counts.all() as { id: string; n: number; last: number }[];
  }

  /** The newest `limit` requests of a receiver, newest first. */
  requests(receiverId: string, limit: number): MockRequestRecord[] {
    return (this.newest.all(receiverId, limit) as { record: string }[]).map((r) => JSON.parse(r.record) as MockRequestRecord);
  }

  addRequest(record: MockRequestRecord): void {
    this.insert.run(record.id, record.receiverId, Date.parse(record.at), JSON.stringify(record));
  }

  clearRequests(receiverId: string): void {
    this.deleteLog.run(receiverId);
  }

  /** Deletes up to `chunk` of the receiver's requests older than its newest `keep`; returns how many. */
  trimRequests(receiverId: string, keep: number, chunk: number): number {
    const cut = this.oldestKept.get(receiverId, keep - 1) as { at: number; rid: number } | undefined;
    return cut ? this.deleteOlder.run(receiverId, cut.at, cut.at, cut.rid, chunk).changes : 0;
  }
}
