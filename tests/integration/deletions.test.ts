import { describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { waitFor, webhookSource, type TestEngine } from '../helpers/engine';
import type { TestReceiver } from '../helpers/receiver';
import { testLab } from '../helpers/test-lab';
import { sentBody } from '../../src/shared/attempt-body';

// Deletion requests end to end (SPEC §6): collector → notices through ingest.inject → signed POSTs.
const SECRET = 'del-s3cret';
const lab = testLab();

function receiver(status = 200) {
  return lab.receiver((_req, res) => res.writeHead(status).end());
}

const hmac = (body: Buffer) => createHmac('sha1', SECRET).update(body).digest('hex');
const json = (b: Buffer) => JSON.parse(b.toString()) as Record<string, unknown>;

async function settled(t: TestEngine) {
  await waitFor(async () => {
    const page = await t.call('listMessages', { limit: 200 });
    return page.items.every((c) => c.deliveryState === null || ['delivered', 'failed', 'expired', 'dropped'].includes(c.deliveryState));
  }, 'every delivery to finish');
}

/** One source with Webhooks to `r`, retrying a failed round once after `delayMs`. */
function engineRetryingAfter(r: TestReceiver, delayMs: number) {
  return lab.start({
    config: {
      sources: [webhookSource('web', 'wk_web', [`${r.url}/h`])],
      settings: { retrySchedule: { preset: 'custom', delaysMs: [delayMs], jitter: 0, windowMs: 60_000 } },
    },
  });
}

/** A second connection to the engine's database, writing while the engine runs. */
function openLive(t: TestEngine) {
  const db = new Database(join(t.dataDir, 'webhook-lab.db'));
  db.pragma('busy_timeout = 5000');
  return db;
}

async function doneDeletion(t: TestEngine, id: string, status = 'done') {
  return waitFor(async () => (await t.call('listDeletions', {})).find((d) => d.id === id && d.status === status), `deletion ${status}`);
}

describe('deletion requests', () => {
  it('fans out one signed delete per affected source, purges history, and reports done', async () => {
    const [ra, rb, rc] = [await receiver(), await receiver(), await receiver()];
    const t = await lab.start({
      config: {
        sources: [
          webhookSource('web', 'wk_web', [`${ra.url}/a`], SECRET),
          webhookSource('ios', 'wk_ios', [`${rb.url}/b`], SECRET),
          webhookSource('backend', 'wk_backend', [`${rc.url}/c`], SECRET),
        ],
        settings: { payloadFormat: 'documented' },
      },
    });
    await t.post('/v1/identify', { userId: 'u-del', traits: { email: 'gone@example.com' } }, { writeKey: 'wk_web' });
    await t.post('/v1/track', { userId: 'u-del', event: 'Viewed' }, { writeKey: 'wk_web' });
    await t.post('/v1/track', { userId: 'u-del', event: 'Opened' }, { writeKey: 'wk_ios' });
    await t.post('/v1/track', { userId: 'u-keep', event: 'Viewed' }, { writeKey: 'wk_web' });
    await t.post('/v1/track', { userId: 'u-keep', event: 'Called' }, { writeKey: 'wk_backend' });
    await settled(t);
    expect([ra.requests.length, rb.requests.length, rc.requests.length]).toEqual([3, 1, 1]);

    const before = Date.now();
    const del = await t.call('createDeletion', { userId: 'u-del', purge: true });
    expect(del).toMatchObject({ userId: 'u-del', purge: true, purgedCalls: 3 });
    expect(del.notifications.map((n) => n.sourceName).sort()).toEqual(['ios', 'web']);

    await ra.waitForRequests(4);
    await rb.waitForRequests(2);
    for (const req of [ra.requests[3], rb.requests[1]]) {
      const body = json(req.body);
      expect(Object.keys(body).sort()).toEqual(['timestamp', 'type', 'userId']);
      expect(body).toMatchObject({ type: 'delete', userId: 'u-del' });
      expect(Date.parse(body.timestamp as string)).toBeGreaterThanOrEqual(before - 5);
      expect(body.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(req.headers['x-signature']).toBe(hmac(req.body));
    }

    const done = await doneDeletion(t, del.id);
    expect(done.notifications.every((n) => n.deliveryState === 'delivered')).toBe(true);
    // The source without the user's calls got nothing.
    expect(rc.requests.length).toBe(1);

    // Purged: only the new notices remain for that user; others' history is untouched.
    const left = await t.call('listMessages', { userId: 'u-del', limit: 50 });
    expect(left.items.map((c) => c.type)).toEqual(['delete', 'delete']);
    expect(left.items.map((c) => c.id).sort()).toEqual(del.notifications.map((n) => n.callId).sort());
    const notice = await t.call('getMessage', { id: del.notifications[0].callId });
    expect(notice.call.request.path).toBe('/internal/deletion');
    expect(sentBody(notice.deliveries[0], notice.deliveries[0].attempts[0])).toBe((notice.call.sourceName === 'web' ? ra.requests[3] : rb.requests[1]).body.toString());
    expect((await t.call('listMessages', { userId: 'u-keep', limit: 50 })).total).toBe(2);
    expect(t.events.some((e) => e.type === 'deletions.changed')).toBe(true);
    // Open inspectors are told to read their list again.
    expect(t.events.filter((e) => e.type === 'calls.removed')).toEqual([{ type: 'calls.removed', count: 3 }]);
  });

  it('keeps history without purge; skips sources with Webhooks off; no_sources and failed states; newest first', async () => {
    const [ok, refusing] = [await receiver(), await receiver(400)];
    const t = await lab.start({
      config: {
        sources: [
          webhookSource('web', 'wk_web', [`${ok.url}/ok`]),
          webhookSource('legacy', 'wk_legacy', [`${refusing.url}/no`]),
          { name: 'off', writeKey: 'wk_off', webhooks: { enabled: false, urls: [{ url: `${ok.url}/off`, headers: {} }] } },
        ],
      },
    });
    await t.post('/v1/track', { userId: 'u1', event: 'A' }, { writeKey: 'wk_web' });
    await t.post('/v1/track', { userId: 'u1', event: 'B' }, { writeKey: 'wk_off' });
    await t.post('/v1/track', { userId: 'u2', event: 'C' }, { writeKey: 'wk_legacy' });
    await settled(t);

    const first = await t.call('createDeletion', { userId: 'u1', purge: false });
    expect(first.purgedCalls).toBe(0);
    expect(first.notifications.map((n) => n.sourceName)).toEqual(['web']);
    await doneDeletion(t, first.id);
    expect(ok.requests.map((r) => json(r.body).type)).toEqual(['track', 'delete']);
    expect((await t.call('listMessages', { userId: 'u1', limit: 50 })).total).toBe(3);

    const failed = await t.call('createDeletion', { userId: 'u2', purge: false });
    // 400 is not retried: the notice ends failed, and so does the request.
    const f = await doneDeletion(t, failed.id, 'failed');
    expect(f.notifications[0].deliveryState).toBe('failed');

    const none = await t.call('createDeletion', { userId: 'nobody', purge: true });
    expect(none).toMatchObject({ status: 'no_sources', notifications: [], purgedCalls: 0 });

    const list = await t.call('listDeletions', {});
    expect(list.map((d) => d.userId)).toEqual(['nobody', 'u2', 'u1']);
    expect(list.map((d) => d.status)).toEqual(['no_sources', 'failed', 'done']);
  });

  it('a second deletion for the same user keeps the first one\'s notices', async () => {
    const r = await receiver();
    const t = await lab.start({ config: { sources: [webhookSource('web', 'wk_web', [`${r.url}/h`])] } });
    await t.post('/v1/track', { userId: 'u', event: 'A' }, { writeKey: 'wk_web' });
    await settled(t);
    const one = await t.call('createDeletion', { userId: 'u', purge: true });
    await doneDeletion(t, one.id);
    // The user's only remaining calls are delete notices: no source has received calls from them.
    const two = await t.call('createDeletion', { userId: 'u', purge: true });
    expect(two).toMatchObject({ status: 'no_sources', purgedCalls: 0 });
    const d1 = (await t.call('listDeletions', {})).find((d) => d.id === one.id)!;
    expect(d1).toMatchObject({ status: 'done', purgedCalls: 1 });
    expect(d1.notifications[0].deliveryState).toBe('delivered');
  });

  it('purge waits for a round in flight, cancels retries, and leaves no stray rows', async () => {
    let trackRequests = 0;
    // The user's track: first answer slow (in flight during the purge), the others 500 (retrying).
    const r = await lab.receiver(async (req, res) => {
      if (json(req.body).type !== 'track') return res.writeHead(200).end();
      trackRequests++;
      if (trackRequests === 1) await new Promise((ok) => setTimeout(ok, 700));
      res.writeHead(500).end();
    });
    const t = await engineRetryingAfter(r, 300);
    await t.post('/v1/track', { userId: 'u', event: 'Slow' }, { writeKey: 'wk_web' });
    await t.post('/v1/track', { userId: 'other', event: 'Kept' }, { writeKey: 'wk_web' });
    await waitFor(() => trackRequests >= 1, 'the slow round to start');
    const del = await t.call('createDeletion', { userId: 'u', purge: true });
    expect(del.purgedCalls).toBe(1);
    await doneDeletion(t, del.id);
    const afterPurge = trackRequests;
    // "other" keeps retrying every 300 ms; "u" is never sent again. Waiting for two of other's
    // retries (not a fixed time) is when u's would have come too.
    await waitFor(() => trackRequests >= afterPurge + 2, "other's retries to go on");
    const userTracks = r.requests.filter((q) => json(q.body).type === 'track' && json(q.body).userId === 'u').length;
    expect(userTracks).toBe(1);

    const db = new Database(join(t.dataDir, 'webhook-lab.db'), { readonly: true });
    try {
      const stray = db.prepare('SELECT COUNT(*) AS n FROM attempts WHERE delivery_id NOT IN (SELECT id FROM deliveries)').get() as { n: number };
      const strayDeliveries = db.prepare('SELECT COUNT(*) AS n FROM deliveries WHERE call_id NOT IN (SELECT id FROM calls)').get() as { n: number };
      expect([stray.n, strayDeliveries.n]).toEqual([0, 0]);
    } finally {
      db.close();
    }
  });

  it('a round whose delivery was deleted while it was out records nothing and schedules nothing', async () => {
    let answer!: () => void;
    const answered = new Promise<void>((ok) => (answer = ok));
    const r = await lab.receiver(async (_req, res) => {
      await answered;
      res.writeHead(500).end();
    });
    const t = await engineRetryingAfter(r, 200);
    await t.post('/v1/track', { userId: 'u', event: 'Gone' }, { writeKey: 'wk_web' });
    await r.waitForRequests(1);
    // What a purge that did not wait for the round would leave: the round out, its rows gone.
    const db = openLive(t);
    try {
      db.exec('DELETE FROM attempts; DELETE FROM deliveries; DELETE FROM calls;');
      answer();
      // A NEGATIVE check (the round records and schedules nothing): no event marks it, so wait
      // longer than the 200 ms retry delay it must not schedule.
      await new Promise((ok) => setTimeout(ok, 800));
      const rows = db.prepare('SELECT (SELECT COUNT(*) FROM attempts) AS attempts, (SELECT COUNT(*) FROM deliveries) AS deliveries').get();
      expect(rows).toEqual({ attempts: 0, deliveries: 0 });
    } finally {
      db.close();
    }
    expect(t.events.filter((e) => e.type === 'attempt.recorded')).toEqual([]);
    // Not retried: the 500 would have been tried again after 200 ms.
    expect(r.requests.length).toBe(1);
  });

  it('a replay whose call was deleted while it was out answers 404 and records nothing', async () => {
    let gate: Promise<void> | null = null;
    let answer!: () => void;
    const r = await lab.receiver(async (_req, res) => {
      if (gate) await gate;
      res.writeHead(200).end();
    });
    const t = await lab.start({ config: { sources: [webhookSource('web', 'wk_web', [`${r.url}/h`])] } });
    await t.post('/v1/track', { userId: 'u', event: 'Replayed' }, { writeKey: 'wk_web' });
    await settled(t);
    const [call] = (await t.call('listMessages', { limit: 1 })).items;
    gate = new Promise<void>((ok) => (answer = ok));
    const replay = t.call('replayMessage', { id: call.id });
    await r.waitForRequests(2);
    const db = openLive(t);
    try {
      db.exec('DELETE FROM attempts; DELETE FROM deliveries; DELETE FROM calls;');
      answer();
      await expect(replay).rejects.toMatchObject({ status: 404, message: expect.stringContaining('deleted while it was being sent') });
      expect(db.prepare('SELECT COUNT(*) AS n FROM attempts').get()).toEqual({ n: 0 });
    } finally {
      db.close();
    }
  });

  it('purge erases the user from the stored request bodies: batch items become null, single calls go', async () => {
    const t = await lab.start({ config: { sources: [{ name: 'quiet', writeKey: 'wk_quiet' }] } });
    const batch = [
      { type: 'track', userId: 'u-keep', event: 'First' },
      { type: 'track', userId: 'u-gone', event: 'Secret', properties: { email: 'gone@example.com' } },
      { type: 'track', userId: 'u-keep', event: 'Third' },
    ];
    expect((await t.post('/v1/batch', { batch }, { writeKey: 'wk_quiet' })).status).toBe(200);
    await t.post('/v1/identify', { userId: 'u-gone', traits: { email: 'gone@example.com' } }, { writeKey: 'wk_quiet' });
    // A batch of only the user's calls goes whole, with its envelope (one device's context).
    const own = [{ type: 'track', userId: 'u-gone', event: 'Mine' }, { type: 'page', userId: 'u-gone', name: 'Home' }];
    expect((await t.post('/v1/batch', { batch: own, context: { traits: { email: 'gone@example.com' } } }, { writeKey: 'wk_quiet' })).status).toBe(200);
    const del = await t.call('createDeletion', { userId: 'u-gone', purge: true });
    expect(del).toMatchObject({ purgedCalls: 4, status: 'no_sources' });

    const kept = (await t.call('listMessages', { userId: 'u-keep', limit: 10 })).items;
    const raws = await Promise.all(kept.map(async (c) => (await t.call('getMessage', { id: c.id })).call));
    // The other items of the batch still read back as received, at their index.
    expect(raws.map((c) => [c.raw, c.request.batchIndex, c.request.batchSize])).toEqual([
      [batch[2], 2, 3],
      [batch[0], 0, 3],
    ]);
    await t.stop({ keepData: true });
    const db = new Database(join(t.dataDir, 'webhook-lab.db'), { readonly: true });
    try {
      const bodies = (db.prepare('SELECT body FROM requests').all() as { body: string }[]).map((r) => r.body);
      expect(bodies).toHaveLength(1);
      expect(bodies.join('\n')).not.toContain('gone@example.com');
      expect(JSON.parse(bodies[0]).batch).toEqual([batch[0], null, batch[2]]);
    } finally {
      db.close();
    }
  });
});

describe('deletion notices and the destination mode (issue 26)', () => {
  it('Classic and both get the Classic notice; an Actions-only source gets none, its left-over URLs unused, and the request says why', async () => {
    const classic = await receiver();
    const both = await receiver();
    const leftover = await receiver();
    const mapped = await receiver();
    const mapping = (url: string) => ({ name: 'm', trigger: {}, url, method: 'POST' as const, headers: {} });
    const t = await lab.start({
      config: {
        sources: [
          webhookSource('classic', 'wk_c', [`${classic.url}/h`], SECRET),
          { name: 'both', writeKey: 'wk_b', webhooks: { enabled: true, mode: 'both', sharedSecret: SECRET, urls: [{ url: `${both.url}/h`, headers: {} }], mappings: [mapping(`${mapped.url}/both`)] } },
          { name: 'acts', writeKey: 'wk_a', webhooks: { enabled: true, mode: 'actions', sharedSecret: SECRET, urls: [{ url: `${leftover.url}/h`, headers: {} }], mappings: [mapping(`${mapped.url}/acts`)] } },
        ],
      },
    });
    for (const key of ['wk_c', 'wk_b', 'wk_a']) expect((await t.post('/v1/identify', { userId: 'gone' }, { writeKey: key })).status).toBe(200);
    await settled(t);
    const before = { mapped: mapped.requests.length, leftover: leftover.requests.length };

    const d = await t.call('createDeletion', { userId: 'gone', purge: false });
    expect(d.notifications.map((n) => n.sourceName).sort()).toEqual(['both', 'classic']);
    expect(d.skipped).toEqual([{ sourceId: expect.any(String), sourceName: 'acts', reason: expect.stringMatching(/Actions\), which has no delete action/) }]);
    await classic.waitForRequests(2);
    await both.waitForRequests(2);
    await settled(t);
    expect(json(classic.requests[1].body)).toMatchObject({ type: 'delete', userId: 'gone' });
    expect(json(both.requests[1].body)).toMatchObject({ type: 'delete', userId: 'gone' });
    // No notice through a mapping, nor to the Actions-only source's left-over Classic URL.
    expect(mapped.requests.length).toBe(before.mapped);
    expect(leftover.requests.length).toBe(before.leftover);
    const listed = (await t.call('listDeletions', {}))[0];
    expect(listed.status).toBe('done');
    expect(listed.skipped.map((s) => s.sourceName)).toEqual(['acts']);
  });

  it('a user only an Actions-only source has seen: no notice, status no_sources, and the skip says why', async () => {
    const mapped = await receiver();
    const t = await lab.start({
      config: { sources: [{ name: 'acts', writeKey: 'wk_a', webhooks: { enabled: true, mode: 'actions', urls: [], mappings: [{ name: 'm', trigger: {}, url: `${mapped.url}/a`, method: 'POST', headers: {} }] } }] },
    });
    await t.post('/v1/identify', { userId: 'solo' }, { writeKey: 'wk_a' });
    await settled(t);
    const d = await t.call('createDeletion', { userId: 'solo', purge: false });
    expect(d.status).toBe('no_sources');
    expect(d.notifications).toEqual([]);
    expect(d.skipped.map((s) => s.sourceName)).toEqual(['acts']);
  });
});
