import { describe, expect, it } from 'vitest';
import { waitFor, type TestEngine } from '../helpers/engine';
import { testLab } from '../helpers/test-lab';
import type { CallSummary, UrlOutcome } from '../../src/shared/types';

// Webhooks (Actions) across the call ledger's other operations: getStats counts Actions requests,
// every member of a batch hears of its rounds, attempts carry their method, and clearing the calls
// leaves nothing of Actions behind (nor sends a batch of cleared calls).

const lab = testLab();

/** 404 on /gone, 200 elsewhere. */
const receiver = () => lab.receiver((req, res) => void res.writeHead(req.url.startsWith('/gone') ? 404 : 200).end());

type Mapping = { name: string; trigger: Record<string, unknown>; url: string; method: 'POST' | 'PUT' | 'PATCH'; headers: Record<string, string>; batchSize?: number };

function source(name: string, writeKey: string, mode: 'actions' | 'both', mappings: Mapping[], classicUrl?: string) {
  return { name, writeKey, webhooks: { enabled: true, mode, sharedSecret: 'k', urls: classicUrl ? [{ url: classicUrl, headers: {} }] : [], mappings } };
}

const sourceId = async (t: TestEngine, name: string) => (await t.call('listSources', {})).find((s) => s.name === name)!.id;
const track = (id: string, event = 'Order Completed') => ({ userId: 'u1', event, messageId: id, properties: { orderId: id } });

describe('getStats with Webhooks (Actions)', () => {
  it('counts each Actions request per call it carries, a call waiting in a batch as pending, and not forwarded only a call with no request of any kind', async () => {
    const r = await receiver();
    const t = await lab.start({
      config: {
        sources: [
          source('acts', 'wk_acts', 'actions', [
            { name: 'ok', trigger: { type: 'track' }, url: `${r.url}/ok`, method: 'PUT', headers: {} },
            { name: 'gone', trigger: { event: 'Fail' }, url: `${r.url}/gone`, method: 'POST', headers: {} },
            { name: 'later', trigger: { type: 'track' }, url: `${r.url}/batch`, method: 'POST', headers: {}, batchSize: 10 },
          ]),
          source('mixed', 'wk_mixed', 'both', [{ name: 'gone', trigger: {}, url: `${r.url}/gone`, method: 'POST', headers: {} }], `${r.url}/classic`),
        ],
      },
    });
    const acts = await sourceId(t, 'acts');
    const sentAt = Date.now();
    expect((await t.post('/v1/track', track('a1'), { writeKey: 'wk_acts' })).status).toBe(200);
    expect((await t.post('/v1/track', track('a2', 'Fail'), { writeKey: 'wk_acts' })).status).toBe(200);
    // No trigger matches an identify call: not forwarded.
    expect((await t.post('/v1/identify', { userId: 'u1', messageId: 'a3' }, { writeKey: 'wk_acts' })).status).toBe(200);
    expect((await t.post('/v1/track', track('m1'), { writeKey: 'wk_mixed' })).status).toBe(200);

    // The single requests settle; the two tracks still wait in "later" (batch of 10, 5 s).
    const waiting = await waitFor(async () => {
      const s = await t.call('getStats', { sourceId: acts });
      return s.deliveries.delivered === 2 && s.deliveries.failed === 1 ? s : undefined;
    }, 'the single Actions requests');
    expect(waiting).toMatchObject({ calls: 3, dropped: 0, notForwarded: 1, unfinished: 2 });
    expect(waiting.deliveries).toEqual({ pending: 2, in_flight: 0, retrying: 0, delivered: 2, failed: 1, expired: 0, canceled: 0 });

    // Mode both: the Classic delivery and the failed Actions one both count, for one call.
    const mixed = await waitFor(async () => {
      const s = await t.call('getStats', { sourceId: await sourceId(t, 'mixed') });
      return s.deliveries.failed === 1 && s.deliveries.delivered === 1 ? s : undefined;
    }, 'the mixed source settled');
    expect(mixed).toMatchObject({ calls: 1, notForwarded: 0, unfinished: 0 });

    // The batch goes out 5 s after its first item: one delivery, counted for each of its 2 calls.
    const done = await waitFor(async () => {
      const s = await t.call('getStats', { sourceId: acts });
      return s.unfinished === 0 ? s : undefined;
    }, 'the batch delivered', 15_000);
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(4_900);
    expect(r.requests.filter((q) => q.url === '/batch')).toHaveLength(1);
    expect(done.deliveries).toEqual({ pending: 0, in_flight: 0, retrying: 0, delivered: 4, failed: 1, expired: 0, canceled: 0 });
    expect(done).toMatchObject({ calls: 3, notForwarded: 1 });

    // Every source together, and `since` leaves the earlier calls out.
    const all = await t.call('getStats', {});
    expect(all).toMatchObject({ calls: 4, notForwarded: 1, deliveries: { delivered: 5, failed: 2 } });
    expect((await t.call('getStats', { since: new Date(Date.now() + 60_000).toISOString() })).calls).toBe(0);
  }, 30_000);
});

describe('live rows of an Actions batch', () => {
  it('after each round every member of the batch is sent in calls.updated, not only the first', async () => {
    let fail = true;
    const r = await lab.receiver((_req, res) => void res.writeHead(fail ? 503 : 200).end());
    const t = await lab.start({
      config: { sources: [source('batcher', 'wk_batch', 'actions', [{ name: 'b', trigger: {}, url: `${r.url}/b`, method: 'POST', headers: {}, batchSize: 3 }])] },
      // A retry a second later, whatever the preset's first delay.
      overrides: { retrySchedule: { preset: 'custom', delaysMs: [1000], jitter: 0, windowMs: 3_600_000 } },
    });
    for (const id of ['b1', 'b2', 'b3']) expect((await t.post('/v1/track', track(id), { writeKey: 'wk_batch' })).status).toBe(200);
    await r.waitForRequests(1);

    const batchState = (c: CallSummary): UrlOutcome['state'] | undefined => c.urls.find((u) => u.via?.mapping === 'b')?.state;
    /** The batch part's states each call's live row went through, in event order. */
    const seen = () => {
      const out = new Map<string, string[]>();
      for (const e of t.events) if (e.type === 'calls.updated') for (const c of e.calls) out.set(c.messageId!, [...(out.get(c.messageId!) ?? []), batchState(c) ?? 'none']);
      return out;
    };
    const all = (state: string) => ['b1', 'b2', 'b3'].every((m) => seen().get(m)?.includes(state));
    await waitFor(() => all('retrying'), 'every member shown retrying after the failed round');
    fail = false;
    await waitFor(() => all('delivered'), 'every member shown delivered after the retry', 10_000);
    // Attempts are listed once, under the batch's first call.
    expect(new Set(t.events.filter((e) => e.type === 'attempt.recorded').map((e) => (e as { callId: number }).callId)).size).toBe(1);
  }, 20_000);
});

describe('an attempt says its method', () => {
  it('in getMessage, attempt.recorded events and the JSON Lines and HAR exports: the delivery\'s (Classic POST, Actions the mapping\'s)', async () => {
    const r = await receiver();
    const t = await lab.start({
      config: { sources: [source('m', 'wk_m', 'both', [{ name: 'patch', trigger: {}, url: `${r.url}/p`, method: 'PATCH', headers: {} }], `${r.url}/classic`)] },
    });
    expect((await t.post('/v1/track', track('x1'), { writeKey: 'wk_m' })).status).toBe(200);
    await r.waitForRequests(2);
    const [c] = await waitFor(async () => {
      const l = (await t.call('listMessages', { limit: 5 })).items;
      return l[0]?.urls.every((u) => u.state === 'delivered') ? l : undefined;
    }, 'delivered');
    const detail = await t.call('getMessage', { id: c.id });
    expect(detail.deliveries.map((d) => [d.kind, d.attempts.map((a) => a.method)])).toEqual([
      ['classic', ['POST']],
      ['actions', ['PATCH']],
    ]);
    const recorded = t.events.flatMap((e) => (e.type === 'attempt.recorded' ? [e.attempt.method] : []));
    expect(recorded.sort()).toEqual(['PATCH', 'POST']);

    const jsonl = await t.call('exportDeliveries', { format: 'jsonl', limit: 10 });
    const line = JSON.parse(jsonl.content.trim()) as { deliveries: { attempts: { method: string }[] }[] };
    expect(line.deliveries.map((d) => d.attempts[0].method)).toEqual(['POST', 'PATCH']);
    const har = JSON.parse((await t.call('exportDeliveries', { format: 'har', limit: 10 })).content) as { log: { entries: { request: { method: string; url: string } }[] } };
    expect(har.log.entries.map((e) => `${e.request.method} ${new URL(e.request.url).pathname}`).sort()).toEqual(['PATCH /p', 'POST /classic']);
  }, 20_000);
});
