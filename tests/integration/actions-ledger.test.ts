import { describe, expect, it } from 'vitest';
import { waitFor, type TestEngine } from '../helpers/engine';
import { testLab } from '../helpers/test-lab';
import { openDbFile } from '../helpers/db-file';
import type { CallSummary, UrlOutcome, WebhookSettings } from '../../src/shared/types';
import { Store } from '../../src/main/engine/store/store';
import { Ingest } from '../../src/main/engine/collector/ingest';
import { arrivalPlanner } from '../../src/main/engine/dispatcher/delivery-plan';
import { ActionsBatcher } from '../../src/main/engine/dispatcher/actions-batcher';

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
    // The events follow the rows a moment later (a busy machine shows the gap): polled, not read once.
    const recorded = () => t.events.flatMap((e) => (e.type === 'attempt.recorded' ? [e.attempt.method] : []));
    await waitFor(async () => (recorded().length >= 2 ? true : undefined), 'both attempt.recorded events');
    expect(recorded().sort()).toEqual(['PATCH', 'POST']);

    const jsonl = await t.call('exportDeliveries', { format: 'jsonl', limit: 10 });
    const line = JSON.parse(jsonl.content.trim()) as { deliveries: { attempts: { method: string }[] }[] };
    expect(line.deliveries.map((d) => d.attempts[0].method)).toEqual(['POST', 'PATCH']);
    const har = JSON.parse((await t.call('exportDeliveries', { format: 'har', limit: 10 })).content) as { log: { entries: { request: { method: string; url: string } }[] } };
    expect(har.log.entries.map((e) => `${e.request.method} ${new URL(e.request.url).pathname}`).sort()).toEqual(['PATCH /p', 'POST /classic']);
  }, 20_000);
});

describe('clearing the calls with Actions', () => {
  /** Rows that point at a call or a delivery no longer there. */
  function orphans(dataDir: string) {
    const db = openDbFile(dataDir);
    try {
      const n = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
      return {
        links: n('SELECT COUNT(*) AS n FROM delivery_calls WHERE call_id NOT IN (SELECT id FROM calls) OR delivery_id NOT IN (SELECT id FROM deliveries)'),
        items: n('SELECT COUNT(*) AS n FROM actions_batch_items WHERE call_id NOT IN (SELECT id FROM calls)'),
        deliveries: n('SELECT COUNT(*) AS n FROM deliveries WHERE call_id NOT IN (SELECT id FROM calls)'),
        attempts: n('SELECT COUNT(*) AS n FROM attempts WHERE delivery_id NOT IN (SELECT id FROM deliveries)'),
      };
    } finally {
      db.close();
    }
  }
  const count = (dataDir: string, table: string) => {
    const db = openDbFile(dataDir);
    try {
      return (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
    } finally {
      db.close();
    }
  };

  it('removes Actions deliveries, their links and waiting items with the calls; a batch of cleared calls never goes out, even when calls arriving during the clear fill it', async () => {
    const r = await receiver();
    const t = await lab.start({
      config: {
        sources: [
          source('acts', 'wk_acts', 'actions', [
            { name: 'single', trigger: { event: 'Single' }, url: `${r.url}/single`, method: 'PUT', headers: {} },
            { name: 'b', trigger: { event: 'Order Completed' }, url: `${r.url}/b`, method: 'POST', headers: {}, batchSize: 3 },
          ]),
          { name: 'plain', writeKey: 'wk_plain' },
        ],
      },
    });
    // Delivered Actions rows: a single and a full batch (3 calls), with their attempts.
    expect((await t.post('/v1/track', track('s1', 'Single'), { writeKey: 'wk_acts' })).status).toBe(200);
    for (const id of ['old1', 'old2', 'old3']) expect((await t.post('/v1/track', track(id), { writeKey: 'wk_acts' })).status).toBe(200);
    await waitFor(() => r.requests.length === 2, 'the single and the batch');
    // Many calls, so the clear takes many write jobs; the last two wait in the next batch of "b".
    for (let i = 0; i < 8; i++) {
      const batch = Array.from({ length: 500 }, (_, j) => ({ type: 'track', userId: 'u', event: 'Filler', messageId: `f${i}-${j}` }));
      expect((await t.post('/v1/batch', { batch }, { writeKey: 'wk_plain' })).status).toBe(200);
    }
    for (const id of ['wait1', 'wait2']) expect((await t.post('/v1/track', track(id), { writeKey: 'wk_acts' })).status).toBe(200);
    expect(count(t.dataDir, 'actions_batch_items')).toBe(2);

    // Calls arrive while the clear runs: the first one would fill the waiting batch.
    let cleared = false;
    const clear = t.call('clearCalls', {}).finally(() => (cleared = true));
    const posted: string[] = [];
    const during: string[] = [];
    for (let i = 1; !cleared && i <= 30; i++) {
      expect((await t.post('/v1/track', track(`new${i}`), { writeKey: 'wk_acts' })).status).toBe(200);
      posted.push(`new${i}`);
      if (!cleared) during.push(`new${i}`);
    }
    const { removed, canceled } = await clear;
    expect(removed).toBe(4 + 4000 + 2);
    // The two waiting items are canceled with their calls.
    expect(canceled).toBe(2);
    // The test is meaningful only if a call arrived while the clear was still running.
    expect(during.length).toBeGreaterThan(0);

    // Over 5 s later: whatever batch went out carries none of the cleared calls.
    await new Promise((res) => setTimeout(res, 5_500));
    const sentIds = r.requests.filter((q) => q.url === '/b').flatMap((q) => (JSON.parse(q.body.toString()) as { messageId: string }[]).map((x) => x.messageId));
    expect(sentIds.filter((m) => m.startsWith('wait'))).toEqual([]);
    // The calls that came during the clear are kept, and go in batches of their own.
    expect(sentIds.filter((m) => m.startsWith('new'))).toEqual(posted);

    expect(orphans(t.dataDir)).toEqual({ links: 0, items: 0, deliveries: 0, attempts: 0 });
    const left = (await t.call('listMessages', { limit: 100 })).items.map((c) => c.messageId!);
    expect(left.every((m) => m.startsWith('new'))).toBe(true);
  }, 60_000);
});

describe('retention with Actions', () => {
  it('keeps every call an unfinished batch carries and those waiting in a batch; once the batch is done they go, leaving no orphan rows', async () => {
    const dataDir = lab.dataDir();
    const store = new Store({ dataDir });
    try {
      const webhooks = source('acts', 'wk_acts', 'actions', [{ name: 'b', trigger: { type: 'track' }, url: 'http://127.0.0.1:9/b', method: 'POST', headers: {}, batchSize: 3 }]).webhooks;
      const acts = store.sources.create({ name: 'acts', writeKey: 'wk_acts', webhooks: webhooks as WebhookSettings }, Date.now());
      store.sources.create({ name: 'plain', writeKey: 'wk_plain' }, Date.now());
      // The batcher makes the batch delivery; nothing sends it, so it stays pending (unfinished).
      const batcher = new ActionsBatcher({ store, now: () => Date.now(), enqueue: () => undefined, touched: () => undefined, failed: (err: unknown) => { throw err; } });
      const ingest = new Ingest(store, () => Date.now(), arrivalPlanner(() => store.settings.get()), (r) => batcher.queued(r.batched));
      const send = (writeKey: string, id: string) =>
        ingest.handle({ path: '/v1/track', route: 'track', authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`, body: Buffer.from(JSON.stringify(track(id))) });

      // Calls 1-3 fill a batch (one pending delivery, call_id = call 1); 4-5 wait in the next; 6-9 are not forwarded.
      for (const id of ['c1', 'c2', 'c3', 'c4', 'c5']) expect((await send('wk_acts', id)).status).toBe(200);
      await batcher.flushDue();
      batcher.stop();
      for (const id of ['p6', 'p7', 'p8', 'p9']) expect((await send('wk_plain', id)).status).toBe(200);
      const ids = () => store.calls.list({ limit: 100 }).items.map((c) => c.messageId).reverse();
      expect(store.actions.group(acts.id, 'b')?.count).toBe(2);

      store.settings.apply({ retentionCalls: 2 });
      expect(store.prune()).toBe(2);
      expect(ids()).toEqual(['c1', 'c2', 'c3', 'c4', 'c5', 'p8', 'p9']);

      // The batch delivered: its three calls may go now; c4 and c5 still wait and stay.
      const db = openDbFile(dataDir, { write: true });
      db.prepare("UPDATE deliveries SET state = 'delivered'").run();
      db.close();
      expect(store.prune()).toBe(3);
      expect(ids()).toEqual(['c4', 'c5', 'p8', 'p9']);
      const check = openDbFile(dataDir);
      const n = (sql: string) => (check.prepare(sql).get() as { n: number }).n;
      expect([
        n('SELECT COUNT(*) AS n FROM delivery_calls'),
        n('SELECT COUNT(*) AS n FROM deliveries'),
        n('SELECT COUNT(*) AS n FROM actions_batch_items WHERE call_id NOT IN (SELECT id FROM calls)'),
        n('SELECT COUNT(*) AS n FROM actions_batch_items'),
      ]).toEqual([0, 0, 0, 2]);
      check.close();
    } finally {
      store.close();
    }
  });
});

describe('retrying the failed calls with Actions', () => {
  it('sends failed Actions requests again, beside a delivered Classic one and for an Actions-only call', async () => {
    const r = await receiver();
    const t = await lab.start({
      config: {
        sources: [
          source('acts', 'wk_acts', 'actions', [{ name: 'gone', trigger: {}, url: `${r.url}/gone`, method: 'PATCH', headers: {} }]),
          source('mixed', 'wk_mixed', 'both', [{ name: 'gone', trigger: {}, url: `${r.url}/gone`, method: 'POST', headers: {} }], `${r.url}/classic`),
        ],
      },
    });
    expect((await t.post('/v1/track', track('r1'), { writeKey: 'wk_acts' })).status).toBe(200);
    expect((await t.post('/v1/track', track('r2'), { writeKey: 'wk_mixed' })).status).toBe(200);
    await waitFor(async () => ((await t.call('getStats', {})).deliveries.failed === 2 ? true : undefined), 'both Actions requests failed');
    const gone = () => r.requests.filter((q) => q.url === '/gone').length;
    expect(gone()).toBe(2);

    // A status filter matches calls by their state: the mixed call reads delivered (its Classic request).
    expect(await t.call('retryMatching', { status: 'failed', dryRun: true })).toEqual({ matched: 1, retried: 0 });
    // Without one, a failed Actions request is found beside a delivered Classic one too.
    expect(await t.call('retryMatching', { dryRun: true })).toEqual({ matched: 2, retried: 0 });
    expect(await t.call('retryMatching', {})).toEqual({ matched: 2, retried: 2 });
    await waitFor(() => (gone() === 4 ? true : undefined), 'the two Actions requests sent again');
    const classic = r.requests.filter((q) => q.url === '/classic');
    expect(classic).toHaveLength(1);
    for (const id of (await t.call('listMessages', { limit: 10 })).items.map((c) => c.id)) {
      const detail = await waitFor(async () => {
        const d = await t.call('getMessage', { id });
        const actions = d.deliveries.find((x) => x.kind === 'actions')!;
        return actions.attempts.some((a) => a.trigger === 'manual') ? d : undefined;
      }, `a manual attempt on call ${id}'s Actions request`);
      const manual = detail.deliveries.find((x) => x.kind === 'actions')!.attempts.find((a) => a.trigger === 'manual')!;
      expect(manual.method).toBe(detail.call.sourceName === 'acts' ? 'PATCH' : 'POST');
    }
  });
});
