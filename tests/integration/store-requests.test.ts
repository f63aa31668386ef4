import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Store } from '../../src/main/engine/store/store';
import { MIGRATIONS } from '../../src/main/engine/store/migrations';
import { PAGE_SIZE } from '../../src/main/engine/store/database';
import { Ingest, type IngestRequest } from '../../src/main/engine/collector/ingest';
import type { StoredResult } from '../../src/main/engine/store/arrivals';
import { arrivalPlanner, planDelivery } from '../../src/main/engine/dispatcher/delivery-plan';
import { openDbFile } from '../helpers/db-file';

// Request bodies are stored once (schema v4): calls read their item back from them, retention and
// purges keep them in step, and databases from before v4 keep every call readable.
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'wl-requests-'));
  dirs.push(d);
  return d;
};

function open(dataDir = tempDir()) {
  const store = new Store({ dataDir });
  const source = store.sources.create({ name: 'src', writeKey: 'wk_src' }, Date.now());
  const ingest = new Ingest(store, () => Date.now(), arrivalPlanner(() => store.settings.get()), () => {});
  const send = (route: IngestRequest['route'], body: unknown) =>
    ingest.handle({ path: route === 'batch' ? '/v1/batch' : `/v1/${route}`, route, authorization: `Basic ${Buffer.from('wk_src:').toString('base64')}`, body: Buffer.from(JSON.stringify(body)) });
  const count = (table: string) => sql(dataDir, (db) => (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n);
  return { store, source, send, count, dataDir };
}

/** A query on a connection of the test's own (the Store's handle is private), closed after. */
function sql<T>(dataDir: string, read: (db: ReturnType<typeof openDbFile>) => T, opts: { write?: boolean } = {}): T {
  const db = openDbFile(dataDir, opts);
  try {
    return read(db);
  } finally {
    db.close();
  }
}

const track = (i: number, extra: Record<string, unknown> = {}) => ({ type: 'track', userId: `u${i}`, event: `E${i}`, properties: { i }, ...extra });

describe('request bodies stored once', () => {
  it('one request row per batch; each call reads its own item and position back', async () => {
    const { store, send, count } = open();
    const batch = [track(0), track(1, { context: { 'é': '東京 😀' } }), { type: 'bogus' }];
    expect((await send('batch', { batch, sentAt: '2026-01-01T00:00:00Z' })).status).toBe(200);
    expect((await send('track', track(9))).status).toBe(200);
    expect((await send('batch', { batch: [] })).status).toBe(200);
    expect(count('requests')).toBe(2);
    const page = store.calls.list({ limit: 10 });
    const calls = page.items.map((c) => store.calls.get(c.id)!).reverse();
    expect(calls.map((c) => c.raw)).toEqual([...batch, { ...track(9), type: 'track' }]);
    expect(calls.map((c) => [c.request.path, c.request.batchIndex, c.request.batchSize])).toEqual([
      ['/v1/batch', 0, 3],
      ['/v1/batch', 1, 3],
      ['/v1/batch', 2, 3],
      ['/v1/track', null, null],
    ]);
    expect(calls[2].status).toBe('dropped');
    store.close();
  });

  it('retention removes requests with their calls and keeps those a kept call still needs', async () => {
    const { store, source, send, count, dataDir } = open();
    const requestIds = () => sql(dataDir, (db) => (db.prepare('SELECT id FROM requests ORDER BY id').all() as { id: number }[]).map((r) => r.id));
    for (let r = 0; r < 10; r++) await send('batch', { batch: [track(r * 2), track(r * 2 + 1)] });
    // An unfinished delivery on the oldest call: retention keeps that call, so its request stays.
    const oldest = store.calls.list({ limit: 100 }).items.at(-1)!;
    await store.writes.run((tx) => store.ledger.create(tx, oldest.id, source.id, 'track', { urls: [{ url: 'http://127.0.0.1:9/', headers: {} }], body: Buffer.from('{}'), userAgent: 'Segment.io/1.0', signature: null, standardWebhooks: null }));
    store.settings.apply({ retentionCalls: 6 });
    expect(store.prune()).toBe(13);
    expect(count('calls')).toBe(7);
    // Requests 1 (the kept call's) and 8–10 (the newest six calls) are needed; 2–7 are not, though
    // they are newer than the kept call's.
    expect(requestIds()).toEqual([1, 8, 9, 10]);
    const kept = store.calls.list({ limit: 100 }).items.map((c) => store.calls.get(c.id)!.raw);
    expect(kept).toEqual([track(19), track(18), track(17), track(16), track(15), track(14), track(0)]);

    sql(dataDir, (db) => db.prepare("UPDATE deliveries SET state = 'delivered'").run(), { write: true });
    expect(store.prune()).toBe(1);
    expect(requestIds()).toEqual([8, 9, 10]);
    expect(store.calls.list({ limit: 100 }).items.map((c) => store.calls.get(c.id)!.raw)).toEqual(kept.slice(0, 6));
    store.close();
  });

  it('a database from schema v3 migrates: old calls keep their item, meta and batch position', () => {
    const dataDir = tempDir();
    const old = new Database(join(dataDir, 'webhook-lab.db'));
    for (let v = 0; v < 3; v++) old.exec(MIGRATIONS[v]);
    old.pragma('user_version = 3');
    const insert = old.prepare(`INSERT INTO calls (source_id, received_at, type, user_id, anonymous_id, label, message_id, status, drop_reason, raw, request, normalized)
      VALUES ('s', 1000, 'track', 'u1', NULL, 'E', 'm1', 'accepted', NULL, ?, ?, ?)`);
    insert.run(JSON.stringify(track(1)), JSON.stringify({ path: '/v1/batch', contentType: 'application/json', userAgent: 'go', writeKeyFrom: 'basic', batchIndex: 4, batchSize: 7 }), JSON.stringify({ type: 'track', messageId: 'm1' }));
    insert.run('not json', JSON.stringify({ path: '/v1/track', contentType: null, userAgent: null, writeKeyFrom: 'body', batchIndex: null, batchSize: null }), null);
    old.close();

    const store = new Store({ dataDir });
    expect(sql(dataDir, (db) => db.pragma('user_version', { simple: true }))).toBe(MIGRATIONS.length);
    const [first, second] = [store.calls.get(1)!, store.calls.get(2)!];
    expect(first.raw).toEqual(track(1));
    // Schema v5 keys sources by integer; an id with no source row (deleted) survives.
    expect(first.sourceId).toBe('s');
    expect(first.request).toEqual({ path: '/v1/batch', contentType: 'application/json', userAgent: 'go', writeKeyFrom: 'basic', batchIndex: 4, batchSize: 7 });
    expect(first.normalized).toEqual({ type: 'track', messageId: 'm1' });
    expect(second.raw).toBe('not json');
    expect(second.request.writeKeyFrom).toBe('body');
    // An existing file keeps its page size; only new ones get PAGE_SIZE.
    expect(sql(dataDir, (db) => db.pragma('page_size', { simple: true }))).toBe(4096);
    store.close();
  });

  it('calls name their source through its key: kept after the source is deleted, filtered by id', async () => {
    const { store, source, send, dataDir } = open();
    await send('track', track(1));
    const other = store.sources.create({ name: 'other', writeKey: 'wk_other' }, Date.now());
    expect(store.calls.list({ limit: 10 }).items[0].sourceId).toBe(source.id);
    expect(store.calls.list({ sourceId: source.id, limit: 10 }).total).toBe(1);
    expect(store.calls.list({ sourceId: other.id, limit: 10 }).total).toBe(0);
    expect(store.calls.list({ sourceId: 'no-such-source', limit: 10 }).total).toBe(0);
    store.sources.delete(source.id);
    const [kept] = store.calls.list({ limit: 10 }).items;
    expect(kept.sourceId).toBe(source.id);
    expect(kept.sourceName).toBeNull();
    expect(store.calls.get(kept.id)!.sourceId).toBe(source.id);
    // The key lives on in the table, so a restart reads the same id back.
    store.close();
    const again = new Store({ dataDir });
    expect(again.calls.list({ sourceId: source.id, limit: 10 }).items.map((c) => c.sourceId)).toEqual([source.id]);
    again.close();
  });

  it('a source key created in a transaction that rolls back is forgotten with it', async () => {
    const { store, dataDir } = open();
    await expect(
      store.writes.run(() => {
        store.sourceKeys.keyOf('ghost-source');
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(store.sourceKeys.find('ghost-source')).toBeUndefined();
    const key = store.sourceKeys.keyOf('ghost-source');
    expect(sql(dataDir, (db) => db.prepare('SELECT source_id FROM source_keys WHERE key = ?').get(key))).toEqual({ source_id: 'ghost-source' });
    store.close();
  });

  it(`a new database uses ${PAGE_SIZE}-byte pages, in WAL mode`, () => {
    const { store, dataDir } = open();
    expect(sql(dataDir, (db) => db.pragma('page_size', { simple: true }))).toBe(PAGE_SIZE);
    expect(sql(dataDir, (db) => db.pragma('journal_mode', { simple: true }))).toBe('wal');
    store.close();
  });

  it('the unfiltered total is kept in memory and stays equal to COUNT(*) through inserts, retention, purges and rollbacks', async () => {
    const { store, send, count } = open();
    const truth = () => count('calls');
    const shown = () => store.calls.list({ limit: 1 }).total;
    expect(shown()).toBe(0);
    for (let r = 0; r < 5; r++) await send('batch', { batch: [track(r * 2), track(r * 2 + 1)] });
    await send('track', track(99));
    expect([shown(), truth()]).toEqual([11, 11]);

    store.settings.apply({ retentionCalls: 4 });
    store.prune();
    expect([shown(), truth()]).toEqual([4, 4]);

    // A job that inserts and then fails: the transaction rolls back, so must the running total.
    const failing = store.writes.run(() => {
      store.calls.insert({ sourceId: null, receivedAt: 1, type: 'track', userId: 'x', anonymousId: null, label: null, messageId: null, status: 'dropped', dropReason: 'test', requestId: 1, batchIndex: null, timestamp: null, normalized: null });
      throw new Error('boom');
    });
    await expect(failing).rejects.toThrow('boom');
    expect([shown(), truth()]).toEqual([4, 4]);

    // Filtered lists still count in SQL.
    expect(store.calls.list({ limit: 1, userId: 'u9' }).total).toBe(1);
    store.close();
  });

  it('a call read back is normalized exactly as on arrival: its webhook body rebuilds byte for byte', async () => {
    const dataDir = tempDir();
    const store = new Store({ dataDir });
    const source = store.sources.create({ name: 'hooks', writeKey: 'wk_hooks', webhooks: { enabled: true, urls: [{ url: 'http://127.0.0.1:9/', headers: {} }] } }, Date.now());
    const stored: StoredResult[] = [];
    const ingest = new Ingest(store, () => Date.now(), arrivalPlanner(() => store.settings.get()), (r) => stored.push(r));
    const auth = `Basic ${Buffer.from('wk_hooks:').toString('base64')}`;
    const send = (route: IngestRequest['route'], body: unknown) =>
      ingest.handle({ path: `/v1/${route}`, route, authorization: auth, body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)) });
    await send('batch', {
      sentAt: '2026-01-01T00:00:10+01:00',
      context: { library: { name: 'analytics-go', version: '3' }, ip: '10.0.0.1' },
      integrations: { Webhooks: { note: 'env' }, Other: false },
      batch: [
        { type: 'track', userId: 42, event: 'Numeric id, no messageId', timestamp: '2026-01-01T00:00:05+01:00', context: { library: { version: '3.1' } } },
        { type: 'identify', anonymousId: 'a1', traits: { plan: 'pro' }, messageId: 'm-identify', sentAt: '2026-01-01T00:00:09Z' },
        { type: 'alias', previousId: 'a1', userId: 'u1', integrations: { Webhooks: true } },
        { type: 'group', userId: 'u1', groupId: 7, traits: { size: 3 }, timestamp: '2025-12-31 23:00:00.123456Z' },
      ],
    });
    await send('page', '{"userId":"u1","name":"Home","properties":{"path":"/"},"type":"track","timestamp":"2026-01-01T00:00:00-0800"}');
    const deliveries = stored.flatMap((r) => r.deliveries);
    expect(deliveries).toHaveLength(5);
    for (const d of deliveries) {
      const call = store.calls.get(d.callId)!;
      expect(call.normalized).not.toBeNull();
      const rebuilt = planDelivery(call.normalized!, source.webhooks, store.settings.get())!;
      expect(rebuilt.body.toString()).toBe(d.body.toString());
    }
    // And the page call kept its route's type, not the body's.
    expect(store.calls.get(deliveries[4].callId)!.normalized!.type).toBe('page');
    // Nothing of this was stored twice: the normalized column is empty for collector calls.
    expect(sql(dataDir, (db) => (db.prepare('SELECT COUNT(*) AS n FROM calls WHERE normalized IS NOT NULL').get() as { n: number }).n)).toBe(0);
    store.close();
  });
});
