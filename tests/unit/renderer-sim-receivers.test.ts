import { describe, expect, it } from 'vitest';
import { matchAttempt } from '../../src/renderer/features/receivers/receiver-requests';
import { behaviorSummary, draftFromReceiver, draftToInput, emptyDraft } from '../../src/renderer/features/receivers/receiver-model';
import { createAppStore } from '../../src/renderer/stores/app.store';
import { bodyMessageId } from '../../src/renderer/stores/receivers.slice';
import { mockReceiverSchema, type MockRequestRecord } from '../../src/shared/mock-receiver.schema';
import type { MockReceiverView } from '../../src/shared/simulation.contract';
import type { Attempt, CallDetail } from '../../src/shared/types';
import { FakeApi, invalid } from './renderer-sim-fake-api';
import { until } from '../helpers/until';

function view(id: string, patch: Partial<MockReceiverView> = {}): MockReceiverView {
  return { id, name: id, path: `/${id}`, tls: false, behavior: {}, url: `http://127.0.0.1:4000/${id}`, requestCount: 0, lastRequestAt: null, ...patch };
}

function record(id: string, receiverId: string, body: string, at: string, seq = 1): MockRequestRecord {
  return {
    id,
    receiverId,
    receiverName: receiverId,
    seq,
    at,
    method: 'POST',
    path: `/${receiverId}`,
    tls: false,
    headers: {},
    body,
    bodyBytes: body.length,
    bodyTruncated: false,
    response: { action: 'status', status: 500, delayMs: 0, failed: false, headers: null, body: null, endedBy: 'response', durationMs: 1 },
    signature: { state: 'valid', received: 'ab', expected: 'ab', reason: null },
  };
}

describe('receiver form model', () => {
  it('turns every behavior field into a definition the shared schema accepts, and back', () => {
    const d = {
      ...emptyDraft(0),
      name: 'flaky',
      path: ' /flaky ',
      secret: 's3cret',
      tls: true,
      status: '503',
      delayMode: 'random' as const,
      delayMinMs: '100',
      delayMaxMs: '900',
      failFirst: '3',
      failPercent: '12.5',
      seed: '42',
      body: '{"ok":false}',
      headers: [
        { name: 'Retry-After', value: '5' },
        { name: '', value: '' },
      ],
    };
    const { input, errors } = draftToInput(d);
    expect(errors).toEqual({});
    expect(input).toEqual({
      name: 'flaky',
      path: '/flaky',
      secret: 's3cret',
      tls: true,
      behavior: { status: 503, delay: { minMs: 100, maxMs: 900 }, failFirst: 3, failPercent: 12.5, seed: 42, body: '{"ok":false}', headers: { 'Retry-After': '5' } },
    });
    const parsed = mockReceiverSchema.parse(input);
    expect(draftToInput(draftFromReceiver({ ...parsed, id: 'r1' })).input).toEqual(input);
  });

  it('hang and reset are exclusive choices; a fixed delay needs a number', () => {
    expect(draftToInput({ ...emptyDraft(0), ending: 'hang' }).input.behavior).toEqual({ hang: true });
    expect(draftToInput({ ...emptyDraft(0), ending: 'reset', delayMode: 'fixed', delayMs: '250' }).input.behavior).toEqual({ reset: true, delayMs: 250 });
    expect(draftToInput({ ...emptyDraft(0), delayMode: 'fixed', delayMs: '' }).errors).toEqual({ 'behavior.delayMs': 'milliseconds, e.g. 6000' });
    expect(draftToInput({ ...emptyDraft(0), status: '5x0', failFirst: '1.5' }).errors).toEqual({ 'behavior.status': 'a whole number', 'behavior.failFirst': 'a whole number' });
    // No secret typed: none sent (the engine would refuse an empty one).
    expect('secret' in draftToInput(emptyDraft(0)).input).toBe(false);
  });

  it('keeps per-item answers and the Standard Webhooks secret across an edit (nothing dropped on save)', () => {
    const defined = mockReceiverSchema.parse({
      name: 'items',
      path: '/items',
      standardWebhooksSecret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      behavior: { itemStatuses: [200, 422], batchStatus: 207 },
    });
    const d = draftFromReceiver({ ...defined, id: 'r1' });
    expect([d.itemStatuses, d.batchStatus, d.swSecret]).toEqual(['200, 422', '207', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw']);
    expect(mockReceiverSchema.parse(draftToInput(d).input)).toEqual(defined);
    const seeded = mockReceiverSchema.parse({ name: 's', path: '/s', behavior: { itemFailPercent: 25, itemFailStatus: 503, seed: 3 } });
    expect(mockReceiverSchema.parse(draftToInput(draftFromReceiver({ ...seeded, id: 'r2' })).input)).toEqual(seeded);
    expect(draftToInput({ ...emptyDraft(0), itemStatuses: '200, x' }).errors).toEqual({ 'behavior.itemStatuses': 'whole numbers, comma-separated, e.g. 200, 422' });
    expect(behaviorSummary({ itemStatuses: [200, 422] })).toBe('200/207, per item 200/422');
    expect(behaviorSummary({ itemFailPercent: 25 })).toBe('200/207, per item 25% fail with 500');
    expect(behaviorSummary({ itemStatuses: [422], batchStatus: 400 })).toBe('400, per item 422');
  });

  it('summarizes behaviors in words', () => {
    expect(behaviorSummary({})).toBe('200');
    expect(behaviorSummary({ status: 500 })).toBe('500');
    expect(behaviorSummary({ failFirst: 3 })).toBe('500 for first 3, else 200');
    expect(behaviorSummary({ failPercent: 20, seed: 7, status: 503 })).toBe('503 for 20% (seed 7), else 200');
    expect(behaviorSummary({ delayMs: 6000 })).toBe('200, after 6 s (times out)');
    expect(behaviorSummary({ hang: true })).toBe('hang (never answer)');
    expect(behaviorSummary({ reset: true, body: 'x', headers: { a: 'b' } })).toBe('reset the connection, with custom body and 1 header(s)');
  });
});

describe('receivers slice', () => {
  it('keeps a refused save for the form and adds a created receiver', async () => {
    const api = new FakeApi()
      .on('createReceiver', (i) => {
        if (i.path === '/taken') throw invalid([{ path: 'path', message: 'duplicate path "/taken"' }]);
        return view('r2', { name: i.name, path: i.path });
      })
      .on('listReceivers', () => [view('r1')]);
    const store = createAppStore(api);
    await store.getState().loadReceivers();
    expect(await store.getState().saveReceiver({ name: 'x', path: '/taken' })).toBeNull();
    expect(store.getState().receiverFormError?.fieldMessage('path')).toBe('duplicate path "/taken"');
    const created = await store.getState().saveReceiver({ name: 'x', path: '/x' });
    expect(created?.id).toBe('r2');
    expect(store.getState().receivers.map((r) => r.id)).toEqual(['r1', 'r2']);
    expect(store.getState().receiverFormError).toBeNull();
  });

  it('applies live requests: counts for all, the list of the open receiver newest first, no duplicates', async () => {
    const older = record('q0', 'r1', '{}', '2025-01-01T00:00:00.000Z');
    const api = new FakeApi().on('listReceivers', () => [view('r1', { requestCount: 1 }), view('r2')]).on('listReceiverRequests', () => [older]);
    const store = createAppStore(api);
    await store.getState().loadReceivers();
    store.getState().selectReceiver('r1');
    await until(() => expect(store.getState().receiverRequests).toEqual([older]));
    const a = record('q1', 'r1', '{}', '2025-01-01T00:00:01.000Z', 2);
    const b = record('q2', 'r1', '{}', '2025-01-01T00:00:02.000Z', 3);
    const other = record('q3', 'r2', '{}', '2025-01-01T00:00:03.000Z');
    store.getState().applyReceiverRequests([a, b, other, older]);
    const s = store.getState();
    expect(s.receiverRequests.map((r) => r.id)).toEqual(['q2', 'q1', 'q0']);
    expect(s.receivers.find((r) => r.id === 'r1')).toMatchObject({ requestCount: 4, lastRequestAt: '2025-01-01T00:00:02.000Z' });
    expect(s.receivers.find((r) => r.id === 'r2')).toMatchObject({ requestCount: 1 });
  });

  it('finds what the dispatcher recorded by the exact messageId of the body', async () => {
    const detail = { call: { id: 7 }, deliveries: [] } as unknown as CallDetail;
    const api = new FakeApi()
      .on('listMessages', () => ({
        items: [
          { id: 9, messageId: 'm-12' },
          { id: 7, messageId: 'm-1' },
        ] as never,
        total: 2,
        next: null,
      }))
      .on('getMessage', ({ id }) => {
        expect(id).toBe(7);
        return detail;
      });
    const store = createAppStore(api);
    const rec = record('q1', 'r1', JSON.stringify({ type: 'track', messageId: 'm-1' }), '2025-01-01T00:00:00.000Z');
    await store.getState().matchDispatcher(rec);
    expect(api.callsOf('listMessages')).toEqual([{ q: 'm-1', limit: 20 }]);
    expect(store.getState().dispatcherMatches.q1).toEqual({ state: 'found', detail });

    const plain = record('q2', 'r1', 'not json', '2025-01-01T00:00:00.000Z');
    await store.getState().matchDispatcher(plain);
    expect(store.getState().dispatcherMatches.q2.state).toBe('none');
    expect(bodyMessageId('[1]')).toBeNull();
  });

  it('attaching updates the source in the list; a refusal is a toast', async () => {
    const src = { id: 's1', name: 'shop', writeKey: 'k', createdAt: '', webhooks: { enabled: false, urls: [] }, collectorFaults: null };
    const attached = { ...src, webhooks: { enabled: true, urls: [{ url: 'http://127.0.0.1:4000/r1', headers: {} }] } };
    const api = new FakeApi()
      .on('listSources', () => [src])
      .on('attachReceiver', ({ sourceId }) => {
        if (sourceId === 'full') throw invalid([]);
        return attached;
      });
    const store = createAppStore(api);
    await store.getState().loadSources();
    expect(await store.getState().attachReceiver('r1', 's1')).toBe(true);
    expect(store.getState().sources[0]).toEqual(attached);
    expect(await store.getState().attachReceiver('r1', 'full')).toBe(false);
    expect(store.getState().toasts.at(-1)?.kind).toBe('error');
  });
});

describe('matching a received request to its attempt', () => {
  const attempt = (id: number, url: string, startedAt: string, urlIndex = 0): Attempt =>
    ({ id, deliveryId: 1, urlIndex, url, startedAt }) as Attempt;
  it('picks the attempt to the same path with the same body nearest in time (the body on its delivery, or its own when edited)', () => {
    const attempts = [
      attempt(1, 'http://127.0.0.1:4000/r1', '2025-01-01T00:00:00.000Z'),
      attempt(2, 'http://127.0.0.1:4000/r1', '2025-01-01T00:00:05.000Z'),
      attempt(3, 'http://127.0.0.1:4000/other', '2025-01-01T00:00:05.010Z', 1),
      attempt(4, 'http://127.0.0.1:4000/r1', '2025-01-01T00:00:15.000Z'),
    ];
    const detail = { call: {}, deliveries: [{ body: 'B', attempts }] } as unknown as CallDetail;
    const m = matchAttempt(detail, record('q', 'r1', 'B', '2025-01-01T00:00:05.020Z'));
    expect(m).toMatchObject({ index: 2, of: 3 });
    expect(m?.attempt.id).toBe(2);
    expect(matchAttempt(detail, record('q', 'r1', 'edited', '2025-01-01T00:00:05.020Z'))).toBeNull();
    // A replay with an edited body carries its own bytes.
    attempts.push({ ...attempt(5, 'http://127.0.0.1:4000/r1', '2025-01-01T00:00:20.000Z'), requestBody: 'edited' });
    expect(matchAttempt(detail, record('q', 'r1', 'edited', '2025-01-01T00:00:20.010Z'))?.attempt.id).toBe(5);
  });
});
