import type { EngineEvent } from '../../shared/api.contract';
import type { ClientState } from '../../shared/api.contract';
import type { CallDetail, CallSummary } from '../../shared/types';
import type { Transport } from '../api/transport.types';
import type { AppStore } from './app.store';
import { patchAttempts, patchSummary, type AttemptRecorded } from './detail-patch';

// Engine events → store, coalesced: whatever arrives within `intervalMs` is applied in one update,
// so the inspector renders at most a few times a second however fast calls come in. The open call's
// detail is patched from the attempts pushed for it and its summary (detail-patch.ts); it is read
// again (getMessage) only for what the events do not carry: a delivery it does not hold, a round
// still out, a change without an attempt (a cancel), removed calls.

export function connectLiveEvents(store: AppStore, transport: Transport, intervalMs = 250): () => void {
  let stored: CallSummary[] = [];
  let updated: CallSummary[] = [];
  let client: ClientState | null = null;
  let sourcesChanged = false;
  let callsRemoved = false;
  let detailChanged = false;
  let detailMustRead = false;
  let pushed: AttemptRecorded[] = [];
  let summaries: CallSummary[] = [];
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
    if (detailChanged && (detailMustRead || (summaries.length > 0 && pushed.length === 0) || !patchOpenDetail(s, pushed, summaries))) void s.refreshDetail();
    if (testCallChanged) void s.refreshTestCall();
    stored = [];
    updated = [];
    client = null;
    sourcesChanged = false;
    callsRemoved = false;
    detailChanged = false;
    detailMustRead = false;
    pushed = [];
    summaries = [];
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
          for (const c of e.calls) {
            if (c.id !== selected) continue;
            detailChanged = true;
            summaries.push(c);
          }
          if (testCall !== null && e.calls.some((c) => c.id === testCall)) testCallChanged = true;
          break;
        case 'calls.removed':
          callsRemoved = true;
          if (selected !== null) detailChanged = detailMustRead = true;
          break;
        case 'attempt.recorded':
          if (e.callId === selected) {
            detailChanged = true;
            pushed.push(e);
          }
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

/** The open detail with the pushed attempts and then each summary applied; false when it must be read instead. */
function patchOpenDetail(s: ReturnType<AppStore['getState']>, pushed: AttemptRecorded[], summaries: CallSummary[]): boolean {
  return s.patchDetail((detail) => {
    let next: CallDetail | null = patchAttempts(detail, pushed);
    for (const c of summaries) next = next && patchSummary(next, c);
    return next;
  });
}
