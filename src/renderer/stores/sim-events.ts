import type { ApiClient, EngineEvent } from '../../shared/api.contract';
import type { MockRequestRecord } from '../../shared/mock-receiver.schema';
import type { LoadRun } from '../../shared/simulation.contract';
import { deletionCallIds } from './deletions.slice';
import type { StoreApi } from 'zustand/vanilla';
import type { AppState } from './app.types';

// Simulation events → store, coalesced like live-events.ts: a load test can make mock receivers
// record thousands of requests a second, and the screens need a few updates a second at most.

export function connectSimulationEvents(store: Pick<StoreApi<AppState>, 'getState'>, api: Pick<ApiClient, 'subscribe'>, intervalMs = 250): () => void {
  let requests: MockRequestRecord[] = [];
  let run: LoadRun | null = null;
  let reload = { receivers: false, deletions: false, audiences: false };
  let timer: ReturnType<typeof setTimeout> | null = null;

  const flush = () => {
    timer = null;
    const s = store.getState();
    if (requests.length) s.applyReceiverRequests(requests);
    if (run) s.setLoadRun(run);
    if (reload.receivers) void s.loadReceivers();
    if (reload.deletions) void s.loadDeletions();
    if (reload.audiences) void s.loadAudiences();
    requests = [];
    run = null;
    reload = { receivers: false, deletions: false, audiences: false };
  };

  const onEvents = (events: EngineEvent[]) => {
    let touched = false;
    let deleteCalls: Set<number> | null = null;
    for (const e of events) {
      switch (e.type) {
        case 'receiver.request':
          requests.push(e.request);
          break;
        case 'receivers.changed':
          reload.receivers = true;
          break;
        case 'deletions.changed':
          reload.deletions = true;
          break;
        case 'audiences.changed':
          reload.audiences = true;
          break;
        case 'load.progress':
          run = e.run;
          break;
        case 'calls.updated':
          // A deletion's status follows its notifications' deliveries, which report as call updates.
          deleteCalls ??= deletionCallIds(store.getState().deletions);
          if (deleteCalls.size && e.calls.some((c) => deleteCalls!.has(c.id))) reload.deletions = true;
          continue;
        default:
          continue;
      }
      touched = true;
    }
    if ((touched || reload.deletions) && !timer) timer = setTimeout(flush, intervalMs);
  };

  const unsubscribe = api.subscribe(onEvents);
  return () => {
    unsubscribe();
    if (timer) clearTimeout(timer);
  };
}
