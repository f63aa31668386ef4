import { describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { waitFor, type TestEngine } from '../helpers/engine';
import type { TestReceiver } from '../helpers/receiver';
import { testLab } from '../helpers/test-lab';
import type { CallSummary } from '../../src/shared/types';
import { sentBody } from '../../src/shared/attempt-body';
import type { z } from 'zod';
import type { configSchema } from '../../src/shared/config.schema';

// Webhooks (Actions) beside Classic, end to end: collector → SQLite (calls, deliveries, batch items
// in one write job) → dispatcher/batcher → real local receivers; and what the inspector reads back.
const KEY = 'wk_actions';
const SECRET = 'act-s3cret';
const lab = testLab();
const receiver = () => lab.receiver();

const sha1 = (text: string | Buffer) => createHmac('sha1', SECRET).update(text).digest('hex');

type ConfigSource = NonNullable<z.input<typeof configSchema>['sources']>[number];

function source(classic: TestReceiver, single: TestReceiver, batched: TestReceiver, batchSize = 3): ConfigSource {
  return {
    name: 'shop',
    writeKey: KEY,
    webhooks: {
      enabled: true,
      mode: 'both',
      sharedSecret: SECRET,
      urls: [{ url: `${classic.url}/classic`, headers: {} }],
      mappings: [
        {
          name: 'orders',
          trigger: { type: 'track', event: 'Order Completed' },
          url: `${single.url}/orders`,
          method: 'PUT',
          headers: { 'X-Team': 'shop' },
          data: { order: { '@path': '$.properties.orderId' }, who: { '@template': 'user {{userId}}' }, fixed: 1 },
        },
        { name: 'all-tracks', trigger: { type: 'track' }, url: `${batched.url}/batch`, method: 'POST', headers: {}, batchSize },
      ],
    },
  };
}

const track = (i: number, event = 'Order Completed') => ({ userId: `u${i}`, event, messageId: `msg-${i}`, properties: { orderId: `o-${i}` } });

async function summaries(t: TestEngine): Promise<CallSummary[]> {
  return (await t.call('listMessages', { limit: 50 })).items;
}

describe('Webhooks (Actions) beside Classic', () => {
  it('one call yields the Classic request and each matching mapping its own; a batch of 3 goes out as one array signed over its first item', async () => {
    const [classic, single, batched] = [await receiver(), await receiver(), await receiver()];
    const t = await lab.start({ config: { sources: [source(classic, single, batched)] } });
    for (let i = 1; i <= 3; i++) expect((await t.post('/v1/track', track(i), { writeKey: KEY })).status).toBe(200);

    const classicReqs = await classic.waitForRequests(3);
    expect(classicReqs.map((r) => JSON.parse(r.body.toString()).messageId).sort()).toEqual(['msg-1', 'msg-2', 'msg-3']);
    for (const r of classicReqs) expect(r.headers['x-signature']).toBe(sha1(r.body));

    const singles = await single.waitForRequests(3);
    for (const r of singles) {
      expect(r.method).toBe('PUT');
      expect(r.url).toBe('/orders');
      expect(r.headers['user-agent']).toBe('Segment (Actions)');
      expect(r.headers['x-team']).toBe('shop');
      const data = JSON.parse(r.body.toString());
      expect(data).toEqual({ order: data.order, who: `user ${data.order.replace('o-', 'u')}`, fixed: 1 });
      expect(r.headers['x-signature']).toBe(sha1(JSON.stringify(data)));
    }
    expect(singles.map((r) => JSON.parse(r.body.toString()).order).sort()).toEqual(['o-1', 'o-2', 'o-3']);

    const [batch] = await batched.waitForRequests(1);
    expect(batch.method).toBe('POST');
    const items = JSON.parse(batch.body.toString()) as { messageId: string }[];
    expect(items.map((x) => x.messageId)).toEqual(['msg-1', 'msg-2', 'msg-3']);
    // Segment signs a batch over the first event's data only (the receiver's trap, kept).
    expect(batch.headers['x-signature']).toBe(sha1(JSON.stringify(items[0])));
    expect(batch.headers['x-signature']).not.toBe(sha1(batch.body));

    // The inspector: each call lists Classic first, then its single and its batch, with `via`.
    const list = await waitFor(async () => {
      const s = await summaries(t);
      return s.length === 3 && s.every((c) => c.urls.length === 3 && c.urls.every((u) => u.state === 'delivered')) ? s : undefined;
    }, 'every request delivered');
    const byMessage = new Map(list.map((c) => [c.messageId, c]));
    const first = byMessage.get('msg-1')!;
    expect(first.deliveryState).toBe('delivered');
    expect(first.urls[0].via).toBeUndefined();
    expect(first.urls[1]).toMatchObject({ url: `${single.url}/orders`, state: 'delivered', lastStatus: 200, via: { kind: 'actions', mapping: 'orders', method: 'PUT' } });
    expect(first.urls[1].via!.batch).toBeUndefined();
    const batchId = first.urls[2].via!.deliveryId!;
    list.forEach((c) => expect(c.urls[2].via).toEqual({ kind: 'actions', mapping: 'all-tracks', method: 'POST', deliveryId: batchId, batch: { size: 3, item: Number(c.messageId!.slice(4)) - 1 } }));

    const detail = await t.call('getMessage', { id: byMessage.get('msg-2')!.id });
    expect(detail.deliveries.map((d) => [d.kind, d.mapping, d.method, d.itemCount])).toEqual([
      ['classic', null, 'POST', 1],
      ['actions', 'orders', 'PUT', 1],
      ['actions', 'all-tracks', 'POST', 3],
    ]);
    const b = detail.deliveries[2];
    expect(b.id).toBe(batchId);
    expect(b.callIds).toEqual(['msg-1', 'msg-2', 'msg-3'].map((m) => byMessage.get(m)!.id));
    expect(sentBody(b, b.attempts[0])).toBe(batch.body.toString());
    expect(b.attempts[0].signature).toBe(batch.headers['x-signature']);
    expect(b).not.toHaveProperty('swSecret');

    // Replay of a given Actions delivery sends that request again.
    const replayed = await t.call('replayMessage', { id: byMessage.get('msg-2')!.id, deliveryId: batchId });
    expect(replayed.deliveryId).toBe(batchId);
    await batched.waitForRequests(2);
    expect(batched.requests[1].body.toString()).toBe(batch.body.toString());
  }, 30_000);

  it('a call no trigger matches creates no Actions request; a batch short of its size goes out 5 s after its first item', async () => {
    const [classic, single, batched] = [await receiver(), await receiver(), await receiver()];
    const t = await lab.start({ config: { sources: [source(classic, single, batched)] } });
    expect((await t.post('/v1/identify', { userId: 'u9', messageId: 'id-9' }, { writeKey: KEY })).status).toBe(200);
    await classic.waitForRequests(1);
    const [identify] = await summaries(t);
    expect(identify.urls.map((u) => u.via)).toEqual([undefined]);
    expect((await t.call('getMessage', { id: identify.id })).deliveries.map((d) => d.kind)).toEqual(['classic']);

    const sentAt = Date.now();
    expect((await t.post('/v1/track', track(1, 'Viewed'), { writeKey: KEY })).status).toBe(200);
    // Waiting in its batch: shown as pending under the mapping, 1 of 3 queued.
    const waiting = await waitFor(async () => (await summaries(t)).find((c) => c.messageId === 'msg-1'), 'the track call');
    expect(waiting.urls[1]).toMatchObject({ state: 'pending', via: { mapping: 'all-tracks', deliveryId: null, waiting: { queued: 1, of: 3 } } });
    expect((await t.call('listMessages', { urlState: 'pending', limit: 10 })).items.map((c) => c.messageId)).toContain('msg-1');
    const [batch] = await batched.waitForRequests(1, 10_000);
    expect(batch.receivedAt - sentAt).toBeGreaterThanOrEqual(4_900);
    expect(JSON.parse(batch.body.toString())).toHaveLength(1);
    expect(single.requests).toHaveLength(0);
  }, 20_000);

  it('queued items survive a restart and are sent at start; deleting the source cancels those still waiting', async () => {
    const [classic, single, batched] = [await receiver(), await receiver(), await receiver()];
    const dataDir = lab.dataDir();
    // batchSize 10: nothing fills it, and the test stops the engine well within the 5 s wait.
    let engine = await lab.start({ dataDir, config: { sources: [source(classic, single, batched, 10)] } });
    for (let i = 1; i <= 2; i++) expect((await engine.post('/v1/track', track(i, 'Viewed'), { writeKey: KEY })).status).toBe(200);
    await engine.stop();
    expect(batched.requests).toHaveLength(0);

    engine = await lab.start({ dataDir });
    const [batch] = await batched.waitForRequests(1, 3_000);
    expect((JSON.parse(batch.body.toString()) as { messageId: string }[]).map((x) => x.messageId)).toEqual(['msg-1', 'msg-2']);

    // More calls wait; deleting the source ends them as canceled (one canceled batch delivery), nothing is sent.
    for (let i = 3; i <= 4; i++) expect((await engine.post('/v1/track', track(i, 'Viewed'), { writeKey: KEY })).status).toBe(200);
    const t = engine;
    const src = (await t.call('listSources', {})).find((s) => s.name === 'shop')!;
    await t.call('deleteSource', { id: src.id });
    const list = await summaries(t);
    for (const m of ['msg-3', 'msg-4']) {
      const c = list.find((x) => x.messageId === m)!;
      expect(c.urls[1]).toMatchObject({ state: 'canceled', via: { mapping: 'all-tracks', batch: { size: 2 } } });
    }
    expect((await t.call('listMessages', { urlState: 'canceled', limit: 10 })).items.map((c) => c.messageId).sort()).toEqual(['msg-3', 'msg-4']);
    // A witness instead of a sleep: another source's batch, begun after the canceled one, goes out at
    // the end of its own 5 s wait; by then the canceled batch's wait had ended too, and it sent nothing.
    await t.call('importConfig', { sources: [{ ...source(classic, single, batched, 10), name: 'witness', writeKey: 'wk_witness' }] });
    expect((await t.post('/v1/track', track(5, 'Viewed'), { writeKey: 'wk_witness' })).status).toBe(200);
    const sent = await batched.waitForRequests(2, 15_000);
    expect(sent.map((r) => (JSON.parse(r.body.toString()) as { messageId: string }[]).map((x) => x.messageId))).toEqual([['msg-1', 'msg-2'], ['msg-5']]);
    const after = await summaries(t);
    expect(['msg-3', 'msg-4'].map((m) => after.find((x) => x.messageId === m)!.urls[1]!.state)).toEqual(['canceled', 'canceled']);
  }, 30_000);

  it('an Actions-only source: the call shows the combined state of its Actions requests, and status filters find it', async () => {
    const [classic, single, batched] = [await receiver(), await receiver(), await receiver()];
    const s = source(classic, single, batched, 1);
    const t = await lab.start({ config: { sources: [{ ...s, webhooks: { ...s.webhooks, mode: 'actions' } }] } });
    expect((await t.post('/v1/track', track(1), { writeKey: KEY })).status).toBe(200);
    await single.waitForRequests(1);
    await batched.waitForRequests(1);
    const [c] = await waitFor(async () => {
      const l = await summaries(t);
      return l[0]?.deliveryState === 'delivered' ? l : undefined;
    }, 'delivered');
    expect(c.urls.map((u) => u.via?.mapping)).toEqual(['orders', 'all-tracks']);
    expect(c.deliveryId).toBe(c.urls[0].via!.deliveryId);
    expect(classic.requests).toHaveLength(0);
    expect((await t.call('listMessages', { status: 'delivered', limit: 10 })).items.map((x) => x.id)).toEqual([c.id]);
    expect((await t.call('listMessages', { status: 'not_forwarded', limit: 10 })).items).toEqual([]);
    // Replay without a delivery id: the first Actions delivery (there is no Classic one).
    const r = await t.call('replayMessage', { id: c.id });
    expect(r.deliveryId).toBe(c.urls[0].via!.deliveryId);
    await single.waitForRequests(2);
  }, 20_000);
});

describe('Webhooks (Actions) settings in the config file and control API', () => {
  it('mode, mappings and standardWebhooksSecret round-trip through getConfig and importConfig; an invalid mapping is refused by field', async () => {
    const [classic, single, batched] = [await receiver(), await receiver(), await receiver()];
    const s = source(classic, single, batched);
    const webhooks = { ...s.webhooks, standardWebhooksSecret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' };
    let engine = await lab.start({ config: { sources: [{ ...s, webhooks }] } });
    const exported = await engine.call('getConfig', {});
    const shop = exported.sources!.find((x) => x.name === 'shop')!;
    expect(shop.webhooks).toEqual(webhooks);
    // With a Standard Webhooks secret every delivery, Classic and Actions, gets its own webhook-id at creation.
    expect((await engine.post('/v1/track', track(1), { writeKey: KEY })).status).toBe(200);
    const [call] = await summaries(engine);
    const ids = (await engine.call('getMessage', { id: call.id })).deliveries.map((d) => d.swId);
    expect(ids).toHaveLength(2);
    ids.forEach((id) => expect(id).toMatch(/^msg_[A-Za-z0-9_-]{20,}$/));
    expect(new Set(ids).size).toBe(2);
    await engine.stop();

    engine = await lab.start();
    await engine.call('importConfig', exported);
    const [created] = (await engine.call('listSources', {})).filter((x) => x.name === 'shop');
    expect(created.webhooks).toEqual(webhooks);
    const bad = { ...webhooks, mappings: [{ ...webhooks.mappings![0], method: 'DELETE' }] };
    await expect(engine.call('updateSource', { id: created.id, webhooks: bad } as never)).rejects.toThrow(/mappings\.0\.method|method/);
  });
});
