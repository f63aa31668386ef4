import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../../src/main/engine/store/store';
import { Ingest } from '../../src/main/engine/collector/ingest';
import { arrivalPlanner } from '../../src/main/engine/dispatcher/delivery-plan';
import type { NewActionsDelivery, NewDelivery } from '../../src/main/engine/store/delivery.types';

// One delivery lifecycle (issue 27): every delivery is created, scheduled, finished and canceled
// through the store's delivery ledger, whoever asks. What each operation hands the dispatcher is the
// delivery its row reads back as (a new delivery's defaults are written once), over a real SQLite file.

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function open(calls: number) {
  const dataDir = mkdtempSync(join(tmpdir(), 'wl-ledger-'));
  dirs.push(dataDir);
  const store = new Store({ dataDir });
  stores.push(store);
  const source = store.sources.create({ name: 'src', writeKey: 'wk_src' }, Date.now());
  const ingest = new Ingest(store, () => Date.now(), arrivalPlanner(() => store.settings.get()), () => {});
  const batch = Array.from({ length: calls }, (_, i) => ({ type: 'track', userId: `u${i}`, event: `E${i}` }));
  const res = await ingest.handle({ path: '/v1/batch', route: 'batch', authorization: `Basic ${Buffer.from('wk_src:').toString('base64')}`, body: Buffer.from(JSON.stringify({ batch })) });
  expect(res.status).toBe(200);
  const callIds = store.calls.list({ limit: 100 }).items.map((c) => c.id).reverse();
  return { store, sourceId: source.id, callIds };
}

const classic = (urls = 2): NewDelivery => ({
  urls: Array.from({ length: urls }, (_, i) => ({ url: `http://127.0.0.1:9/${i}`, headers: { 'x-n': String(i) } })),
  body: Buffer.from('{"event":"E0"}'),
  userAgent: 'Segment.io/1.0',
  signature: 'sig',
  standardWebhooks: null,
});
const actions = (callIds: number[], extra: Partial<NewActionsDelivery> = {}): NewActionsDelivery => ({
  ...classic(1),
  userAgent: 'Segment (Actions)',
  mapping: 'm',
  method: 'PUT',
  timeoutMs: 7_000,
  callIds,
  ...extra,
});

describe('the delivery ledger', () => {
  it('hands out each delivery it creates exactly as its row reads back: Classic, for a replay, Actions, a flushed batch', async () => {
    const { store, sourceId, callIds } = await open(6);
    const { ledger, deliveries } = store;
    const made = await store.writes.run((tx) => [
      ledger.create(tx, callIds[0], sourceId, 'track', classic()),
      ledger.createForReplay(tx, callIds[1], sourceId, 'track', classic(1)),
      ledger.createActions(tx, sourceId, 'track', actions([callIds[2]])),
    ]);
    for (const d of made) expect(d).toEqual(deliveries.active(d.id));
    expect(made.map((d) => [d.state, d.pendingUrls, d.kind, d.method, d.itemCount])).toEqual([
      ['pending', [0, 1], 'classic', 'POST', 1],
      ['failed', [], 'classic', 'POST', 1],
      ['pending', [0], 'actions', 'PUT', 1],
    ]);
    // Nothing resumes a delivery made for a replay; the pending ones are resumed.
    expect(deliveries.resumable(Date.now(), 0, 10).map((d) => d.id)).toEqual([made[0].id, made[2].id]);

    // Batch items queued with their calls, then flushed: one delivery carrying them in queue order, the items gone.
    await store.writes.run((tx) => {
      for (const id of callIds.slice(3)) ledger.queueItem(tx, sourceId, id, { mapping: 'b', data: `{"c":${id}}`, target: '' }, Date.now());
    });
    expect(store.actions.group(sourceId, 'b')?.count).toBe(3);
    const items = store.actions.take(sourceId, 'b', 10);
    const batch = await store.writes.run((tx) => ledger.createBatch(tx, sourceId, 'track', actions(items.map((i) => i.callId), { mapping: 'b' }), items.map((i) => i.id)));
    expect(batch).toEqual(deliveries.active(batch.id));
    expect(batch.itemCount).toBe(3);
    expect(deliveries.callsOf(batch.id)).toEqual(callIds.slice(3));
    expect(store.actions.group(sourceId, 'b')).toBeNull();
  });

  it('finishes a never-sent Actions delivery as failed at creation, and a canceled batch as canceled, with their reasons', async () => {
    const { store, sourceId, callIds } = await open(3);
    const { ledger, deliveries } = store;
    const unsent = await store.writes.run((tx) => ledger.createActions(tx, sourceId, 'track', actions([callIds[0]], { notSent: 'not sent: too big' })));
    expect(unsent).toEqual(deliveries.active(unsent.id));
    expect(unsent).toMatchObject({ state: 'failed', pendingUrls: [], urlStates: [['failed', null, 0]] });
    expect(deliveries.forCall(callIds[0])[0]).toMatchObject({ state: 'failed', lastError: 'not sent: too big', attemptCount: 0 });

    await store.writes.run((tx) => {
      for (const id of callIds.slice(1)) ledger.queueItem(tx, sourceId, id, { mapping: 'b', data: 'null', target: '' }, Date.now());
    });
    const items = store.actions.take(sourceId, 'b', 10);
    await store.writes.run((tx) => ledger.cancelBatch(tx, sourceId, 'track', actions(items.map((i) => i.callId), { mapping: 'b' }), items.map((i) => i.id), 'canceled: gone'));
    const [canceled] = deliveries.forCall(callIds[2]);
    expect(canceled).toMatchObject({ state: 'canceled', lastError: 'canceled: gone', itemCount: 2, callIds: callIds.slice(1) });
    expect(canceled.urls).toHaveLength(1);
    expect(store.calls.list({ limit: 10 }).items.find((c) => c.id === callIds[1])?.urls.map((u) => u.state)).toEqual(['canceled']);
    expect(store.actions.group(sourceId, 'b')).toBeNull();
    expect(deliveries.countUnfinished()).toBe(0);
  });

  it('records a round with its attempts, cancels what is unfinished, and records nothing for a delivery erased with its call', async () => {
    const { store, sourceId, callIds } = await open(3);
    const { ledger, deliveries } = store;
    const [a, b, c] = await store.writes.run((tx) => callIds.map((id) => ledger.create(tx, id, sourceId, 'track', classic(1))));
    const attempt = {
      deliveryId: a.id, round: 1, urlIndex: 0, url: a.urls[0].url, trigger: 'scheduled' as const, startedAt: 1_000, durationMs: 5, requestHeaders: {}, body: null,
      signature: null, responseStatus: 500, responseHeaders: {}, responseBody: '', responseTruncated: false, errorCode: null, errorMessage: null,
      timedOut: false, timeoutMs: null, tlsError: null, connectError: null, outcome: 'retryable' as const, timing: null,
    };
    const retrying = {
      id: a.id, state: 'retrying' as const, pendingUrls: [0], round: 1, attemptCount: 1, nextAttemptAt: 5_000, nextSimOffsetMs: 5_000, simElapsedMs: 0,
      firstAttemptAt: 1_000, lastAttemptAt: 1_000, lastDurationMs: 5, deliveredAt: null, lastError: 'HTTP 500', urlStates: [['retrying', 500, 1]] as [ 'retrying', number, number][],
    };
    const ids = await store.writes.run((tx) => ledger.recordRound(tx, retrying, [attempt]));
    expect(ids).toHaveLength(1);
    expect(deliveries.active(a.id)).toMatchObject({ state: 'retrying', round: 1, attemptCount: 1, nextAttemptAt: 5_000, urlStates: [['retrying', 500, 1]] });
    expect(deliveries.due(5_000, 10).map((d) => d.id)).toEqual([a.id]);

    // A retry going out says so; a cancel ends it and every other unfinished one of the source.
    await store.writes.run((tx) => ledger.markInFlight(tx, a.id));
    expect(deliveries.active(a.id)?.state).toBe('in_flight');
    const canceled = await store.writes.run((tx) => ledger.cancelOfSource(tx, sourceId, 'canceled: source deleted'));
    expect(canceled.map((x) => x.deliveryId).sort()).toEqual([a.id, b.id, c.id].sort());
    expect(deliveries.active(a.id)).toMatchObject({ state: 'canceled', pendingUrls: [], urlStates: [['canceled', 500, 1]] });
    // An in-flight write queued after the cancel leaves it canceled.
    await store.writes.run((tx) => ledger.markInFlight(tx, a.id));
    expect(deliveries.active(a.id)?.state).toBe('canceled');
    // Nor does it move a finished one (a replay delivered it while its retry was admitted).
    await store.writes.run((tx) => ledger.recordRound(tx, { ...retrying, id: b.id, state: 'delivered', pendingUrls: [], nextAttemptAt: null, urlStates: [['delivered', 200, 1]] }, []));
    await store.writes.run((tx) => ledger.markInFlight(tx, b.id));
    expect(deliveries.active(b.id)?.state).toBe('delivered');

    // Erased with its call (retention, a clear): the round that was out records nothing.
    await store.writes.run((tx) => store.calls.remove(tx, [callIds[0]]));
    expect(deliveries.active(a.id)).toBeUndefined();
    expect(await store.writes.run((tx) => ledger.recordRound(tx, { ...retrying, state: 'delivered' }, [{ ...attempt, round: 2 }]))).toBeNull();
    expect(deliveries.forCall(callIds[0])).toEqual([]);
  });
});
