import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createAppStore } from '../../src/renderer/stores/app.store';
import type { MockRequestRecord } from '../../src/shared/mock-receiver.schema';
import type { DeletionRequest, LoadRun } from '../../src/shared/simulation.contract';
import type { CallSummary, Settings } from '../../src/shared/types';
import { FakeApi, invalid } from './renderer-sim-fake-api';

const deletion: DeletionRequest = {
  id: 'd1',
  userId: 'u1',
  createdAt: '2025-01-01T00:00:00.000Z',
  purge: false,
  purgedCalls: 0,
  status: 'pending',
  notifications: [{ sourceId: 's1', sourceName: 'shop', callId: 41, deliveryState: 'retrying' }],
  skipped: [],
};

const req = (id: string): MockRequestRecord => ({ id, receiverId: 'r1', at: '2025-01-01T00:00:00.000Z', seq: 1 }) as MockRequestRecord;

describe('simulation events', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('coalesces bursts into one update and reloads lists once per burst', async () => {
    let receiverLoads = 0;
    const api = new FakeApi()
      .on('listReceivers', () => {
        receiverLoads++;
        return [{ id: 'r1', name: 'r1', path: '/r1', tls: false, behavior: {}, url: 'u', requestCount: 0, lastRequestAt: null }];
      })
      .on('listDeletions', () => [{ ...deletion, status: 'done' as const }]);
    const store = createAppStore(api);
    await store.getState().loadReceivers();
    receiverLoads = 0;
    store.setState({ deletions: [deletion] });
    const stop = store.getState().watchSimulation();
    const progress = (sent: number): LoadRun => ({ id: 'L', state: 'running', startedAt: 'x', endedAt: null, rate: 1, target: 9, sent, accepted: 0, errors: 0, lastError: null, samples: [] });
    api.emit({ type: 'receiver.request', receiverId: 'r1', request: req('a') }, { type: 'load.progress', run: progress(1) });
    api.emit({ type: 'receiver.request', receiverId: 'r1', request: req('b') });
    api.emit({ type: 'load.progress', run: progress(2) });
    // A delivery update of an unrelated call does not touch deletions; one of a delete notification does.
    api.emit({ type: 'calls.updated', calls: [{ id: 40 } as CallSummary] });
    expect(store.getState().loadRun).toBeNull();
    await vi.advanceTimersByTimeAsync(300);
    expect(store.getState().receivers[0].requestCount).toBe(2);
    expect(store.getState().loadRun?.sent).toBe(2);
    expect(receiverLoads).toBe(0);
    api.emit({ type: 'receivers.changed' }, { type: 'receivers.changed' });
    api.emit({ type: 'receivers.changed' });
    await vi.advanceTimersByTimeAsync(300);
    expect(receiverLoads).toBe(1);
    expect(store.getState().receivers[0].requestCount).toBe(0);
    expect(store.getState().deletions[0].status).toBe('pending');
    api.emit({ type: 'calls.updated', calls: [{ id: 41 } as CallSummary] });
    await vi.advanceTimersByTimeAsync(300);
    expect(store.getState().deletions[0].status).toBe('done');
    stop();
    expect(api.listenerCount).toBe(0);
  });
});

describe('deletions and the shared simulation tools', () => {
  it('a deletion request goes on top of the list; a blank userId is shown on its field', async () => {
    const api = new FakeApi().on('createDeletion', (i) => {
      if (!i.userId.trim()) throw invalid([{ path: 'userId', message: 'required' }]);
      return { ...deletion, id: 'd2', userId: i.userId, purge: Boolean(i.purge), purgedCalls: 3 };
    });
    const store = createAppStore(api);
    store.setState({ deletions: [deletion] });
    expect(await store.getState().createDeletion({ userId: ' ', purge: false })).toBeNull();
    expect(store.getState().deletionFormError?.fieldMessage('userId')).toBe('required');
    await store.getState().createDeletion({ userId: 'u2', purge: true });
    expect(store.getState().deletions.map((d) => d.userId)).toEqual(['u2', 'u1']);
    expect(store.getState().toasts.at(-1)?.text).toMatch(/1 delete notification queued, 3 local calls purged/);
    expect(store.getState().creatingDeletion).toBe(false);
  });

  it('time-warp applies through updateSettings and keeps the engine message when refused', async () => {
    const api = new FakeApi().on('updateSettings', (p) => {
      if ((p.timeScale ?? 1) <= 0) throw invalid([{ path: 'timeScale', message: 'Too small: expected number to be >=0.001' }]);
      return { timeScale: p.timeScale } as Settings;
    });
    const store = createAppStore(api);
    expect(await store.getState().setTimeScale(1000)).toBe(true);
    expect(store.getState().settings?.timeScale).toBe(1000);
    expect(await store.getState().setTimeScale(0)).toBe(false);
    expect(store.getState().timeScaleError).toMatch(/0\.001/);
    expect(store.getState().settings?.timeScale).toBe(1000);
  });

  it('export sends the inspector filters; import refuses a file that is not JSON before calling the engine', async () => {
    const api = new FakeApi()
      .on('listMessages', () => ({ items: [], total: 0, next: null }))
      .on('exportDeliveries', (i) => ({ filename: `x.${i.format}`, contentType: 'application/json', content: '' }))
      .on('importConfig', () => {
        throw invalid([{ path: 'mockReceivers[0].behavior.failfirst', message: 'unknown key' }]);
      });
    const store = createAppStore(api);
    store.getState().setFilters({ status: 'expired', type: 'track', q: '  u1 ' });
    expect((await store.getState().exportDeliveries('har'))?.filename).toBe('x.har');
    expect(api.callsOf('exportDeliveries')).toEqual([{ format: 'har', sourceId: undefined, type: 'track', status: 'expired', q: 'u1' }]);
    expect(await store.getState().importConfig('{nope')).toBe(false);
    expect(store.getState().configImportError?.message).toMatch(/not JSON/);
    expect(api.callsOf('importConfig')).toEqual([]);
    expect(await store.getState().importConfig('{"mockReceivers":[{"behavior":{"failfirst":1}}]}')).toBe(false);
    expect(store.getState().configImportError?.fields[0].path).toBe('mockReceivers[0].behavior.failfirst');
  });
});
