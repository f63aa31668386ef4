import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Store } from '../../src/main/engine/store/store';
import { MIGRATIONS } from '../../src/main/engine/store/migrations';
import { registerSearchFunctions } from '../../src/main/engine/store/database';
import { Ingest } from '../../src/main/engine/collector/ingest';
import { arrivalPlanner } from '../../src/main/engine/dispatcher/delivery-plan';
import { NORMALIZE_VERSION } from '../../src/shared/normalize';
import { NORMALIZE_BATCH } from '../fixtures/normalize-batch';

// Migration 10 stamps every call with the normalize rules it arrived under (README, Decisions:
// normalize once): calls stored before are version 1, and read back exactly as before. Tested on a
// database as the previous version (schema 9) left it.
const PREVIOUS = 9;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const ARRIVED = Date.parse('2026-01-01T00:00:00.000Z');
const SOURCE = '4f9c2d10-0000-4000-8000-000000000001';
const BATCH = NORMALIZE_BATCH;
const IDENTIFY = { userId: 'u-3', traits: { plan: 'pro' }, messageId: 'm-3', timestamp: '2026-01-01T00:00:00Z' };
const NOTICE = { type: 'delete', messageId: 'm-4', userId: 'u-3', timestamp: '2026-01-01T00:00:00.000Z', receivedAt: '2026-01-01T00:00:00.000Z' };
const HOOK = [{ url: 'http://127.0.0.1:9/hook', headers: {} }];

function previousDatabase(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wl-v9-'));
  dirs.push(dir);
  const db = new Database(join(dir, 'webhook-lab.db'));
  registerSearchFunctions(db); // migration 8 uses it
  for (const m of MIGRATIONS.slice(0, PREVIOUS)) db.exec(m);
  db.pragma(`user_version = ${PREVIOUS}`);
  db.prepare('INSERT INTO sources (id, name, write_key, created_at, webhooks) VALUES (?, ?, ?, ?, ?)').run(
    SOURCE, 'web', 'wk_web', ARRIVED, JSON.stringify({ enabled: true, urls: HOOK }),
  );
  db.prepare('INSERT INTO source_keys (key, source_id) VALUES (1, ?)').run(SOURCE);
  const request = db.prepare('INSERT INTO requests (id, received_at, meta, body) VALUES (?, ?, ?, ?)');
  const meta = (path: string, batchSize: number | null) => JSON.stringify({ path, contentType: 'application/json', userAgent: null, writeKeyFrom: 'basic', batchSize });
  const call = db.prepare(
    `INSERT INTO calls (id, source_key, received_at, type, user_id, anonymous_id, label, message_id, group_id, status, drop_reason, request_id, batch_index, timestamp, normalized, search)
     VALUES (?, ?, ${ARRIVED}, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'x')`,
  );
  // A batch of two (the first one's messageId generated on arrival), forwarded and delivered.
  request.run(1, ARRIVED, meta('/v1/batch', 2), JSON.stringify(BATCH));
  call.run(1, 1, 'track', '42', null, 'Signed Up', 'm-generated', null, 'accepted', null, 1, 0, ARRIVED - 5000, null);
  call.run(2, 1, 'group', null, 'a-1', null, 'm-2', '7', 'accepted', null, 1, 1, ARRIVED - 8877, null);
  db.prepare(
    `INSERT INTO deliveries (id, call_id, source_id, type, state, urls, pending_urls, round, attempt_count, last_duration_ms, body, url_states, url_mask, user_agent, signature)
     VALUES (1, 1, ?, 'track', 'delivered', ?, '[]', 1, 1, 12, x'7b7d', '[["delivered",200,1]]', 4, 'Segment.io/1.0', NULL)`,
  ).run(SOURCE, JSON.stringify(HOOK));
  // A single call on its route; a deletion notice the app made (its normalized form stored); a dropped call.
  request.run(2, ARRIVED, meta('/v1/identify', null), JSON.stringify(IDENTIFY));
  call.run(3, 1, 'identify', 'u-3', null, null, 'm-3', null, 'accepted', null, 2, null, ARRIVED, null);
  request.run(3, ARRIVED, meta('/internal/deletion', null), JSON.stringify(NOTICE));
  call.run(4, 1, 'delete', 'u-3', null, null, 'm-4', null, 'accepted', null, 3, null, ARRIVED, JSON.stringify(NOTICE));
  request.run(4, ARRIVED, meta('/v1/track', null), 'not json {');
  call.run(5, 1, 'track', null, null, null, null, null, 'dropped', 'invalid JSON', 4, null, null, null);
  db.close();
  return dir;
}

const VERSION_1 = [
  '{"type":"track","messageId":"m-generated","timestamp":"2025-12-31T23:59:55.000Z","receivedAt":"2026-01-01T00:00:00.000Z","userId":"42","event":"Signed Up","properties":{"plan":"pro"},"context":{"library":{"name":"analytics-go","version":"3.1"},"ip":"10.0.0.1"},"integrations":{"Other":false,"Webhooks":true},"originalTimestamp":"2025-12-31T23:00:05.000Z","sentAt":"2025-12-31T23:00:10.000Z"}',
  '{"type":"group","messageId":"m-2","timestamp":"2025-12-31T23:59:51.123Z","receivedAt":"2026-01-01T00:00:00.000Z","anonymousId":"a-1","groupId":"7","traits":{"size":3},"context":{"library":{"name":"analytics-go","version":"3"},"ip":"10.0.0.1"},"integrations":{"Other":false},"originalTimestamp":"2025-12-31T23:00:00.123Z","sentAt":"2025-12-31T23:00:09.000Z"}',
  '{"type":"identify","messageId":"m-3","timestamp":"2026-01-01T00:00:00.000Z","receivedAt":"2026-01-01T00:00:00.000Z","userId":"u-3","traits":{"plan":"pro"},"originalTimestamp":"2026-01-01T00:00:00.000Z"}',
  JSON.stringify(NOTICE),
  'null',
];

function versions(dir: string): Record<number, number> {
  const db = new Database(join(dir, 'webhook-lab.db'), { readonly: true });
  try {
    return Object.fromEntries((db.prepare('SELECT id, normalize_version AS v FROM calls ORDER BY id').all() as { id: number; v: number }[]).map((r) => [r.id, r.v]));
  } finally {
    db.close();
  }
}

describe(`migration from schema ${PREVIOUS}: normalize version`, () => {
  it('stamps existing calls version 1; they read back as before, summaries and detail alike', async () => {
    const dir = previousDatabase();
    let store = new Store({ dataDir: dir });
    try {
      const ids = [1, 2, 3, 4, 5];
      expect(ids.map((id) => JSON.stringify(store.calls.get(id)!.normalized))).toEqual(VERSION_1);
      expect(ids.map((id) => store.calls.get(id)!.normalizedNote)).toEqual(ids.map(() => undefined));
      expect(store.calls.get(2)!.raw).toEqual(BATCH.batch[1]);
      expect(store.calls.get(3)!.request).toMatchObject({ path: '/v1/identify', batchIndex: null });
      const page = store.calls.list({ limit: 10 }).items;
      expect(page.map((c) => [c.id, c.sourceName, c.receivedAt, c.status, c.deliveryState, c.groupId])).toEqual([
        [5, 'web', '2026-01-01T00:00:00.000Z', 'dropped', 'dropped', null],
        [4, 'web', '2026-01-01T00:00:00.000Z', 'accepted', null, null],
        [3, 'web', '2026-01-01T00:00:00.000Z', 'accepted', null, null],
        [2, 'web', '2026-01-01T00:00:00.000Z', 'accepted', null, '7'],
        [1, 'web', '2026-01-01T00:00:00.000Z', 'accepted', 'delivered', null],
      ]);
      expect(page[4]).toMatchObject({ deliveryId: 1, attemptCount: 1, latencyMs: 12, urls: [{ url: HOOK[0].url, state: 'delivered', lastStatus: 200, attempts: 1, startedAt: null }] });

      // A call arriving now is stamped with this build's rules.
      const ingest = new Ingest(store, () => ARRIVED + 1000, arrivalPlanner(() => store.settings.get()), () => {});
      const res = await ingest.handle({ path: '/v1/track', route: 'track', authorization: `Basic ${Buffer.from('wk_web:').toString('base64')}`, body: Buffer.from('{"userId":"u-9","event":"Later"}') });
      expect(res.status).toBe(200);
    } finally {
      store.close();
    }
    expect(versions(dir)).toEqual({ 1: 1, 2: 1, 3: 1, 4: 1, 5: 1, 6: NORMALIZE_VERSION });
    const db = new Database(join(dir, 'webhook-lab.db'));
    expect(db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    db.close();

    // Reopened (no migration left to run): the same again.
    store = new Store({ dataDir: dir });
    try {
      expect([1, 2, 3, 4, 5].map((id) => JSON.stringify(store.calls.get(id)!.normalized))).toEqual(VERSION_1);
    } finally {
      store.close();
    }
  });

  it('a call stored under rules this build does not have reads back as received, with a note, never re-normalized', () => {
    const dir = previousDatabase();
    new Store({ dataDir: dir }).close();
    const db = new Database(join(dir, 'webhook-lab.db'));
    db.prepare('UPDATE calls SET normalize_version = ? WHERE id IN (1, 4)').run(NORMALIZE_VERSION + 1);
    db.close();
    const store = new Store({ dataDir: dir });
    try {
      const newer = store.calls.get(1)!;
      expect(newer.normalized).toBeNull();
      expect(newer.raw).toEqual(BATCH.batch[0]);
      expect(newer.normalizedNote).toMatch(new RegExp(`newer Webhook Lab.*version ${NORMALIZE_VERSION + 1}.*as received only`));
      // Its neighbour in the same batch, and a call whose normalized form was stored, are unaffected.
      expect(JSON.stringify(store.calls.get(2)!.normalized)).toBe(VERSION_1[1]);
      expect(JSON.stringify(store.calls.get(4)!.normalized)).toBe(VERSION_1[3]);
      expect(store.calls.get(4)!.normalizedNote).toBeUndefined();
      // The list shows it as before: a summary is read from the row alone.
      expect(store.calls.list({ limit: 10 }).items.find((c) => c.id === 1)).toMatchObject({ label: 'Signed Up', deliveryState: 'delivered' });
    } finally {
      store.close();
    }
  });
});
