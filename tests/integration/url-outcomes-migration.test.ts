import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Store } from '../../src/main/engine/store/store';
import { MIGRATIONS } from '../../src/main/engine/store/migrations';

// Schema v6 keeps each delivery's per-URL outcomes on its row. A database written by v5 gets them
// from its attempts rows when it is opened.
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A v5 database, as the previous version left it: deliveries and attempts, no per-URL columns. */
function v5Database(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wl-v5-'));
  dirs.push(dir);
  const db = new Database(join(dir, 'webhook-lab.db'));
  for (const m of MIGRATIONS.slice(0, 5)) db.exec(m);
  db.pragma('user_version = 5');
  const urls = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => ({ url: `http://127.0.0.1:9/u${i}`, headers: {} })));
  const call = db.prepare("INSERT INTO calls (id, source_key, received_at, type, status, request_id) VALUES (?, NULL, 1, 'track', 'accepted', ?)");
  db.prepare("INSERT INTO requests (id, received_at, meta, body) VALUES (1, 1, '{}', '{}')").run();
  const delivery = db.prepare("INSERT INTO deliveries (id, call_id, source_id, type, state, urls, pending_urls, round, body) VALUES (?, ?, 's', 'track', ?, ?, ?, ?, x'7b7d')");
  const attempt = db.prepare(
    "INSERT INTO attempts (delivery_id, round, url_index, url, trigger, started_at, duration_ms, request_headers, response_status, outcome) VALUES (?, ?, ?, 'u', 'scheduled', 1, 1, '{}', ?, ?)",
  );
  // 1: delivered by URL 0; URL 1 answered 500 and URL 2 failed TLS in the same round.
  call.run(1, 1);
  delivery.run(1, 1, 'delivered', urls(3), '[]', 1);
  attempt.run(1, 1, 0, 200, 'success');
  attempt.run(1, 1, 1, 500, 'retryable');
  attempt.run(1, 1, 2, null, 'failed');
  // 2: retrying its only URL after a 503.
  call.run(2, 1);
  delivery.run(2, 2, 'retrying', urls(1), '[0]', 1);
  attempt.run(2, 1, 0, 503, 'retryable');
  // 3: stored, never attempted.
  call.run(3, 1);
  delivery.run(3, 3, 'pending', urls(2), '[0,1]', 0);
  // 4: expired after two 500s on URL 0; URL 1 answered 404 in the first round.
  call.run(4, 1);
  delivery.run(4, 4, 'expired', urls(2), '[]', 2);
  attempt.run(4, 1, 0, 500, 'retryable');
  attempt.run(4, 1, 1, 404, 'failed');
  attempt.run(4, 2, 0, 500, 'retryable');
  // 5: not forwarded.
  call.run(5, 1);
  db.close();
  return dir;
}

describe('migration to v6: per-URL outcomes of existing deliveries', () => {
  it('derives each URL state, last status and attempt count from the attempts; the urlState filter finds them', () => {
    const store = new Store({ dataDir: v5Database() });
    try {
      const byId = new Map(store.calls.list({ limit: 10 }).items.map((c) => [c.id, c.urls.map((u) => [u.state, u.lastStatus, u.attempts])]));
      expect(Object.fromEntries(byId)).toEqual({
        1: [['delivered', 200, 1], ['failed', 500, 1], ['failed', null, 1]],
        2: [['retrying', 503, 1]],
        3: [['pending', null, 0], ['pending', null, 0]],
        4: [['expired', 500, 2], ['failed', 404, 1]],
        5: [],
      });
      const ids = (urlState: 'failed' | 'retrying' | 'pending' | 'expired' | 'delivered' | 'not_attempted') =>
        store.calls.list({ urlState, limit: 10 }).items.map((c) => c.id);
      expect(ids('failed')).toEqual([4, 1]);
      expect(ids('retrying')).toEqual([2]);
      expect(ids('pending')).toEqual([3]);
      expect(ids('expired')).toEqual([4]);
      expect(ids('delivered')).toEqual([1]);
      expect(ids('not_attempted')).toEqual([]);
      expect(store.calls.list({ urlState: 'failed', limit: 10 }).total).toBe(2);
    } finally {
      store.close();
    }
  });
});
