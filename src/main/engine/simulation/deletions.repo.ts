import type { FeatureDb } from '../store/feature-db';

/** One deletion request as stored (the feature's own table; its notices are calls in the store). */
export interface DeletionRow {
  id: string;
  user_id: string;
  created_at: number;
  purge: number;
  purged_calls: number;
  /** JSON: the notices sent, with the source's name as it was (the source may be deleted later). */
  call_ids: string;
}

/** The deletions table: requests are added and listed, newest first; never changed. */
export class DeletionsRepo {
  private readonly insert;
  private readonly all;

  constructor(db: FeatureDb) {
    this.insert = db.prepare('INSERT INTO deletions (id, user_id, created_at, purge, purged_calls, call_ids) VALUES (@id, @user_id, @created_at, @purge, @purged_calls, @call_ids)');
    this.all = db.prepare('SELECT * FROM deletions ORDER BY created_at DESC, rowid DESC');
  }

  add(row: DeletionRow): void {
    this.insert.run(row);
  }

  list(): DeletionRow[] {
    return this.all.all() as DeletionRow[];
  }
}
