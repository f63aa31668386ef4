import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../../src/main/engine/store/store';
import { CORE_TABLES } from '../../src/main/engine/store/feature-db';
import { ReceiversRepo } from '../../src/main/engine/simulation/receivers.repo';
import type { MockReceiver } from '../../src/shared/mock-receiver.schema';

// Issue 27: Store.featureRepo lent the raw database to a feature's repository factory. It now lends
// a FeatureDb: statements and transactions over the feature's own tables, with SQL over the store's
// tables refused when it is prepared, and none of the handle's other powers (exec, pragma, close).
const stores: Store[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function open(): Store {
  const dir = mkdtempSync(join(tmpdir(), 'wl-feature-repo-'));
  dirs.push(dir);
  const store = new Store({ dataDir: dir });
  stores.push(store);
  return store;
}

describe("Store.featureRepo: a feature's repository gets its own tables, not the handle", () => {
  it("a feature's repository works over its own tables, in a transaction too", () => {
    const store = open();
    const repo = store.featureRepo((db) => new ReceiversRepo(db));
    repo.save({ id: 'r1', name: 'ok' } as MockReceiver, 1);
    expect(repo.definitions().map((d) => d.id)).toEqual(['r1']);
    repo.remove('r1');
    expect(repo.definitions()).toEqual([]);
    const rows = store.featureRepo((db) => {
      const insert = db.prepare('INSERT INTO deletions (id, user_id, created_at, purge, purged_calls, call_ids) VALUES (?, ?, ?, 0, 0, ?)');
      db.transaction(() => {
        insert.run('d1', 'u1', 1, '[]');
        insert.run('d2', 'u2', 2, '[]');
      })();
      return db.prepare('SELECT id FROM deletions ORDER BY id').pluck().all();
    });
    expect(rows).toEqual(['d1', 'd2']);
  });

  it.each(CORE_TABLES.map((t) => [t]))('refuses SQL over the store table %s, reading or writing', (table) => {
    const store = open();
    for (const sql of [`SELECT * FROM ${table}`, `DELETE FROM ${table}`, `UPDATE ${table} SET x = 1`, `INSERT INTO ${table} DEFAULT VALUES`, `SELECT 1 FROM deletions d JOIN ${table} t ON 1`]) {
      expect(() => store.featureRepo((db) => db.prepare(sql)), sql).toThrow(new RegExp(`may not use the store's table ${table}\\b`));
    }
  });

  it('hands on no database handle: only prepare and transaction', () => {
    const store = open();
    const db = store.featureRepo((d) => d);
    expect(Object.keys(db).sort()).toEqual(['prepare', 'transaction']);
    expect('exec' in db || 'pragma' in db || 'close' in db).toBe(false);
  });
});
