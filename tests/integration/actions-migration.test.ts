import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Store } from '../../src/main/engine/store/store';
import { MIGRATIONS } from '../../src/main/engine/store/migrations';
import { registerSearchFunctions } from '../../src/main/engine/store/database';
import { openDbFile } from '../helpers/db-file';

// Migration 11 (Webhooks Actions) rebuilds deliveries without UNIQUE(call_id) and adds its columns,
// delivery_calls and actions_batch_items. Tested on a database as the previous version (schema 10)
// left it, with a delivered and a retrying delivery and their attempts.
const PREVIOUS = 10;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function previousDatabase(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wl-v10-'));
  dirs.push(dir);
  const db = new Database(join(dir, 'webhook-lab.db'));
  registerSearchFunctions(db);
  for (const m of MIGRATIONS.slice(0, PREVIOUS)) db.exec(m);
  db.pragma(`user_version = ${PREVIOUS}`);
  db.prepare("INSERT INTO sources (id, name, write_key, created_at, webhooks) VALUES ('s1', 'Web', 'wk', 1, ?)").run(
    JSON.stringify({ enabled: true, urls: [{ url: 'http://127.0.0.1:9/a', headers: {} }], sharedSecret: 'sh' }),
  );
  db.prepare("INSERT INTO source_keys (key, source_id) VALUES (1, 's1')").run();
  db.prepare("INSERT INTO requests (id, received_at, meta, body) VALUES (1, 1000, '{}', ?)").run(
    JSON.stringify({ batch: [{ type: 'track', userId: 'u1', event: 'A', messageId: 'm-1' }, { type: 'track', userId: 'u2', event: 'B', messageId: 'm-2' }] }),
  );
  const call = db.prepare(
    "INSERT INTO calls (id, source_key, received_at, type, user_id, label, message_id, status, request_id, batch_index, search) VALUES (?, 1, 1000, 'track', ?, ?, ?, 'accepted', 1, ?, ?)",
  );
  call.run(1, 'u1', 'A', 'm-1', 0, 'u1 a m-1');
  call.run(2, 'u2', 'B', 'm-2', 1, 'u2 b m-2');
  const urls = JSON.stringify([{ url: 'http://127.0.0.1:9/a', headers: {} }]);
  const delivery = db.prepare(`INSERT INTO deliveries (id, call_id, source_id, type, state, urls, pending_urls, round, attempt_count, next_attempt_at,
    first_attempt_at, last_attempt_at, delivered_at, last_error, body, url_states, url_mask, user_agent, signature)
    VALUES (?, ?, 's1', 'track', ?, ?, ?, 1, 1, ?, 1000, 1000, ?, ?, ?, ?, ?, 'Segment.io/1.0', 'abc')`);
  delivery.run(1, 1, 'delivered', urls, '[]', null, 1010, null, Buffer.from('{"event":"A"}'), JSON.stringify([['delivered', 200, 1]]), 4);
  delivery.run(2, 2, 'retrying', urls, '[0]', 99_999_999_999_999, null, 'http://127.0.0.1:9/a: HTTP 500', Buffer.from('{"event":"B"}'), JSON.stringify([['retrying', 500, 1]]), 8);
  const attempt = db.prepare(`INSERT INTO attempts (delivery_id, round, url_index, url, trigger, started_at, duration_ms, request_headers, signature,
    response_status, outcome) VALUES (?, 1, 0, 'http://127.0.0.1:9/a', 'scheduled', 1000, 5, '{}', 'abc', ?, ?)`);
  attempt.run(1, 200, 'success');
  attempt.run(2, 500, 'retryable');
  db.close();
  return dir;
}

describe(`migration from schema ${PREVIOUS}: Webhooks (Actions) deliveries`, () => {
  it('keeps every delivery and attempt as Classic, drops UNIQUE(call_id) for one unique (call, kind, mapping) index, adds the Actions tables', async () => {
    const dir = previousDatabase();
    const store = new Store({ dataDir: dir });
    try {
      const page = store.calls.list({ limit: 10 }).items;
      expect(page.map((c) => [c.id, c.deliveryState, c.deliveryId, c.urls.map((u) => [u.state, u.lastStatus, u.via])])).toEqual([
        [2, 'retrying', 2, [['retrying', 500, undefined]]],
        [1, 'delivered', 1, [['delivered', 200, undefined]]],
      ]);
      const [d1] = store.deliveries.forCall(1);
      expect(d1).toMatchObject({ id: 1, kind: 'classic', mapping: null, method: 'POST', itemCount: 1, swId: null, body: '{"event":"A"}' });
      expect(d1.callIds).toBeUndefined();
      expect(d1.attempts.map((a) => a.responseStatus)).toEqual([200]);
      expect(store.deliveries.resumable(Number.MAX_SAFE_INTEGER, 0, 1000).map((d) => [d.id, d.kind, d.method, d.mapping, d.itemCount, d.standardWebhooks])).toEqual([[2, 'classic', 'POST', null, 1, null]]);
      expect(store.calls.list({ status: 'retrying', limit: 10 }).items.map((c) => c.id)).toEqual([2]);
      expect(store.actions.seen()).toBe(false);

      // A call can now have an Actions delivery besides its Classic one; a second Classic one is refused.
      const plan = { urls: [{ url: 'http://127.0.0.1:9/b', headers: {} }], body: Buffer.from('{"x":1}'), userAgent: 'Segment (Actions)', signature: null, standardWebhooks: null };
      const actionsId = await store.writes.run((tx) =>
        store.ledger.createActions(tx, 's1', 'track', { ...plan, mapping: 'm', method: 'PUT', timeoutMs: 10_000, callIds: [1] }).id,
      );
      await expect(store.writes.run((tx) => store.ledger.create(tx, 1, 's1', 'track', plan))).rejects.toThrow(/UNIQUE/);
      expect(store.deliveries.forCall(1).map((d) => [d.id, d.kind, d.mapping, d.method])).toEqual([
        [1, 'classic', null, 'POST'],
        [actionsId, 'actions', 'm', 'PUT'],
      ]);
      expect(store.actions.seen()).toBe(true);

      const file = openDbFile(dir);
      expect(file.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
      const indexes = (file.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('deliveries', 'delivery_calls', 'actions_batch_items') AND sql IS NOT NULL ORDER BY name").pluck().all() as string[]);
      // deliveries_parked comes with migration 12 (receiver lanes), deliveries_sw_version with 17 (secret versions), which run after this one.
      expect(indexes).toEqual(['actions_batch_items_batch', 'actions_batch_items_call', 'deliveries_call', 'deliveries_due', 'deliveries_parked', 'deliveries_sw_version', 'delivery_calls_call']);
      // The summary's join reads the unique index, not the table.
      const plan2 = file.prepare("EXPLAIN QUERY PLAN SELECT d.id FROM calls c LEFT JOIN deliveries d ON d.call_id = c.id AND d.kind = 'classic' WHERE c.id = 1").all() as { detail: string }[];
      expect(plan2.map((p) => p.detail).join('\n')).toMatch(/deliveries_call/);
      file.close();
    } finally {
      store.close();
    }
  });
});
