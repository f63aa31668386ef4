import { describe, expect, it } from 'vitest';
import type { ConnectionStatus, Transport } from '../../src/renderer/api/transport.types';
import { createAppStore } from '../../src/renderer/stores/app.store';
import { connectLiveEvents } from '../../src/renderer/stores/live-events';
import type { EngineEvent, OpName } from '../../src/shared/api.contract';
import type { CallSummary, Page } from '../../src/shared/types';
import { until } from '../helpers/until';

// Engine events reach the inspector's list through connectLiveEvents; deleted calls (retention, a
// purge) cannot be patched out of a paged list, so the list is read again.

const summary = (id: number): CallSummary => ({
  id, receivedAt: new Date(1_700_000_000_000 + id).toISOString(), sourceId: 's', sourceName: 's', type: 'track', userId: `u${id}`,
  anonymousId: null, label: `E ${id}`, messageId: `m${id}`, groupId: null, previousId: null, status: 'accepted', dropReason: null, deliveryState: null,
  deliveryId: null, attemptCount: 0, nextAttemptAt: null, latencyMs: null, urls: [],
});
const page = (ids: number[]): Page<CallSummary> => ({ items: ids.map(summary), total: ids.length, next: null });

function fakeTransport(pages: Page<CallSummary>[]) {
  const calls: OpName[] = [];
  let listener: (events: EngineEvent[]) => void = () => {};
  const transport: Transport = {
    kind: 'http',
    async call(name) {
      calls.push(name);
      if (name !== 'listMessages') throw new Error(`unexpected ${name}`);
      return pages.shift() as never;
    },
    subscribe: (l) => ((listener = l), () => {}),
    onStatus: () => () => {},
  };
  return { transport, calls, emit: (events: EngineEvent[]) => listener(events) };
}

describe('live events', () => {
  it('new calls are merged into the list without reading it again', async () => {
    const f = fakeTransport([page([2, 1])]);
    const store = createAppStore(f.transport);
    await store.getState().loadCalls();
    connectLiveEvents(store, f.transport, 5);
    f.emit([{ type: 'calls.stored', calls: [summary(3)] }]);
    await until(() => expect(store.getState().calls.map((c) => c.id)).toEqual([3, 2, 1]));
    expect(f.calls.filter((n) => n === 'listMessages')).toHaveLength(1);
  });

  it('removed calls make the list read again, and stored ones in the same batch are not merged on top', async () => {
    const f = fakeTransport([page([3, 2, 1]), page([4, 3])]);
    const store = createAppStore(f.transport);
    await store.getState().loadCalls();
    connectLiveEvents(store, f.transport, 5);
    f.emit([{ type: 'calls.stored', calls: [summary(4)] }, { type: 'calls.removed', count: 2 }]);
    await until(() => expect(store.getState().calls.map((c) => c.id)).toEqual([4, 3]));
    expect(f.calls.filter((n) => n === 'listMessages')).toHaveLength(2);
    expect(store.getState().callsTotal).toBe(2);
  });

  it('a paused list is not read again when calls are removed', async () => {
    const f = fakeTransport([page([2, 1])]);
    const store = createAppStore(f.transport);
    await store.getState().loadCalls();
    connectLiveEvents(store, f.transport, 5);
    store.setState({ paused: true });
    // A stored call in the same batch is counted as missed once the batch is applied: the sign to
    // wait for, instead of a sleep, before checking that the list was not read again.
    f.emit([{ type: 'calls.removed', count: 1 }, { type: 'calls.stored', calls: [summary(3)] }]);
    await until(() => store.getState().missedWhilePaused === 1);
    expect(f.calls.filter((n) => n === 'listMessages')).toHaveLength(1);
    expect(store.getState().calls.map((c) => c.id)).toEqual([2, 1]);
  });

  it('after a reconnect every screen reads its data again, the simulation screens included', async () => {
    const asked: OpName[] = [];
    let setStatus: (s: ConnectionStatus) => void = () => {};
    const empty: Partial<Record<OpName, unknown>> = { listMessages: page([]), listSources: [], listReceivers: [], listReceiverRequests: [], listAudiences: [], listDeletions: [], getLoad: null };
    const transport: Transport = {
      kind: 'http',
      async call(name) {
        asked.push(name);
        return (empty[name] ?? {}) as never;
      },
      subscribe: () => () => {},
      onStatus: (l) => ((setStatus = l), () => {}),
    };
    const store = createAppStore(transport);
    store.setState({ selectedReceiverId: 'r1' });
    connectLiveEvents(store, transport, 5);
    setStatus('open');
    asked.length = 0;
    setStatus('reconnecting');
    setStatus('open');
    await until(() => expect(new Set(asked)).toEqual(new Set(['listMessages', 'health', 'listSources', 'clientState', 'listReceivers', 'listReceiverRequests', 'listAudiences', 'listDeletions', 'getLoad'])));
  });

  it("Destinations' test call: events that came before sendTestCall's answer are not lost (read once it is known)", async () => {
    let listener: (events: EngineEvent[]) => void = () => {};
    const pendingDetail = { call: { id: 7 }, state: 'pending' };
    const deliveredDetail = { call: { id: 7 }, state: 'delivered' };
    const transport: Transport = {
      kind: 'http',
      async call(name) {
        if (name === 'sendTestCall') {
          // Delivered and pushed before the answer to the send reached the window.
          listener([{ type: 'calls.updated', calls: [summary(7)] }]);
          return pendingDetail as never;
        }
        if (name === 'getMessage') return deliveredDetail as never;
        throw new Error(`unexpected ${name}`);
      },
      subscribe: (l) => ((listener = l), () => {}),
      onStatus: () => () => {},
    };
    const store = createAppStore(transport);
    connectLiveEvents(store, transport, 5);
    await store.getState().sendTestCall('s');
    await until(() => expect(store.getState().lastTestCall).toBe(deliveredDetail));
  });
});
