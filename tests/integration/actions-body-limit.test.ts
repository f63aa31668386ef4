import { describe, expect, it } from 'vitest';
import { waitFor, type TestEngine } from '../helpers/engine';
import { testLab } from '../helpers/test-lab';
import { startEngine } from '../../src/main/engine/engine';
import { configSchema } from '../../src/shared/config.schema';
import type { CallDetail } from '../../src/shared/types';
import { MAX_ACTIONS_BATCH_BODY_BYTES, MAX_MAPPED_BODY_BYTES, MAX_MAPPING_DATA_FIELDS } from '../../src/shared/limits';

// Issue 22 item 5: an Actions mapping cannot blow a call up without limit. A mapped body over
// MAX_MAPPED_BODY_BYTES fails that one delivery (never sent, its reason recorded and shown), the
// collector still answers 200 and stores the call, and the call's other requests (Classic, other
// mappings, the other calls of its request and of its Actions batch) go out as usual.

const lab = testLab();

type Mapping = { name: string; trigger: Record<string, unknown>; url: string; method: 'POST'; headers: Record<string, string>; data?: unknown; batchSize?: number };

/** `n` fields, each a copy of what `path` finds: n × (its size). */
const copies = (n: number, path: string) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, { '@path': path }]));

function source(mappings: Mapping[], classicUrl: string) {
  return { name: 'big', writeKey: 'wk_big', webhooks: { enabled: true, mode: 'both', sharedSecret: 's', urls: [{ url: classicUrl, headers: {} }], mappings } };
}

/** A valid call of about 30 KB (under the collector's 32 KB). */
const bigTrack = (id: string) => ({ userId: 'u1', event: 'Order Completed', messageId: id, properties: { blob: 'x'.repeat(30_000) } });
const smallTrack = (id: string) => ({ userId: 'u1', event: 'Order Completed', messageId: id, properties: { n: 1 } });

async function detailOf(t: TestEngine, messageId: string, done: (d: CallDetail) => boolean, what: string): Promise<CallDetail> {
  return waitFor(async () => {
    const c = (await t.call('listMessages', { limit: 50 })).items.find((x) => x.messageId === messageId);
    if (!c) return undefined;
    const d = await t.call('getMessage', { id: c.id });
    return done(d) ? d : undefined;
  }, what, 15_000);
}

const actionsOf = (d: CallDetail, mapping: string) => d.deliveries.find((x) => x.kind === 'actions' && x.mapping === mapping);
const LIMIT_REASON = /^not sent: the mapped body passed its limit of [\d.]+ KB \(evaluation stopped at [\d,]+ bytes\): a call's mapped data may be 16 times the call/;

describe('an Actions mapping whose body passes the limit', () => {
  it('fails that one delivery with its reason, unsent; the call is stored (200) and its Classic and other mapping requests are delivered', async () => {
    const r = await lab.receiver();
    const t = await lab.start({
      config: {
        sources: [
          source(
            [
              // 500 copies of a 30 KB call: some 15 MB, 30 times the limit.
              { name: 'huge', trigger: {}, url: `${r.url}/huge`, method: 'POST', headers: {}, data: copies(500, '$.') },
              { name: 'small', trigger: {}, url: `${r.url}/small`, method: 'POST', headers: {}, data: { id: { '@path': '$.messageId' } } },
            ],
            `${r.url}/classic`,
          ),
        ],
      },
    });
    const res = await t.post('/v1/track', bigTrack('m-big'), { writeKey: 'wk_big' });
    expect(res).toEqual({ status: 200, json: { success: true } });

    const d = await detailOf(t, 'm-big', (x) => actionsOf(x, 'small')?.state === 'delivered' && x.deliveries.some((y) => y.kind === 'classic' && y.state === 'delivered'), 'the other requests delivered');
    const huge = actionsOf(d, 'huge')!;
    expect(huge).toMatchObject({ state: 'failed', attemptCount: 0, attempts: [] });
    expect(huge.lastError).toMatch(LIMIT_REASON);
    // What the call's summary (the inspector's list) shows for it.
    const outcome = d.urls.find((u) => u.via?.mapping === 'huge')!;
    expect(outcome).toMatchObject({ state: 'failed', attempts: 0, lastStatus: null });
    expect(r.requests.map((q) => q.url).sort()).toEqual(['/classic', '/small']);
    expect(JSON.parse(r.requests.find((q) => q.url === '/small')!.body.toString())).toEqual({ id: 'm-big' });
    // getStats (what `webhook-lab check` reads) counts it as failed.
    expect((await t.call('getStats', {})).deliveries).toMatchObject({ failed: 1, delivered: 2, pending: 0 });

    // There is no request to send again: a replay says so (an edited body can still be sent), and a
    // bulk retry of what failed leaves it out, instead of sending the receiver an empty request.
    await expect(t.call('replayMessage', { id: d.call.id, deliveryId: huge.id })).rejects.toMatchObject({ status: 409, message: expect.stringMatching(/was never sent \(its last error says why\), so there is no request to send again; replay it with an edited body/) });
    expect(await t.call('retryMatching', {})).toEqual({ matched: 0, retried: 0 });
    const edited = await t.call('replayMessage', { id: d.call.id, deliveryId: huge.id, body: '{"small":true}' });
    expect(edited.attempts[0]).toMatchObject({ responseStatus: 200, requestBody: '{"small":true}' });
    expect(r.requests.filter((q) => q.url === '/huge').map((q) => q.body.toString())).toEqual(['{"small":true}']);
  }, 30_000);

  it('in a batched mapping, fails only that call\'s request: the other calls of the same collector batch go out together in the Actions batch', async () => {
    const r = await lab.receiver();
    const t = await lab.start({
      config: {
        sources: [
          source(
            // 500 copies of `properties`: a few KB for a small call, 15 MB for the 30 KB one.
            [{ name: 'batched', trigger: {}, url: `${r.url}/batch`, method: 'POST', headers: {}, data: copies(500, '$.properties'), batchSize: 2 }],
            `${r.url}/classic`,
          ),
        ],
      },
    });
    const res = await t.post('/v1/batch', { batch: [{ type: 'track', ...smallTrack('s1') }, { type: 'track', ...bigTrack('b1') }, { type: 'track', ...smallTrack('s2') }] }, { writeKey: 'wk_big' });
    expect(res).toEqual({ status: 200, json: { success: true } });

    // The batch of 2 is full with the two small calls: it goes out at once.
    const batch = await waitFor(() => r.requests.find((q) => q.url === '/batch'), 'the batch request');
    const items = JSON.parse(batch.body.toString()) as Record<string, { n: number }>[];
    expect(items).toHaveLength(2);
    expect(items.map((i) => i.k0)).toEqual([{ n: 1 }, { n: 1 }]);

    const big = await detailOf(t, 'b1', (x) => actionsOf(x, 'batched')?.state === 'failed', 'the big call\'s Actions request failed');
    const failed = actionsOf(big, 'batched')!;
    expect(failed.lastError).toMatch(LIMIT_REASON);
    expect(failed).toMatchObject({ attemptCount: 0, itemCount: 1 });
    expect(failed.callIds).toBeUndefined();
    await detailOf(t, 's2', (x) => actionsOf(x, 'batched')?.state === 'delivered' && actionsOf(x, 'batched')!.callIds?.length === 2, 'the small calls\' batch delivered');
    await waitFor(() => r.requests.filter((q) => q.url === '/classic').length === 3, 'all three Classic requests');
    expect(r.requests.filter((q) => q.url === '/batch')).toHaveLength(1);
  }, 30_000);

  it('stops evaluating once past the limit: 1,000 whole-event copies of a 30 KB call (30 MB) are each failed, unsent (data-mapping unit test: evaluation stops at the limit)', async () => {
    const r = await lab.receiver();
    const t = await lab.start({
      config: { sources: [source([{ name: 'huge', trigger: {}, url: `${r.url}/huge`, method: 'POST', headers: {}, data: copies(MAX_MAPPING_DATA_FIELDS, '$.') }], `${r.url}/classic`)] },
    });
    // Ten such calls in one request: 300 MB of mapped bodies had the evaluation not stopped.
    const batch = Array.from({ length: 10 }, (_, i) => ({ type: 'track', ...bigTrack(`m${i}`), properties: { blob: 'x'.repeat(30_000 + i) } }));
    // Sent as several requests: one /v1/batch is limited to 500 KB.
    for (let i = 0; i < batch.length; i += 5) {
      expect((await t.post('/v1/batch', { batch: batch.slice(i, i + 5) }, { writeKey: 'wk_big' })).status).toBe(200);
    }
    await waitFor(async () => (await t.call('getStats', {})).deliveries.failed === 10 ? true : undefined, 'ten failed Actions requests');
    expect(r.requests.filter((q) => q.url === '/huge')).toHaveLength(0);
  }, 30_000);
});

describe('a mapping that multiplies small calls', () => {
  it('is held to 16 times each call (at least 8 KB): 100 tiny calls through 5 mappings of 1,000 whole-call copies fail, unsent, instead of making 73 MB', async () => {
    const r = await lab.receiver();
    const t = await lab.start({
      config: {
        sources: [{ name: 'amp', writeKey: 'wk_amp', webhooks: { enabled: true, mode: 'actions', mappings: [0, 1, 2, 3, 4].map((m) => ({ name: `m${m}`, trigger: {}, url: `${r.url}/m${m}`, method: 'POST', headers: {}, data: copies(MAX_MAPPING_DATA_FIELDS, '$.') })) }, }],
      },
    });
    // One request of about 5 KB: each call is some 150 bytes, so each mapping makes some 150 KB of it.
    const batch = Array.from({ length: 100 }, (_, i) => ({ type: 'track', userId: 'u', event: 'e', messageId: `m${i}` }));
    expect((await t.post('/v1/batch', { batch }, { writeKey: 'wk_amp' })).status).toBe(200);
    const stats = await waitFor(async () => {
      const s = await t.call('getStats', {});
      return s.unfinished === 0 ? s : undefined;
    }, 'every request settled');
    expect(stats).toMatchObject({ calls: 100, deliveries: { failed: 500, delivered: 0 } });
    expect(r.requests).toHaveLength(0);
    const c = (await t.call('listMessages', { limit: 1 })).items[0];
    const d = await t.call('getMessage', { id: c.id });
    expect(d.deliveries[0].lastError).toMatch(/^not sent: the mapped body passed its limit of 8 KB \(evaluation stopped at [\d,]+ bytes\): a call's mapped data may be 16 times the call \(here \d+ B\), at least 8 KB, at most 512 KB$/);
  }, 30_000);

  it('a small call may still be mapped to 8 KB, and a large one to 16 times its size', async () => {
    const r = await lab.receiver();
    const t = await lab.start({
      config: {
        sources: [{ name: 'ok', writeKey: 'wk_ok', webhooks: { enabled: true, mode: 'actions', mappings: [{ name: 'x', trigger: {}, url: `${r.url}/x`, method: 'POST', headers: {}, data: copies(15, '$.properties') }] } }],
      },
    });
    // 15 copies of 500 bytes (7.5 KB), and of 20 KB (300 KB, under 16 × 20 KB).
    for (const [id, n] of [['s', 500], ['l', 20_000]] as const) expect((await t.post('/v1/track', { userId: 'u', event: 'e', messageId: id, properties: { b: 'x'.repeat(n) } }, { writeKey: 'wk_ok' })).status).toBe(200);
    await waitFor(() => r.requests.length === 2, 'both sent');
    expect(r.requests.map((q) => q.body.length).sort((a, b) => a - b)).toEqual([expect.any(Number), expect.any(Number)]);
    expect(Math.min(...r.requests.map((q) => q.body.length))).toBeGreaterThan(7_500);
    expect(Math.max(...r.requests.map((q) => q.body.length))).toBeGreaterThan(300_000);
  });
});

describe('an Actions batch body is limited to 32 MB', () => {
  it('a full batch whose items would pass it goes as two requests, in order, each within it; every call is delivered', async () => {
    const r = await lab.receiver();
    // The engine's clock stands still, so the batch's 5 s wait never ends while the calls arrive
    // (six requests: the collector takes 500 KB at most): it goes when full, however busy the machine.
    const dataDir = lab.dataDir();
    const frozen = Date.now();
    const engine = await startEngine({
      dataDir,
      collectorPort: 0,
      mockReceiverPorts: { http: 0, https: 0 },
      clock: { now: () => frozen, random: Math.random },
      // 15 copies of a 30 KB `properties`: 450 KB per call (under 16 times it), 36 MB for the batch of 80.
      config: configSchema.parse({ sources: [{ name: 'big', writeKey: 'wk_big', webhooks: { enabled: true, mode: 'actions', mappings: [{ name: 'b', trigger: {}, url: `${r.url}/batch`, method: 'POST', headers: {}, data: copies(15, '$.properties'), batchSize: 80 }] } }] }),
    });
    try {
      const calls = Array.from({ length: 80 }, (_, i) => ({ type: 'track', userId: 'u', event: 'E', messageId: `m${i}`, properties: { i, blob: 'x'.repeat(30_000) } }));
      for (let i = 0; i < calls.length; i += 14) {
        const res = await fetch(`${engine.collectorUrl}/v1/batch`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from('wk_big:').toString('base64')}` }, body: JSON.stringify({ batch: calls.slice(i, i + 14) }) });
        expect(res.status).toBe(200);
      }
      await waitFor(async () => (await engine.handlers.getStats({})).deliveries.delivered === 80, 'every call delivered', 20_000);
      const sent = r.requests.filter((q) => q.url === '/batch');
      expect(sent).toHaveLength(2);
      for (const q of sent) expect(q.body.length).toBeLessThanOrEqual(MAX_ACTIONS_BATCH_BODY_BYTES);
      // Both go out at once, so they may arrive in either order: sorted by their first call.
      const items = sent.map((q) => JSON.parse(q.body.toString()) as { k0: { i: number } }[]).sort((a, b) => a[0].k0.i - b[0].k0.i);
      // The first request is as full as the limit allows: one more item would have passed it.
      expect(JSON.stringify(items[0]).length + JSON.stringify(items[1][0]).length + 1).toBeGreaterThan(MAX_ACTIONS_BATCH_BODY_BYTES);
      expect(items.flat().map((x) => x.k0.i)).toEqual(calls.map((_, i) => i));
    } finally {
      await engine.stop();
    }
  }, 30_000);
});

describe('a mapping\'s data is limited at config time', () => {
  it(`more than ${MAX_MAPPING_DATA_FIELDS} fields are refused, naming the field`, async () => {
    const r = await lab.receiver();
    const t = await lab.start();
    const err = await t
      .call('createSource', source([{ name: 'huge', trigger: {}, url: `${r.url}/huge`, method: 'POST', headers: {}, data: copies(20_000, '$.') }], `${r.url}/c`) as never)
      .then(() => null, (e: { fields?: { path: string; message: string }[] }) => e);
    expect(err?.fields).toEqual([{ path: 'webhooks.mappings[0].data', message: expect.stringMatching(new RegExp(`at most ${MAX_MAPPING_DATA_FIELDS.toLocaleString('en-US')} fields`)) }]);
    // Exactly at the limit is accepted.
    await t.call('createSource', source([{ name: 'max', trigger: {}, url: `${r.url}/m`, method: 'POST', headers: {}, data: copies(MAX_MAPPING_DATA_FIELDS, '$.') }], `${r.url}/c`) as never);
    expect(MAX_MAPPED_BODY_BYTES).toBe(512 * 1024);
  });
});
