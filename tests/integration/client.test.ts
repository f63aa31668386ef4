import { afterEach, describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { request } from 'undici';
import { Analytics } from '../../src/main/engine/client';
import { waitFor, webhookSource } from '../helpers/engine';
import type { TestReceiver } from '../helpers/receiver';
import { testLab } from '../helpers/test-lab';

// The batching client against the real collector and dispatcher, and the app's own persisted client.
const KEY = 'wk_client';
const SECRET = 'client-secret';
// The lab (engines, receivers) is registered first, so it cleans up after the clients are closed.
const lab = testLab();
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function setup() {
  const receiver = await lab.receiver();
  const t = await lab.start({ config: { sources: [webhookSource('app', KEY, [`${receiver.url}/hook`], SECRET)] } });
  return { receiver, t };
}

const bodies = (r: TestReceiver) => r.requests.map((q) => JSON.parse(q.body.toString()));

describe('client → collector → dispatcher → receiver', () => {
  it('every call type arrives with the SPEC §4 body, signed; historical timestamps survive', async () => {
    const { receiver, t } = await setup();
    const client = new Analytics(KEY, { endpoint: t.collectorUrl, flushAt: 20, flushAfter: 60_000 });
    cleanup.push(() => client.close());
    const ts = '2020-02-02T10:00:00.000Z';
    client.identify({ userId: 'u1', traits: { plan: 'pro' } });
    client.track({ userId: 'u1', event: 'Order Completed', properties: { total: 9 }, timestamp: new Date(ts) });
    client.page({ userId: 'u1', name: 'Home', category: 'Docs', properties: { path: '/' } });
    client.screen({ userId: 'u1', name: 'Main' });
    client.group({ userId: 'u1', groupId: 'g1', traits: { seats: 3 } });
    client.alias({ userId: 'u2', previousId: 'u1' });
    const result = await client.flush();
    expect(result).toMatchObject({ sent: 6, dropped: 0 });
    await receiver.waitForRequests(6);
    for (const q of receiver.requests) expect(q.headers['x-signature']).toBe(createHmac('sha1', SECRET).update(q.body).digest('hex'));
    const byType = Object.fromEntries(bodies(receiver).map((b) => [b.type, b]));
    expect(byType.identify).toMatchObject({ version: 1, userId: 'u1', traits: { plan: 'pro' } });
    expect(byType.track).toMatchObject({ event: 'Order Completed', properties: { total: 9 } });
    expect(byType.page).toMatchObject({ name: 'Home', category: 'Docs', properties: { path: '/' } });
    expect(byType.screen).toMatchObject({ name: 'Main' });
    expect(byType.group).toMatchObject({ groupId: 'g1', traits: { seats: 3 } });
    expect(byType.alias).toMatchObject({ previousId: 'u1', userId: 'u2', 'Previous ID': 'u1', 'User ID': 'u2' });
    // sentAt and timestamp come from the same clock here, so clock-skew correction keeps the historical time (±1 s).
    expect(Math.abs(Date.parse(byType.track.timestamp) - Date.parse(ts))).toBeLessThan(1000);
    expect(byType.track.originalTimestamp).toBe(ts);
    expect(byType.track.context.library.name).toBeTruthy();
  });

  it('integrations: {All:false} is not forwarded; {All:false, Webhooks:true} is', async () => {
    const { receiver, t } = await setup();
    const client = new Analytics(KEY, { endpoint: t.collectorUrl, flushAt: 2 });
    cleanup.push(() => client.close());
    client.track({ userId: 'u', event: 'blocked', integrations: { All: false } });
    client.track({ userId: 'u', event: 'allowed', integrations: { All: false, Webhooks: true } });
    await client.flush();
    await receiver.waitForRequests(1);
    // The blocked call was stored without a delivery (both were stored before flush() resolved), so
    // it can never be sent: no need to wait and see.
    const stored = (await t.call('listMessages', { limit: 10 })).items;
    expect(stored.map((c) => [c.label, c.deliveryState === null]).sort()).toEqual([['allowed', false], ['blocked', true]]);
    expect(bodies(receiver).map((b) => b.event)).toEqual(['allowed']);
  });

  it('a collector answering 500 then 200 → the batch is retried and delivered', async () => {
    const { receiver, t } = await setup();
    let n = 0;
    // A proxy in front of the real collector that fails the first request.
    const proxy = await lab.receiver(async (req, res) => {
      if (n++ === 0) return void res.writeHead(500).end('{"success":false}');
      const up = await request(t.collectorUrl + req.url, { method: 'POST', headers: req.headers as Record<string, string>, body: req.body });
      res.writeHead(up.statusCode, { 'content-type': 'application/json' }).end(await up.body.text());
    });
    const retries: unknown[] = [];
    const client = new Analytics(KEY, { endpoint: proxy.url, flushAt: 1 });
    client.on('retry', (e) => retries.push(e));
    cleanup.push(() => client.close());
    client.track({ userId: 'u', event: 'retried' });
    const r = await client.flush();
    expect(r.sent).toBe(1);
    expect(retries).toHaveLength(1);
    expect(proxy.requests[0].body.equals(proxy.requests[1].body)).toBe(true);
    await receiver.waitForRequests(1);
    expect(bodies(receiver)[0].event).toBe('retried');
  });
});

describe("the app's client (control API operations)", () => {
  it('queues built calls, flushes them through the embedded collector, reports its state', async () => {
    const { receiver, t } = await setup();
    const sent = await t.call('clientSend', { type: 'track', userId: 'u', event: 'From the UI' });
    expect(sent.messageId).toMatch(/[0-9a-f-]{36}/);
    expect((await t.call('clientState', {})).queued).toBe(1);
    const flushed = await t.call('clientFlush', {});
    expect(flushed).toMatchObject({ sent: 1, batches: 1, errors: [] });
    await receiver.waitForRequests(1);
    expect(bodies(receiver)[0]).toMatchObject({ event: 'From the UI', messageId: sent.messageId });
    const state = await t.call('clientState', {});
    expect(state).toMatchObject({ queued: 0, batchesSent: 1 });
    expect(state.recentBatches[0]).toMatchObject({ count: 1, status: 200 });
    expect(state.log.some((l) => /flush/.test(l.line))).toBe(true);
  });

  it('a flush to a collector that never answers (a hang fault) is answered, saying the client goes on; nothing is lost (issue 38)', async () => {
    const { receiver, t } = await setup();
    const [source] = await t.call('listSources', {});
    await t.call('updateSource', { id: source.id, collectorFaults: { rate: 1, mode: 'hang' } });
    await t.call('clientSend', { type: 'track', userId: 'u', event: 'Held' });
    // The test's own timeout (below) is what a flush held for the client's retries would exceed.
    const flushed = await t.call('clientFlush', {});
    expect(flushed).toMatchObject({ sent: 0, batches: 0 });
    expect(flushed.errors).toEqual([expect.stringMatching(/^still sending after 10 s: the collector has not answered; the client keeps trying in the background/)]);
    // Once the collector answers again, the call goes through.
    await t.call('updateSource', { id: source.id, collectorFaults: null });
    await receiver.waitForRequests(1, 120_000);
    expect(bodies(receiver)[0]).toMatchObject({ event: 'Held' });
  }, 180_000);

  it('an invalid call is refused with the field named, nothing queued', async () => {
    const { t } = await setup();
    await expect(t.call('clientSend', { type: 'track', userId: 'u' })).rejects.toMatchObject({ status: 400, fields: [{ path: 'event' }] });
    expect((await t.call('clientState', {})).queued).toBe(0);
  });

  it('settings change flushAt and the endpoint; a bad endpoint is refused', async () => {
    const { t } = await setup();
    const s = await t.call('clientUpdateSettings', { flushAt: 1, flushAfter: 250 });
    expect(s).toMatchObject({ flushAt: 1, flushAfter: 250, endpoint: t.collectorUrl });
    await expect(t.call('clientUpdateSettings', { endpoint: 'not a url' })).rejects.toMatchObject({ status: 400 });
    await t.call('clientSend', { type: 'track', userId: 'u', event: 'auto' });
    await waitFor(async () => (await t.call('clientState', {})).batchesSent === 1, 'flushAt 1 to send at once');
  });

  it('the queue is persisted in SQLite: messages queued while the collector is down are sent after a restart', async () => {
    const receiver = await lab.receiver();
    // The client's endpoint: a proxy that is down until `target` is set, then forwards to it.
    let target: string | null = null;
    const proxy = await lab.receiver(async (req, res) => {
      if (!target) return void res.writeHead(503).end('{"success":false}');
      const up = await request(target + req.url, { method: 'POST', headers: req.headers as Record<string, string>, body: req.body });
      res.writeHead(up.statusCode, { 'content-type': 'application/json' }).end(await up.body.text());
    });
    const config = { sources: [webhookSource('app', KEY, [`${receiver.url}/hook`], SECRET)] };
    const dataDir = lab.dataDir();
    const first = await lab.start({ config, dataDir });
    await first.call('clientUpdateSettings', { endpoint: proxy.url, flushAfter: 3_600_000 });
    await first.call('clientSend', { type: 'track', userId: 'u', event: 'Queued before quit' });
    await first.stop({ keepData: true });
    expect(receiver.requests).toHaveLength(0);

    const second = await lab.start({ config, dataDir });
    target = second.collectorUrl;
    await receiver.waitForRequests(1, 15_000);
    expect(bodies(receiver)[0].event).toBe('Queued before quit');
    await waitFor(async () => (await second.call('clientState', {})).queued === 0, 'the queue to empty');
  }, 30_000);
});
