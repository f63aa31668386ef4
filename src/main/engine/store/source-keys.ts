import type { Db } from './database';

/**
 * The small integer a call row stores for its source (schema v5), and back. A handful of rows, kept
 * in memory. A key is created with its source and never deleted or reused, so the calls of a
 * deleted source still name it; only the keys of sources a config import wrote and took back (never
 * sources, so no call names them) are deleted.
 */
export class SourceKeys {
  private readonly byId = new Map<string, number>();
  private readonly byKey = new Map<number, string>();
  private readonly insertStmt;

  constructor(private readonly db: Db) {
    this.insertStmt = db.prepare('INSERT INTO source_keys (source_id) VALUES (?)');
    this.reload();
  }

  /** The key of a source id, created (in the caller's transaction, if any) on first use. */
  keyOf(sourceId: string): number {
    const known = this.byId.get(sourceId);
    if (known !== undefined) return known;
    const key = Number(this.insertStmt.run(sourceId).lastInsertRowid);
    this.byId.set(sourceId, key);
    this.byKey.set(key, sourceId);
    return key;
  }

  /** The key of a source id if it has one; for filters, which must not create keys. */
  find(sourceId: string): number | undefined {
    return this.byId.get(sourceId);
  }

  idOf(key: number | null): string | null {
    return key === null ? null : (this.byKey.get(key) ?? null);
  }

  /** Keys deleted with sources that never were (a config import taken back: sources.repo.ts unstage). */
  forget(sourceIds: string[]): void {
    for (const id of sourceIds) {
      const key = this.byId.get(id);
      this.byId.delete(id);
      if (key !== undefined) this.byKey.delete(key);
    }
  }

  /** After a rollback a key created in it never landed: read the table again. */
  reload(): void {
    this.byId.clear();
    this.byKey.clear();
    for (const r of this.db.prepare('SELECT key, source_id FROM source_keys').all() as { key: number; source_id: string }[]) {
      this.byId.set(r.source_id, r.key);
      this.byKey.set(r.key, r.source_id);
    }
  }
}
