import type { EngineEvent } from '../../shared/api.contract';
import type { ClientState } from '../../shared/api.contract';
import type { CallSummary } from '../../shared/types';
import { coalesce } from '../../shared/coalesce';
import type { Transport } from '../api/transport.types';
import type { AppStore } from './app.store';
import { patchedDetail, type DetailStep } from './detail-patch';

// Engine events → store, coalesced: whatever arrives within `intervalMs` is applied in one update,
// so the inspector renders at most a few times a second however fast calls come in. The open call's
// detail is patched from the attempts pushed for it (recorded, or answered while their round is out)
// and its summaries, in the order they came (detail-patch.ts); it is read again (getMessage) only for
// what the events do not carry: a delivery it does not hold, a change without an attempt (a cancel),
// removed calls.

/** A batch of events as it arrived, with what was open then (the call whose detail shows, the test call). */
interface Arrival {
  events: EngineEvent[];
  selected: number | null;
  testCall: number | null;
}

export function connectLiveEvents(store: AppStore, transport: Transport, intervalMs = 250): () => void {
  const flush = (arrivals: Arrival[]) => {
    const stored: CallSummary[] = [];
    const updated: CallSummary[] = [];
    let client: ClientState | null = null;
    let sourcesChanged = false;
    let plansChanged = false;
    let callsRemoved = false;
    let detailChanged = false;
    let detailMustRead = false;
    const steps: DetailStep[] = [];
    let testCallChanged = false;
    for (const { events, selected, testCall } of arrivals) {
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
              steps.push({ type: 'summary', summary: c });
            }
            if (testCall !== null && e.calls.some((c) => c.id === testCall)) testCallChanged = true;
            break;
          case 'calls.removed':
            callsRemoved = true;
            if (selected !== null) detailChanged = detailMustRead = true;
            break;
          case 'attempt.recorded':
          case 'attempt.answered':
            if (e.callId === selected) {
              detailChanged = true;
              steps.push(e);
            }
            if (e.callId === testCall) testCallChanged = true;
            break;
          case 'sources.changed':
            sourcesChanged = true;
            break;
          case 'plans.changed':
            plansChanged = true;
            break;
          case 'client.changed':
            client = e.state;
            break;
        }
      }
    }
    const s = store.getState();
    // Deleted calls cannot be patched out of a paged list: read its first page again (a paused list
    // stays as it is; resuming reads it anyway).
    if (callsRemoved && !s.paused) void s.loadCalls();
    else if (stored.length || updated.length) s.applyCallEvents(stored, updated);
    if (client) s.setClientState(client);
    if (sourcesChanged) void s.loadSources();
    // The plans screen reads its plans (and their rules' figures) when it opens; while it shows, again.
    // Compose too: its as-you-type check asks only about a source whose plan compiles.
    if (plansChanged && (s.tab === 'plans' || s.tab === 'compose')) void s.loadPlans();
    // A change the events do not carry (a cancel, a batch member's round) fails the patch: read then.
    if (detailChanged && (detailMustRead || !s.patchDetail((detail) => patchedDetail(detail, steps)))) void s.refreshDetail();
    if (testCallChanged) void s.refreshTestCall();
  };
  const pending = coalesce<Arrival>({ maxWaitMs: intervalMs, flush });

  const onEvents = (events: EngineEvent[]) => {
    const s = store.getState();
    // Settings and storage are applied as they come; the rest waits for the batch, with the call
    // that was open when it arrived. Destinations' "Send a test call" chip follows its call too.
    for (const e of events) {
      if (e.type === 'settings.changed') s.setSettings(e.settings);
      else if (e.type === 'storage.changed') s.setStorage(e.storage);
    }
    pending.push({ events, selected: s.selectedCallId, testCall: s.lastTestCall?.call.id ?? null });
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
      if (s.tab === 'plans' || s.tab === 'compose') void s.loadPlans();
      void s.fetchLoadRun();
    } else {
      void s.resyncCalls();
    }
    wasOpen = true;
  });
  return () => {
    unsubscribe();
    unStatus();
    pending.dispose();
  };
}
