import type { EngineEvent } from '../../shared/api.contract';
import type { ClientState } from '../../shared/api.contract';
import type { CallSummary } from '../../shared/types';
import type { Transport } from '../api/transport.types';
import type { AppStore } from './app.store';

// Engine events → store, coalesced: whatever arrives within `intervalMs` is applied in one update,
// so the inspector renders at most a few times a second however fast calls come in.

export function connectLiveEvents(store: AppStore, transport: Transport, intervalMs = 250): () => void {
  let stored: CallSummary[] = [];
  let updated: CallSummary[] = [];
  let client: ClientState | null = null;
  let sourcesChanged = false;
  let callsRemoved = false;
  let detailChanged = false;
  let testCallChanged = false;
  let timer: ReturnType<typeof setTimeout> | null = null;

  const flush = () => {
    timer = null;
    const s = store.getState();
    // Deleted calls cannot be patched out of a paged list: read its first page again (a paused list
    // stays as it is; resuming reads it anyway).
    if (callsRemoved && !s.paused) void s.loadCalls();
    else if (stored.length || updated.length) s.applyCallEvents(stored, updated);
    if (client) s.setClientState(client);
    if (sourcesChanged) void s.loadSources();
    if (detailChanged) void s.refreshDetail();
    if (testCallChanged) void s.refreshTestCall();
    stored = [];
    updated = [];
    client = null;
    sourcesChanged = false;
    callsRemoved = false;
    detailChanged = false;
    testCallChanged = false;
  };

  const onEvents = (events: EngineEvent[]) => {
    const selected = store.getState().selectedCallId;
    // Destinations' "Send a test call" chip follows its call too.
    const testCall = store.getState().lastTestCall?.call.id ?? null;
    for (const e of events) {
      switch (e.type) {
        case 'calls.stored':
          stored.push(...e.calls);
          break;
        case 'calls.updated':
          updated.push(...e.calls);
          if (selected !== null && e.calls.some((c) => c.id === selected)) detailChanged = true;
          if (testCall !== null && e.calls.some((c) => c.id === testCall)) testCallChanged = true;
          break;
        case 'calls.removed':
          callsRemoved = true;
          if (selected !== null) detailChanged = true;
          break;
        case 'attempt.recorded':
          if (e.callId === selected) detailChanged = true;
          if (e.callId === testCall) testCallChanged = true;
          break;
        case 'sources.changed':
          sourcesChanged = true;
          break;
        case 'settings.changed':
          store.getState().setSettings(e.settings);
          break;
        case 'client.changed':
          client = e.state;
          break;
        case 'storage.changed':
          store.getState().setStorage(e.storage);
          break;
      }
    }
    timer ??= setTimeout(flush, intervalMs);
  };

  const unsubscribe = transport.subscribe(onEvents);
  let wasOpen = false;
  const unStatus = transport.onStatus((status) => {
    store.getState().setConnection(status);
    if (status !== 'open') return;
    const s = store.getState();
    if (wasOpen) {
      // Events sent while disconnected are lost: reload what the screens show, the simulation
      // screens' included (an engine restarted meanwhile has other receivers' requests, load run…).
      void s.loadCalls();
      void s.loadHealth();
      void s.loadSources();
      void s.loadClient();
      void s.refreshDetail();
      void s.loadReceivers();
      void s.loadReceiverRequests();
      void s.loadAudiences();
      void s.loadDeletions();
      void s.fetchLoadRun();
    } else {
      void s.resyncCalls();
    }
    wasOpen = true;
  });
  return () => {
    unsubscribe();
    unStatus();
    if (timer) clearTimeout(timer);
  };
}
