import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { waitFor, type TestEngine } from '../helpers/engine';
import type { ReceivedRequest, ReceiverHandler } from '../helpers/receiver';
import { testLab } from '../helpers/test-lab';
import type { CallDetail } from '../../src/shared/types';

// How the dispatcher sends Webhooks (Actions) deliveries beside Classic ones, over real sockets:
// the mapping's method, Actions' 10 s timeout against Classic's 5 s, each rule's retry classes, and
// Standard Webhooks headers signed per attempt, checked with the reference `standardwebhooks` package.

const lab = testLab();
const receiver = (handler?: ReceiverHandler) => lab.receiver(handler);

function source(name: string, writeKey: string, classicUrl: string, mappings: { name: string; url: string; method: 'POST' | 'PUT' | 'PATCH' }[], extra: Record<string, unknown> = {}) {
  return {
    name,
    writeKey,
    webhooks: {
      enabled: true,
      mode: 'both',
      urls: [{ url: classicUrl, headers: {} }],
      mappings: mappings.map((m) => ({ ...m, trigger: { type: 'track' }, headers: {} })),
      ...extra,
    },
  };
}

const track = (id: string) => ({ userId: 'u1', event: 'Order Completed', messageId: id, properties: { total: 5 } });

async function detailOf(t: TestEngine, messageId: string, done: (d: CallDetail) => boolean, what: string, ms = 15_000): Promise<CallDetail> {
  return waitFor(async () => {
    const c = (await t.call('listMessages', { limit: 50 })).items.find((x) => x.messageId === messageId);
    if (!c) return undefined;
    const d = await t.call('getMessage', { id: c.id });
    return done(d) ? d : undefined;
  }, what, ms);
}

const classicOf = (d: CallDetail) => d.deliveries.find((x) => x.kind === 'classic')!;
const actionsOf = (d: CallDetail, mapping: string) => d.deliveries.find((x) => x.kind === 'actions' && x.mapping === mapping)!;

describe('Actions deliveries: method and timeout', () => {
  it('go out with the mapping\'s PUT or PATCH; a receiver answering after 7 s times Classic out at 5 s and answers Actions within its 10 s', async () => {
    const slow = await receiver((_req, res) => {
      setTimeout(() => res.writeHead(200, { 'content-type': 'text/plain' }).end('late'), 7000);
    });
    const fast = await receiver();
    const t = await lab.start({
      config: { sources: [source('shop', 'wk_slow', `${slow.url}/classic`, [{ name: 'slow-patch', url: `${slow.url}/actions`, method: 'PATCH' }, { name: 'put', url: `${fast.url}/put`, method: 'PUT' }])] },
    });
    expect((await t.post('/v1/track', track('m-slow'), { writeKey: 'wk_slow' })).status).toBe(200);

    const [put] = await fast.waitForRequests(1);
    expect(put.method).toBe('PUT');
    expect(put.url).toBe('/put');

    const d = await detailOf(t, 'm-slow', (x) => actionsOf(x, 'slow-patch')?.state === 'delivered' && classicOf(x).attempts.length > 0, 'the slow Actions delivery', 15_000);
    const byPath = (p: string) => slow.requests.filter((r) => r.url === p);
    expect(byPath('/actions').map((r) => r.method)).toEqual(['PATCH']);
    expect(byPath('/classic')[0].method).toBe('POST');

    const [classicAttempt] = classicOf(d).attempts;
    expect(classicAttempt).toMatchObject({ timedOut: true, errorCode: 'TIMEOUT', errorMessage: 'timed out after 5000 ms', outcome: 'retryable' });
    expect(classicAttempt.durationMs).toBeGreaterThanOrEqual(5000);
    expect(classicOf(d).state).toBe('retrying');

    const actions = actionsOf(d, 'slow-patch');
    expect(actions.method).toBe('PATCH');
    expect(actions.attempts).toHaveLength(1);
    expect(actions.attempts[0]).toMatchObject({ responseStatus: 200, responseBody: 'late', timedOut: false, outcome: 'success' });
    // Answered (a 200, not timed out) after Classic's 5 s: within the Actions budget of 10 s.
    expect(actions.attempts[0].durationMs).toBeGreaterThanOrEqual(7000);
    expect(actionsOf(d, 'put')).toMatchObject({ method: 'PUT', state: 'delivered' });
  }, 20_000);
});

describe('retry classes: Actions deliveries by Actions\' rule, Classic by the schedule\'s', () => {
  it('501 is retried for Classic but not for Actions; 423 is retried for Actions but not for Classic', async () => {
    const r = await receiver((req, res) => res.writeHead(req.url!.startsWith('/501') ? 501 : 423).end());
    const t = await lab.start({
      // Demo schedule (1 s doubling) at ×20: a retry is due some 50 ms after a round.
      overrides: { retrySchedule: { preset: 'fast' }, timeScale: 20 },
      config: {
        sources: [
          source('five-oh-one', 'wk_501', `${r.url}/501/classic`, [{ name: 'a', url: `${r.url}/501/actions`, method: 'POST' }]),
          source('locked', 'wk_423', `${r.url}/423/classic`, [{ name: 'a', url: `${r.url}/423/actions`, method: 'POST' }]),
        ],
      },
    });
    await t.post('/v1/track', track('m-501'), { writeKey: 'wk_501' });
    await t.post('/v1/track', track('m-423'), { writeKey: 'wk_423' });

    const count = (p: string) => r.requests.filter((x) => x.url === p).length;
    await waitFor(() => count('/501/classic') >= 3 && count('/423/actions') >= 3, 'Classic 501 and Actions 423 retried');
    const d501 = await detailOf(t, 'm-501', (x) => actionsOf(x, 'a')?.state === 'failed', 'the Actions 501 failed');
    const d423 = await detailOf(t, 'm-423', (x) => classicOf(x).state === 'failed', 'the Classic 423 failed');
    // Those two were not retried while the other two were retried several times.
    expect(count('/501/actions')).toBe(1);
    expect(count('/423/classic')).toBe(1);
    expect(actionsOf(d501, 'a').attempts).toHaveLength(1);
    expect(actionsOf(d501, 'a').attempts[0]).toMatchObject({ responseStatus: 501, outcome: 'failed' });
    expect(actionsOf(d501, 'a').lastError).toMatch(/501 is not retried by Actions/);
    expect(classicOf(d501).attempts[0]).toMatchObject({ responseStatus: 501, outcome: 'retryable' });
    expect(classicOf(d423).attempts).toHaveLength(1);
    expect(classicOf(d423).attempts[0]).toMatchObject({ responseStatus: 423, outcome: 'failed' });
    expect(actionsOf(d423, 'a').attempts[0]).toMatchObject({ responseStatus: 423, outcome: 'retryable' });
  }, 20_000);

  it('the "actions" retry preset puts Classic deliveries under Actions\' classes too', async () => {
    const r = await receiver((req, res) => res.writeHead(req.url === '/501' ? 501 : 423).end());
    const t = await lab.start({
      overrides: { retrySchedule: { preset: 'actions' }, timeScale: 100 },
      config: { sources: [{ name: 'c', writeKey: 'wk_c', webhooks: { enabled: true, urls: [{ url: `${r.url}/501`, headers: {} }, { url: `${r.url}/423`, headers: {} }] } }] },
    });
    await t.post('/v1/track', track('m-preset'), { writeKey: 'wk_c' });
    // 5 s doubling at ×100: rounds some 50, 100, 200 ms apart.
    await waitFor(() => r.requests.filter((x) => x.url === '/423').length >= 3, '423 retried under the actions preset');
    expect(r.requests.filter((x) => x.url === '/501')).toHaveLength(1);
    const d = await detailOf(t, 'm-preset', (x) => classicOf(x).attempts.length >= 3, 'attempts recorded');
    const first = classicOf(d).attempts.filter((a) => a.round === 1);
    expect(first.map((a) => [a.url.endsWith('/501') ? 501 : 423, a.outcome]).sort()).toEqual([[423, 'retryable'], [501, 'failed']]);
  }, 20_000);
});

describe('Standard Webhooks headers, verified with the standardwebhooks package', () => {
  const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const NEW_SECRET = `whsec_${Buffer.from('a rotated key, 24 bytes!').toString('base64')}`;

  const swHeaders = (r: ReceivedRequest) => ({
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  });

  it('on the first attempt and on a retry (same webhook-id, a new timestamp), Classic and Actions; a replay after a secret change signs with the new secret', async () => {
    const seen = new Map<string, number>();
    // Each path fails its first request, then answers 200.
    const r = await receiver((req, res) => {
      const n = (seen.get(req.url!) ?? 0) + 1;
      seen.set(req.url!, n);
      res.writeHead(n === 1 ? 500 : 200).end();
    });
    const t = await lab.start({
      // Demo schedule, real time: the retry goes out 1 s after the first round, in a later second.
      overrides: { retrySchedule: { preset: 'fast' } },
      config: { sources: [source('sw', 'wk_sw', `${r.url}/classic`, [{ name: 'put', url: `${r.url}/actions`, method: 'PUT' }], { standardWebhooksSecret: SECRET, sharedSecret: 'x-secret' })] },
    });
    await t.post('/v1/track', track('m-sw'), { writeKey: 'wk_sw' });
    const d = await detailOf(t, 'm-sw', (x) => classicOf(x).state === 'delivered' && actionsOf(x, 'put')?.state === 'delivered', 'both delivered after a retry');

    const wh = new Webhook(SECRET);
    for (const [path, delivery] of [['/classic', classicOf(d)], ['/actions', actionsOf(d, 'put')]] as const) {
      const sent = r.requests.filter((x) => x.url === path);
      expect(sent, path).toHaveLength(2);
      const [first, retry] = sent.map(swHeaders);
      for (const [k, req] of sent.entries()) {
        // The reference library checks the signature over the raw body and the timestamp against now.
        expect(() => wh.verify(req.body.toString('utf8'), swHeaders(req)), `${path} attempt ${k + 1}`).not.toThrow();
        expect(() => new Webhook(NEW_SECRET).verify(req.body.toString('utf8'), swHeaders(req))).toThrow();
      }
      expect(first['webhook-id']).toMatch(/^msg_/);
      expect(retry['webhook-id']).toBe(first['webhook-id']);
      expect(first['webhook-id']).toBe(delivery.swId);
      expect(Number(retry['webhook-timestamp'])).toBeGreaterThan(Number(first['webhook-timestamp']));
      expect(retry['webhook-signature']).not.toBe(first['webhook-signature']);
      // The stored attempts hold exactly what was sent.
      expect(delivery.attempts.map((a) => a.requestHeaders['webhook-signature'])).toEqual([first['webhook-signature'], retry['webhook-signature']]);
      expect(delivery.attempts.map((a) => a.requestHeaders['webhook-timestamp'])).toEqual([first['webhook-timestamp'], retry['webhook-timestamp']]);
      // The X-Signature, by contrast, is the same bytes on both attempts (frozen at creation).
      expect(sent[1].headers['x-signature']).toBe(sent[0].headers['x-signature']);
    }
    // Classic and Actions are different messages.
    expect(classicOf(d).swId).not.toBe(actionsOf(d, 'put').swId);

    // Rotate the secret; a replay signs with the current one, under the delivery's own webhook-id.
    const src = (await t.call('listSources', {})).find((s) => s.name === 'sw')!;
    await t.call('updateSource', { id: src.id, webhooks: { ...src.webhooks, standardWebhooksSecret: NEW_SECRET } });
    await t.call('replayMessage', { id: d.call.id });
    await t.call('replayMessage', { id: d.call.id, deliveryId: actionsOf(d, 'put').id });
    const replays = [r.requests.filter((x) => x.url === '/classic')[2], r.requests.filter((x) => x.url === '/actions')[2]];
    for (const [k, req] of replays.entries()) {
      expect(req.method).toBe(k === 0 ? 'POST' : 'PUT');
      expect(() => new Webhook(NEW_SECRET).verify(req.body.toString('utf8'), swHeaders(req))).not.toThrow();
      expect(() => wh.verify(req.body.toString('utf8'), swHeaders(req))).toThrow();
    }
    expect(replays[0].headers['webhook-id']).toBe(classicOf(d).swId);
    expect(replays[1].headers['webhook-id']).toBe(actionsOf(d, 'put').swId);

    // No secret now: a replay carries none of the three headers.
    await t.call('updateSource', { id: src.id, webhooks: { ...src.webhooks, standardWebhooksSecret: undefined } });
    const after = await t.call('replayMessage', { id: d.call.id });
    const last = r.requests.filter((x) => x.url === '/classic')[3];
    for (const h of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      expect(last.headers[h], h).toBeUndefined();
      expect(after.attempts[0].requestHeaders[h], h).toBeUndefined();
    }
  }, 20_000);
});
