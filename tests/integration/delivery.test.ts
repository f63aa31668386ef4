import { describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { waitFor, waitWhileProgressing, webhookSource, type TestEngine } from '../helpers/engine';
import type { ReceiverHandler } from '../helpers/receiver';
import { testLab } from '../helpers/test-lab';
import { selfSignedCert } from '../helpers/tls';
import { sentBody } from '../../src/shared/attempt-body';

// The dispatcher end to end: collector → SQLite → signed POST to real local receivers.
const KEY = 'wk_delivery';
const SECRET = 's3cret';
const lab = testLab();

const receiver = (handler?: ReceiverHandler) => lab.receiver(handler);

function setup(urls: string[], settings: object = {}) {
  return lab.start({ config: { sources: [webhookSource('app', KEY, urls, SECRET)], settings } });
}

const hmac = (body: Buffer) => createHmac('sha1', SECRET).update(body).digest('hex');

async function deliveryOf(t: TestEngine, state?: string) {
  return waitFor(async () => {
    const page = await t.call('listMessages', { limit: 1 });
    const c = page.items[0];
    if (!c) return undefined;
    // The state is checked on the same reading the test goes on to inspect: between two readings a
    // retrying delivery can start its next attempt (and lose its next attempt time).
    const m = await t.call('getMessage', { id: c.id });
    return !state || m.deliveries[0]?.state === state ? m : undefined;
  }, `delivery state ${state}`, 20_000);
}

/** A schedule that retries quickly: 200 ms, no jitter. */
const FAST = { retrySchedule: { preset: 'custom', delaysMs: [200], jitter: 0, windowMs: 60_000 } };

describe('each call type reaches the receiver signed, with the SPEC §4 body', () => {
  const calls: [string, Record<string, unknown>, Record<string, unknown>][] = [
    ['identify', { userId: 'u1', traits: { email: 'a@b.c' } }, { traits: { email: 'a@b.c' } }],
    ['track', { userId: 'u1', event: 'Order Completed', properties: { total: 1 } }, { event: 'Order Completed', properties: { total: 1 } }],
    ['page', { userId: 'u1', name: 'Home', category: 'Docs', properties: { path: '/', url: 'http://x/' } }, { name: 'Home', category: 'Docs', properties: { path: '/', url: 'http://x/' } }],
    ['screen', { userId: 'u1', name: 'Main', properties: { a: 1 }, context: { device: { model: 'iPhone', type: 'ios' } } }, { name: 'Main', properties: { a: 1 }, context: { device: { model: 'iPhone', type: 'ios' } } }],
    ['group', { userId: 'u1', groupId: 'g1', traits: { plan: 'pro' } }, { groupId: 'g1', traits: { plan: 'pro' } }],
    ['alias', { userId: 'u2', previousId: 'u1' }, { previousId: 'u1', userId: 'u2', 'Previous ID': 'u1', 'User ID': 'u2' }],
  ];
  it.each(calls)('%s', async (type, message, expected) => {
    const r = await receiver();
    const t = await setup([`${r.url}/hook`]);
    expect((await t.post(`/v1/${type}`, message, { writeKey: KEY })).status).toBe(200);
    const [req] = await r.waitForRequests(1);
    expect(req.headers['user-agent']).toBe('Segment.io/1.0');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['x-signature']).toBe(hmac(req.body));
    const body = JSON.parse(req.body.toString());
    expect(body).toMatchObject({ version: 1, type, ...expected });
    expect(body.timestamp).toMatch(/Z$/);
    const d = await deliveryOf(t, 'delivered');
    // What the inspector shows is exactly what was sent.
    expect(sentBody(d.deliveries[0], d.deliveries[0].attempts[0])).toBe(req.body.toString());
    expect(d.deliveries[0].attempts[0].signature).toBe(req.headers['x-signature']);
  });

  it('documented format has exactly the documented fields; static headers are sent', async () => {
    const r = await receiver();
    const t = await lab.start({
      config: {
        sources: [{ name: 'app', writeKey: KEY, webhooks: { enabled: true, urls: [{ url: `${r.url}/h`, headers: { 'X-Env': 'qa' } }] } }],
        settings: { payloadFormat: 'documented', userAgentProduct: 'WebhookLab' },
      },
    });
    await t.post('/v1/track', { userId: 'u', event: 'E', anonymousId: 'a' }, { writeKey: KEY });
    const [req] = await r.waitForRequests(1);
    expect(Object.keys(JSON.parse(req.body.toString())).sort()).toEqual(['context', 'event', 'properties', 'timestamp', 'type', 'userId', 'version']);
    expect(req.headers['x-env']).toBe('qa');
    expect(req.headers['user-agent']).toBe('WebhookLab/1.0');
    expect(req.headers['x-signature']).toBeUndefined();
  });

  it('integrations routing: All:false blocks, All:false + Webhooks:true passes', async () => {
    const r = await receiver();
    const t = await setup([`${r.url}/h`]);
    await t.post('/v1/track', { userId: 'u', event: 'blocked', integrations: { All: false } }, { writeKey: KEY });
    await t.post('/v1/track', { userId: 'u', event: 'allowed', integrations: { All: false, Webhooks: true } }, { writeKey: KEY });
    await t.post('/v1/track', { userId: 'u', event: 'off', integrations: { Webhooks: false } }, { writeKey: KEY });
    const [req] = await r.waitForRequests(1);
    expect(JSON.parse(req.body.toString()).event).toBe('allowed');
    const notForwarded = await t.call('listMessages', { status: 'not_forwarded' });
    expect(notForwarded.items.map((c) => c.label).sort()).toEqual(['blocked', 'off']);
  });
});

describe('retries', () => {
  it('500 then 200 → retried with the same bytes and signature, then delivered', async () => {
    let n = 0;
    const r = await receiver((_req, res) => res.writeHead(n++ === 0 ? 500 : 200).end());
    const t = await setup([`${r.url}/h`], FAST);
    await t.post('/v1/track', { userId: 'u', event: 'retry me' }, { writeKey: KEY });
    const d = await deliveryOf(t, 'delivered');
    const [a1, a2] = d.deliveries[0].attempts;
    expect([a1.responseStatus, a1.outcome, a2.responseStatus, a2.outcome]).toEqual([500, 'retryable', 200, 'success']);
    expect(r.requests[0].body.equals(r.requests[1].body)).toBe(true);
    expect(r.requests[1].headers['x-signature']).toBe(r.requests[0].headers['x-signature']);
    expect(Date.parse(a2.startedAt) - Date.parse(a1.startedAt)).toBeGreaterThanOrEqual(190);
  });

  it('a receiver that waits 6 s → "timed out after 5000 ms" recorded, retry scheduled', async () => {
    const r = await receiver((_req, res) => void setTimeout(() => res.writeHead(200).end(), 6000));
    const t = await setup([`${r.url}/slow`]);
    await t.post('/v1/track', { userId: 'u', event: 'slow' }, { writeKey: KEY });
    const d = await deliveryOf(t, 'retrying');
    const a = d.deliveries[0].attempts[0];
    expect(a).toMatchObject({ timedOut: true, errorCode: 'TIMEOUT', errorMessage: 'timed out after 5000 ms', outcome: 'retryable' });
    // Ended by the 5 s limit (its message), not by the answer at 6 s (that would be a 200).
    expect(a.durationMs).toBeGreaterThanOrEqual(5000);
    // Default schedule: 5 s ± 20 % after the round ended.
    const wait = Date.parse(d.deliveries[0].nextAttemptAt!) - Date.parse(a.startedAt) - a.durationMs;
    expect(wait).toBeGreaterThanOrEqual(3900);
    expect(wait).toBeLessThanOrEqual(6100);
  }, 20_000);

  it('a self-signed https receiver → TLS error, not retried, and it saw no request', async () => {
    const r = await lab.httpsReceiver(await selfSignedCert());
    const t = await setup([`${r.url}/tls`], FAST);
    await t.post('/v1/track', { userId: 'u', event: 'tls' }, { writeKey: KEY });
    const d = await deliveryOf(t, 'failed');
    const a = d.deliveries[0].attempts[0];
    expect(a.errorCode).toMatch(/SELF_SIGNED|DEPTH_ZERO/);
    expect(a.outcome).toBe('failed');
    expect(a.responseStatus).toBeNull();
    expect(r.stats.requestEvents).toBe(0);
    expect(r.requests).toHaveLength(0);
    expect(d.deliveries[0].nextAttemptAt).toBeNull();
    // A NEGATIVE check (no retry comes): no event marks a retry that never starts, so wait longer
    // than the FAST schedule's 200 ms delay.
    await new Promise((res) => setTimeout(res, 500));
    expect((await t.call('getMessage', { id: d.call.id })).deliveries[0].attempts).toHaveLength(1);
  });

  it('two URLs, one fails and one succeeds → delivered, the failing one is not retried', async () => {
    const good = await receiver();
    const bad = await receiver((_req, res) => res.writeHead(500).end('no'));
    const t = await setup([`${good.url}/ok`, `${bad.url}/fail`], FAST);
    await t.post('/v1/track', { userId: 'u', event: 'fanout' }, { writeKey: KEY });
    const d = await deliveryOf(t, 'delivered');
    expect(d.deliveries[0].attempts.map((a) => [a.urlIndex, a.responseStatus]).sort()).toEqual([[0, 200], [1, 500]]);
    expect(d.deliveries[0].nextAttemptAt).toBeNull();
    // A NEGATIVE check (the 500 is not retried): nothing to wait on, so three FAST retry delays.
    await new Promise((res) => setTimeout(res, 600));
    expect(bad.requests).toHaveLength(1);
    expect(good.requests[0].body.equals(bad.requests[0].body)).toBe(true);
  });

  it('no URL succeeds → the next round goes only to the retryable ones', async () => {
    const notFound = await receiver((_req, res) => res.writeHead(404).end());
    let n = 0;
    const flaky = await receiver((_req, res) => res.writeHead(n++ < 2 ? 503 : 200).end());
    const t = await setup([`${notFound.url}/gone`, `${flaky.url}/flaky`], FAST);
    await t.post('/v1/track', { userId: 'u', event: 'rounds' }, { writeKey: KEY });
    const d = await deliveryOf(t, 'delivered');
    expect(notFound.requests).toHaveLength(1);
    expect(flaky.requests).toHaveLength(3);
    expect(d.deliveries[0].attempts.map((a) => `${a.round}:${a.urlIndex}:${a.responseStatus}`)).toEqual(['1:0:404', '1:1:503', '2:1:503', '3:1:200']);
  });

  it('3xx is a failure and is not followed; 4xx is discarded', async () => {
    const r = await receiver((req, res) => (req.url === '/moved' ? res.writeHead(302, { location: '/target' }).end() : res.writeHead(200).end()));
    const t = await setup([`${r.url}/moved`], FAST);
    await t.post('/v1/track', { userId: 'u', event: 'redirect' }, { writeKey: KEY });
    const d = await deliveryOf(t, 'failed');
    expect(d.deliveries[0].attempts[0].responseStatus).toBe(302);
    expect(r.requests.map((q) => q.url)).toEqual(['/moved']);
  });

  it('429 with Retry-After waits at least that long', async () => {
    let n = 0;
    const r = await receiver((_req, res) => (n++ === 0 ? res.writeHead(429, { 'retry-after': '1' }).end() : res.writeHead(200).end()));
    const t = await setup([`${r.url}/limited`], FAST);
    await t.post('/v1/track', { userId: 'u', event: 'limited' }, { writeKey: KEY });
    await deliveryOf(t, 'delivered');
    expect(r.requests[1].receivedAt - r.requests[0].receivedAt).toBeGreaterThanOrEqual(990);
  });

  it('a Retry-After past the retry window expires the delivery, saying so (not that the window is over)', async () => {
    const r = await receiver((_req, res) => res.writeHead(503, { 'retry-after': '86400' }).end());
    const t = await setup([`${r.url}/tomorrow`]);
    await t.post('/v1/track', { userId: 'u', event: 'later' }, { writeKey: KEY });
    const d = await deliveryOf(t, 'expired');
    expect(d.deliveries[0].attempts).toHaveLength(1);
    expect(d.deliveries[0].lastError).toMatch(/Retry-After of 86400 s would put the next attempt past the retry window of 4 h$/);
  });

  it('time-warp: the default 4 h schedule at speed 1000 ends expired after 16 attempts', async () => {
    const r = await receiver((_req, res) => res.writeHead(500).end());
    const t = await setup([`${r.url}/down`], { timeScale: 1000, retrySchedule: { preset: 'default', jitter: 0 } });
    const started = Date.now();
    await t.post('/v1/track', { userId: 'u', event: 'storm' }, { writeKey: KEY });
    const d = await waitFor(async () => {
      const c = (await t.call('listMessages', { limit: 1 })).items[0];
      return c?.deliveryState === 'expired' ? t.call('getMessage', { id: c.id }) : undefined;
    }, 'expiry', 30_000);
    // 1 + 9 doubling retries (5 s … 1280 s) + 6 capped at 30 min: the 17th would start after 4 h.
    expect(d.deliveries[0].attempts).toHaveLength(16);
    expect(r.requests).toHaveLength(16);
    expect(d.deliveries[0].lastError).toMatch(/retry window of 4 h is over/);
    // Simulated 13,355 s ≈ 13.4 s real at speed 1000.
    expect(Date.now() - started).toBeGreaterThan(13_000);
  }, 40_000);
});

describe('time-warp changed while a round is out', () => {
  it('its retry is planned at the new speed, as every other scheduled retry is rescaled', async () => {
    let answer: (() => void) | undefined;
    const held = new Promise<void>((resolve) => (answer = resolve));
    const r = await receiver(async (_req, res) => {
      await held;
      res.writeHead(500).end('down');
    });
    // 10 minutes between rounds at speed 1: 600 ms at speed 1000.
    const t = await setup([`${r.url}/h`], { retrySchedule: { preset: 'custom', delaysMs: [600_000], jitter: 0, windowMs: 3_600_000 } });
    await t.post('/v1/track', { userId: 'u', event: 'warped' }, { writeKey: KEY });
    await r.waitForRequests(1);
    await t.call('updateSettings', { timeScale: 1000 });
    answer!();
    const d = (await deliveryOf(t, 'retrying')).deliveries[0];
    // Planned at speed 1 it would be 600 s after the answer; at 1000, 0.6 s (read after it, so less).
    expect(Date.parse(d.nextAttemptAt!) - Date.now()).toBeLessThan(60_000);
    // And it goes: the second round comes without waiting ten minutes.
    await r.waitForRequests(2, 30_000);
  });
});

describe('at most 1,000 rounds', () => {
  it('a delay of 0 retries until 1,000 rounds, not for its whole window (133,351 requests in 60 s before)', async () => {
    const r = await receiver((_req, res) => res.writeHead(500).end('down'));
    const t = await setup([`${r.url}/h`], { retrySchedule: { preset: 'custom', delaysMs: [0], jitter: 0, windowMs: 3_600_000 } });
    await t.post('/v1/track', { userId: 'u', event: 'storm' }, { writeKey: KEY });
    // A thousand rounds take what the machine takes: wait while they go on (the receiver counts them),
    // reading the delivery only once they are all in.
    await waitWhileProgressing(() => r.requests.length >= 1_000, () => r.requests.length, '1,000 rounds');
    const d = await deliveryOf(t, 'expired');
    expect(d.deliveries[0].attempts).toHaveLength(1_000);
    expect(d.deliveries[0].lastError).toMatch(/1,000 rounds made, the most a delivery makes/);
    expect(r.requests).toHaveLength(1_000);
  }, 600_000);
});

describe('replay', () => {
  it('appends attempts marked replay, re-signed with the current secret; earlier attempts unchanged', async () => {
    const r = await receiver((_req, res) => res.writeHead(400).end('bad'));
    const t = await setup([`${r.url}/h`]);
    await t.post('/v1/track', { userId: 'u', event: 'replay me' }, { writeKey: KEY });
    const before = await deliveryOf(t, 'failed');
    const source = (await t.call('listSources', {}))[0];
    await t.call('updateSource', { id: source.id, webhooks: { ...source.webhooks, sharedSecret: 'new-secret' } });
    const result = await t.call('replayMessage', { id: before.call.id });
    expect(result.attempts).toHaveLength(1);
    expect(result.attempts[0].trigger).toBe('replay');
    expect(r.requests[1].body.equals(r.requests[0].body)).toBe(true);
    expect(r.requests[1].headers['x-signature']).toBe(createHmac('sha1', 'new-secret').update(r.requests[1].body).digest('hex'));
    const after = await t.call('getMessage', { id: before.call.id });
    expect(after.deliveries[0].attempts[0]).toEqual(before.deliveries[0].attempts[0]);
    expect(after.deliveries[0].attempts).toHaveLength(2);
  });

  it('an edited body is sent and stored on the attempt; a successful replay settles the delivery', async () => {
    let n = 0;
    const r = await receiver((_req, res) => res.writeHead(n++ === 0 ? 422 : 200).end());
    const t = await setup([`${r.url}/h`]);
    await t.post('/v1/track', { userId: 'u', event: 'edit' }, { writeKey: KEY });
    const d = await deliveryOf(t, 'failed');
    const edited = JSON.stringify({ ...JSON.parse(d.deliveries[0].body), event: 'edited' });
    const result = await t.call('replayMessage', { id: d.call.id, body: edited });
    expect(result.attempts[0].requestBody).toBe(edited);
    expect(r.requests[1].body.toString()).toBe(edited);
    expect((await t.call('getMessage', { id: d.call.id })).deliveries[0].state).toBe('delivered');
  });

  it('a call whose source was deleted is resent as it first went (its X-Signature fixed at creation), by replay and by a bulk retry', async () => {
    const r = await receiver((_req, res) => res.writeHead(400).end('bad'));
    const t = await setup([`${r.url}/h`]);
    await t.post('/v1/track', { userId: 'u', event: 'orphan' }, { writeKey: KEY });
    const d = await deliveryOf(t, 'failed');
    await t.call('deleteSource', { id: (await t.call('listSources', {}))[0].id });
    const result = await t.call('replayMessage', { id: d.call.id });
    expect(result.attempts).toHaveLength(1);
    expect(r.requests[1].body.equals(r.requests[0].body)).toBe(true);
    expect(r.requests[1].headers['x-signature']).toBe(hmac(r.requests[1].body));
    expect(r.requests[1].headers['user-agent']).toBe(r.requests[0].headers['user-agent']);
    expect(await t.call('retryMatching', {})).toMatchObject({ retried: 1 });
    await waitFor(() => r.requests.length === 3 || undefined, 'bulk retry sent');
    expect(r.requests[2].headers['x-signature']).toBe(hmac(r.requests[2].body));
    // An edited body would need the retired secret: refused, nothing sent.
    const edited = JSON.stringify({ ...JSON.parse(d.deliveries[0].body), event: 'edited' });
    await expect(t.call('replayMessage', { id: d.call.id, body: edited })).rejects.toMatchObject({ status: 409, message: expect.stringMatching(/source .*no longer exists and its request was signed/) });
    expect(r.requests).toHaveLength(3);
  });

  it("a deleted source's unsigned call is replayed, edited body included", async () => {
    const r = await receiver((_req, res) => res.writeHead(400).end('bad'));
    const t = await lab.start({ config: { sources: [webhookSource('app', KEY, [`${r.url}/h`])] } });
    await t.post('/v1/track', { userId: 'u', event: 'orphan' }, { writeKey: KEY });
    const d = await deliveryOf(t, 'failed');
    await t.call('deleteSource', { id: (await t.call('listSources', {}))[0].id });
    const edited = JSON.stringify({ ...JSON.parse(d.deliveries[0].body), event: 'edited' });
    await t.call('replayMessage', { id: d.call.id, body: edited });
    expect(r.requests[1].body.toString()).toBe(edited);
    expect(r.requests[1].headers['x-signature']).toBeUndefined();
  });

  it('a deleted source whose calls signed with Standard Webhooks: not replayed unsigned (409), and a bulk retry leaves them out', async () => {
    const r = await receiver((_req, res) => res.writeHead(400).end('bad'));
    const source = webhookSource('app', KEY, [`${r.url}/h`], SECRET);
    const t = await lab.start({ config: { sources: [{ ...source, webhooks: { ...source.webhooks, standardWebhooksSecret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' } }] } });
    await t.post('/v1/track', { userId: 'u', event: 'orphan' }, { writeKey: KEY });
    const d = await deliveryOf(t, 'failed');
    expect(r.requests[0].headers['webhook-signature']).toMatch(/^v1,/);
    await t.call('deleteSource', { id: (await t.call('listSources', {}))[0].id });
    await expect(t.call('replayMessage', { id: d.call.id })).rejects.toMatchObject({ status: 409, message: expect.stringMatching(/source .*no longer exists/) });
    expect(await t.call('retryMatching', {})).toMatchObject({ retried: 0 });
    await new Promise((done) => setTimeout(done, 200));
    expect(r.requests).toHaveLength(1);
  });

  it('a dropped call cannot be replayed (409)', async () => {
    const r = await receiver();
    const t = await setup([`${r.url}/h`]);
    await t.post('/v1/track', { userId: 'u' }, { writeKey: KEY });
    const c = (await t.call('listMessages', { limit: 1 })).items[0];
    await expect(t.call('replayMessage', { id: c.id })).rejects.toMatchObject({ status: 409 });
  });
});
