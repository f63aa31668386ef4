import { createHmac } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { CallDetail } from '../../src/shared/types';
import { waitFor, webhookSource, type TestEngine } from '../helpers/engine';
import { testLab } from '../helpers/test-lab';
import { configSchema } from '../../src/shared/config.schema';

// A delivery is self-contained (SPEC §4, issue 16): its URLs, headers, User-Agent and signature are
// fixed when it is created, so every retry is the same request whatever the source becomes; deleting
// the source or turning its Webhooks off ends its unfinished deliveries as canceled. Replay is the one
// way to send with the source's current settings.

const KEY = 'wk_self_contained';
const OLD = 'old-secret';
const NEW = 'new-secret';
const lab = testLab();

const hmac = (secret: string, body: Buffer) => createHmac('sha1', secret).update(body).digest('hex');

/** A receiver whose first request waits until the test releases it with a status; later ones answer `later`. */
async function heldReceiver(later: number) {
  let release!: (status: number) => void;
  const released = new Promise<number>((r) => (release = r));
  let seen = 0;
  const r = await lab.receiver(async (_req, res: ServerResponse) => {
    const status = seen++ === 0 ? await released : later;
    res.writeHead(status).end();
  });
  return { r, release };
}

/** `dataDir` (a lab.dataDir()) when the test restarts in the same data. */
function start(url: string, retry: { delaysMs: number[] }, dataDir?: string) {
  return lab.start({
    dataDir,
    config: {
      sources: [webhookSource('app', KEY, [url], OLD)],
      settings: { userAgentProduct: 'OldAgent', retrySchedule: { preset: 'custom', delaysMs: retry.delaysMs, jitter: 0, windowMs: 3_600_000 } },
    },
  });
}

async function only(t: TestEngine): Promise<CallDetail> {
  const page = await t.call('listMessages', { limit: 1 });
  return t.call('getMessage', { id: page.items[0].id });
}

async function stateIs(t: TestEngine, state: string): Promise<CallDetail> {
  return waitFor(async () => {
    const d = await only(t).catch(() => undefined);
    return d?.deliveries[0]?.state === state ? d : undefined;
  }, `delivery ${state}`);
}

describe('a retry is the same request', () => {
  it('keeps the signature and User-Agent it was created with after the secret and the product change; a replay uses the new ones', async () => {
    const { r, release } = await heldReceiver(200);
    const t = await start(`${r.url}/hook`, { delaysMs: [50] });
    const source = (await t.call('listSources', {}))[0];
    expect((await t.post('/v1/track', { userId: 'u1', event: 'Signed' }, { writeKey: KEY })).status).toBe(200);
    await r.waitForRequests(1);
    // While the first attempt is out, the source's secret and the product setting change.
    await t.call('updateSource', { id: source.id, webhooks: { ...source.webhooks, sharedSecret: NEW } });
    await t.call('updateSettings', { userAgentProduct: 'NewAgent' });
    release(500);
    const [first, retry] = await r.waitForRequests(2);
    expect(retry.body.equals(first.body)).toBe(true);
    expect(first.headers['x-signature']).toBe(hmac(OLD, first.body));
    expect(retry.headers['x-signature']).toBe(hmac(OLD, retry.body));
    expect(retry.headers['user-agent']).toBe('OldAgent/1.0');
    const d = await stateIs(t, 'delivered');
    expect(d.deliveries[0].attempts.map((a) => a.signature)).toEqual([hmac(OLD, first.body), hmac(OLD, first.body)]);

    const replay = await t.call('replayMessage', { id: d.call.id });
    const replayed = r.requests[2];
    expect(replay.attempts[0].signature).toBe(hmac(NEW, replayed.body));
    expect(replayed.headers['x-signature']).toBe(hmac(NEW, replayed.body));
    expect(replayed.headers['user-agent']).toBe('NewAgent/1.0');
  });
});

describe('canceled', () => {
  it('deleting the source ends its retrying delivery as canceled, and nothing is sent again, not even unsigned', async () => {
    const r = await lab.receiver((_req, res) => void res.writeHead(500).end());
    // A first retry 30 min away: the delivery sits in "retrying" for the whole test.
    const t = await start(`${r.url}/hook`, { delaysMs: [1_800_000] });
    const source = (await t.call('listSources', {}))[0];
    expect((await t.post('/v1/track', { userId: 'u1', event: 'Doomed' }, { writeKey: KEY })).status).toBe(200);
    await stateIs(t, 'retrying');
    expect(await t.call('deleteSource', { id: source.id })).toEqual({ ok: true });
    const d = await stateIs(t, 'canceled');
    expect(d.deliveries[0].nextAttemptAt).toBeNull();
    expect(d.deliveries[0].lastError).toMatch(/source was deleted/);
    const summary = (await t.call('listMessages', { limit: 1 })).items[0];
    expect(summary.deliveryState).toBe('canceled');
    expect(summary.urls.map((u) => u.state)).toEqual(['canceled']);
    expect((await t.call('listMessages', { status: 'canceled', limit: 10 })).items.map((c) => c.id)).toEqual([summary.id]);
    expect((await t.call('listMessages', { urlState: 'canceled', limit: 10 })).items.map((c) => c.id)).toEqual([summary.id]);
    // Time-warp makes a retry that was still scheduled due at once: none may go out.
    await t.call('updateSettings', { timeScale: 1_000_000 });
    // A negative check (nothing is sent): there is no event to wait for, so give the dispatcher time.
    await new Promise((ok) => setTimeout(ok, 500));
    expect(r.requests).toHaveLength(1);
    expect(r.requests[0].headers['x-signature']).toBeDefined();
    expect((await only(t)).deliveries[0].state).toBe('canceled');
  });

  it('turning Webhooks off cancels too; a round out at that moment is recorded but not retried', async () => {
    const { r, release } = await heldReceiver(500);
    const t = await start(`${r.url}/hook`, { delaysMs: [50] });
    const source = (await t.call('listSources', {}))[0];
    expect((await t.post('/v1/track', { userId: 'u1', event: 'Switched off' }, { writeKey: KEY })).status).toBe(200);
    await r.waitForRequests(1);
    await t.call('updateSource', { id: source.id, webhooks: { ...source.webhooks, enabled: false } });
    release(500);
    const d = await waitFor(async () => {
      const x = await only(t);
      return x.deliveries[0]?.attempts.length === 1 ? x : undefined;
    }, 'the round out to be recorded');
    expect(d.deliveries[0].state).toBe('canceled');
    expect(d.deliveries[0].attempts[0].responseStatus).toBe(500);
    // The 50 ms retry would have gone out long before this negative check ends.
    await new Promise((ok) => setTimeout(ok, 500));
    expect(r.requests).toHaveLength(1);
  });

  it('a config file that turns Webhooks off cancels too: imported, or given at the next start', async () => {
    const r = await lab.receiver((_req, res) => void res.writeHead(500).end());
    const t = await start(`${r.url}/hook`, { delaysMs: [1_800_000] }, lab.dataDir());
    const off = { sources: [{ ...webhookSource('app', KEY, [`${r.url}/hook`], OLD), webhooks: { enabled: false, urls: [{ url: `${r.url}/hook`, headers: {} }] } }] };
    // Imported while the app runs.
    expect((await t.post('/v1/track', { userId: 'u1', event: 'Imported off' }, { writeKey: KEY })).status).toBe(200);
    await stateIs(t, 'retrying');
    await t.call('importConfig', configSchema.parse(off));
    const d = await stateIs(t, 'canceled');
    expect(d.deliveries[0].lastError).toMatch(/turned off for its source \(config file\)/);

    // Given at start: the delivery left retrying is canceled before the dispatcher resumes anything.
    await t.call('importConfig', configSchema.parse({ sources: [webhookSource('app', KEY, [`${r.url}/hook`], OLD)] }));
    expect((await t.post('/v1/track', { userId: 'u1', event: 'Off at start' }, { writeKey: KEY })).status).toBe(200);
    await waitFor(async () => ((await t.call('listMessages', { status: 'retrying', limit: 10 })).total === 1 ? true : undefined), 'the second call retrying');
    const sent = r.requests.length;
    // Starting again in the same data stops the first engine, as a restart.
    const again = await lab.start({ dataDir: t.dataDir, config: { ...off, settings: { timeScale: 1_000_000 } } });
    const calls = (await again.call('listMessages', { limit: 10 })).items;
    expect(calls.map((c) => c.deliveryState)).toEqual(['canceled', 'canceled']);
    // Time-warp would make the 30 min retry due at once: nothing may go out.
    await new Promise((ok) => setTimeout(ok, 500));
    expect(r.requests).toHaveLength(sent);
  });

  it('a round out when the source is deleted that delivers the call leaves it delivered', async () => {
    const { r, release } = await heldReceiver(200);
    const t = await start(`${r.url}/hook`, { delaysMs: [50] });
    const source = (await t.call('listSources', {}))[0];
    expect((await t.post('/v1/track', { userId: 'u1', event: 'Late success' }, { writeKey: KEY })).status).toBe(200);
    await r.waitForRequests(1);
    await t.call('deleteSource', { id: source.id });
    release(200);
    await stateIs(t, 'delivered');
  });
});

describe('deliveries stored before v7', () => {
  it('a delivery made before v7 (no fixed request) is still retried, signed with the secret and settings of the time', async () => {
    let status = 500;
    const r = await lab.receiver((_req, res) => void res.writeHead(status).end());
    const dataDir = lab.dataDir();
    const first = await lab.start({
      dataDir,
      config: { sources: [webhookSource('app', KEY, [`${r.url}/hook`], OLD)], settings: { retrySchedule: { preset: 'custom', delaysMs: [1_800_000], jitter: 0, windowMs: 3_600_000 } } },
    });
    expect((await first.post('/v1/track', { userId: 'u1', event: 'Old row' }, { writeKey: KEY })).status).toBe(200);
    await stateIs(first, 'retrying');
    const source = (await first.call('listSources', {}))[0];
    await first.call('updateSource', { id: source.id, webhooks: { ...source.webhooks, sharedSecret: NEW } });
    await first.stop({ keepData: true });
    // What migration 7 leaves on a delivery made before it: no fixed request. The retry is due now.
    const db = new Database(join(dataDir, 'webhook-lab.db'));
    db.exec('UPDATE deliveries SET next_attempt_at = 0, user_agent = NULL, signature = NULL');
    db.close();
    status = 200;
    const t = await lab.start({ dataDir });
    await stateIs(t, 'delivered');
    const [, retry] = r.requests;
    expect(retry.headers['x-signature']).toBe(hmac(NEW, retry.body));
    expect(retry.headers['user-agent']).toBe('Segment.io/1.0');
  });
});
