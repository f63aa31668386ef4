import { countOf } from '../components/format';
import type { ApiClient, ReplayResult } from '../../shared/api.contract';
import type { CallDetail, CallSummary } from '../../shared/types';
import type { SliceCreator } from './app.types';
import { ApiError } from '../../shared/api-error';
import { errorText } from './errors';
import { mergeCallEvents, matchesFilters } from './inspector-merge';
import type { InspectorFilters } from '../../shared/delivery-filters';
import { PAGE_SIZE } from '../components/call-list-model';
import { callHref, tabHref } from '../screens';
import { replaceHash } from './ui.slice';

export interface InspectorSlice {
  calls: CallSummary[];
  callsTotal: number;
  callsNext: number | null;
  callsLoading: boolean;
  /**
   * The load under way reads the same list again (the same filters; a live event, a clear): the list
   * shown stands meanwhile, an empty one included, instead of giving way to the load's empty frame.
   */
  callsRefreshing: boolean;
  callsLoadingMore: boolean;
  callsError: string | null;
  filters: InspectorFilters;
  paused: boolean;
  /** Calls that arrived (matching the filters) while paused. */
  missedWhilePaused: number;
  selectedCallId: number | null;
  detail: CallDetail | null;
  detailError: string | null;
  replaying: boolean;
  loadCalls(): Promise<void>;
  /** Live events just started flowing: reload the first page if it was read before they did. */
  resyncCalls(): Promise<void>;
  loadMoreCalls(): Promise<void>;
  setFilters(patch: Partial<InspectorFilters>): void;
  setPaused(paused: boolean): void;
  applyCallEvents(stored: CallSummary[], updated: CallSummary[]): void;
  selectCall(id: number | null): void;
  refreshDetail(): Promise<void>;
  /**
   * Changes the open detail in place (live events: detail-patch.ts). False, and nothing changed, when
   * there is nothing to patch (no detail yet, or a read of it still under way): then read it instead.
   */
  patchDetail(patch: (detail: CallDetail) => CallDetail | null): boolean;
  /** deliveryId: one of the call's deliveries (an Actions one); the Classic delivery when omitted. */
  replay(id: number, urlIndex?: number, deliveryId?: number): Promise<ReplayResult | null>;
}

/** The filters as listMessages (and retryMatching) take them. */
export function listQuery(filters: InspectorFilters) {
  const q = filters.q?.trim();
  return {
    status: filters.status || undefined,
    urlState: filters.urlState || undefined,
    type: filters.type || undefined,
    sourceId: filters.sourceId || undefined,
    q: q || undefined,
    body: q && filters.body ? true : undefined,
    violations: filters.violations ? true : undefined,
    // The probe's calls stay out unless asked for, or its source is the one filtered on.
    probe: filters.probe || filters.sourceId ? undefined : false,
  };
}

export const createInspectorSlice =
  (api: ApiClient): SliceCreator<InspectorSlice> =>
  (set, get) => {
    // Each load gets a number; a response to a superseded load (filters changed meanwhile) is ignored.
    let loadSeq = 0;
    let detailSeq = 0;
    // Reads of the detail under way: a patch is not applied under one (the answer would replace it).
    let detailReads = 0;
    // A page read before the live connection was open can miss calls stored before events flowed
    // (the first page may even be read by first-page.ts before the app runs).
    let loadedBeforeLive = false;
    let lastLoad: Promise<void> = Promise.resolve();
    // The query of the list shown (null before the first load): a load of the same one is a refresh.
    let shownQuery: string | null = null;
    return {
      calls: [],
      callsTotal: 0,
      callsNext: null,
      callsLoading: false,
      callsRefreshing: false,
      callsLoadingMore: false,
      callsError: null,
      filters: {},
      paused: false,
      missedWhilePaused: 0,
      selectedCallId: null,
      detail: null,
      detailError: null,
      replaying: false,
      loadCalls() {
        const seq = ++loadSeq;
        if (get().connection !== 'open') loadedBeforeLive = true;
        const query = { ...listQuery(get().filters), limit: PAGE_SIZE };
        const key = JSON.stringify(query);
        set({ callsLoading: true, callsRefreshing: key === shownQuery, callsError: null });
        lastLoad = (async () => {
          try {
            const page = await api.call('listMessages', query);
            if (seq !== loadSeq) return;
            shownQuery = key;
            set({ calls: page.items, callsTotal: page.total, callsNext: page.next, callsLoading: false, callsRefreshing: false, missedWhilePaused: 0 });
          } catch (err) {
            if (seq === loadSeq) set({ callsLoading: false, callsRefreshing: false, callsError: errorText(err) });
          }
        })();
        return lastLoad;
      },
      async resyncCalls() {
        if (!loadedBeforeLive) return;
        loadedBeforeLive = false;
        // After the load in flight, so its rows are shown first rather than superseded.
        await lastLoad;
        await get().loadCalls();
      },
      async loadMoreCalls() {
        const { callsNext, callsLoadingMore, callsLoading } = get();
        if (callsNext === null || callsLoadingMore || callsLoading) return;
        const seq = loadSeq;
        set({ callsLoadingMore: true });
        try {
          const page = await api.call('listMessages', { ...listQuery(get().filters), before: callsNext, limit: PAGE_SIZE });
          if (seq !== loadSeq) return;
          const seen = new Set(get().calls.map((c) => c.id));
          set({
            calls: [...get().calls, ...page.items.filter((c) => !seen.has(c.id))],
            callsNext: page.next,
            callsTotal: Math.max(page.total, get().callsTotal),
          });
        } catch (err) {
          get().notify(errorText(err), 'error');
        } finally {
          set({ callsLoadingMore: false });
        }
      },
      setFilters(patch) {
        // Picks are of the list as filtered: a new filter starts a new pick.
        set({ filters: { ...get().filters, ...patch }, pickedCallIds: [], pickAnchor: null });
        void get().loadCalls();
      },
      setPaused(paused) {
        set({ paused });
        if (!paused) void get().loadCalls();
      },
      applyCallEvents(stored, updated) {
        const s = get();
        if (s.paused) {
          // Calls only the engine can place (a body search) are not counted; Resume reads the list anyway.
          const missed = stored.filter((c) => matchesFilters(c, s.filters) === true).length;
          if (missed) set({ missedWhilePaused: s.missedWhilePaused + missed });
          return;
        }
        if (s.callsLoading) return; // the load in flight returns the newer state anyway
        const r = mergeCallEvents(
          { items: s.calls, total: s.callsTotal, next: s.callsNext, filters: s.filters, keepId: s.selectedCallId },
          stored,
          updated,
        );
        if (r.items !== s.calls) set({ calls: r.items, callsTotal: r.total });
        // One load at a time: events arriving meanwhile are dropped above, the load brings them.
        if (r.undecided) void get().loadCalls();
      },
      selectCall(id) {
        const show = () => {
          set({ selectedCallId: id, detail: null, detailError: null });
          // On the inspector the address names the open call (a permalink), replaced rather than
          // pushed: moving through calls with ↓ does not fill Back's history (README, Decisions).
          if (get().tab === 'inspector') replaceHash(id === null ? tabHref('inspector') : callHref(id));
          if (id !== null) void get().refreshDetail();
        };
        // Another call (or none): an edit open on this one (Edit & replay) would be lost.
        if (id === get().selectedCallId) show();
        else get().guardLeave(show);
      },
      async refreshDetail() {
        const id = get().selectedCallId;
        if (id === null) return;
        const seq = ++detailSeq;
        detailReads++;
        try {
          const detail = await api.call('getMessage', { id });
          if (seq === detailSeq && get().selectedCallId === id) set({ detail, detailError: null });
        } catch (err) {
          if (seq !== detailSeq) return;
          // A permalink (#/inspector/<id>) to a call that is not there: say so, not just "404".
          const gone = err instanceof ApiError && err.status === 404;
          set({ detailError: gone ? `Call #${id} does not exist in this lab: it was deleted (retention, Clear calls, a purge), or the link is from another lab.` : errorText(err) });
        } finally {
          detailReads--;
        }
      },
      patchDetail(patch) {
        const { detail, selectedCallId } = get();
        if (detailReads > 0 || !detail || detail.call.id !== selectedCallId) return false;
        const next = patch(detail);
        if (!next) return false;
        if (next !== detail) set({ detail: next });
        return true;
      },
      async replay(id, urlIndex, deliveryId) {
        set({ replaying: true });
        try {
          const r = await api.call('replayMessage', { id, ...(urlIndex === undefined ? {} : { urlIndex }), ...(deliveryId === undefined ? {} : { deliveryId }) });
          // Its attempts reach the open detail as pushed events (live-events.ts), as another window's would.
          get().notify(`Replayed: ${countOf(r.attempts.length, 'new attempt')}`);
          return r;
        } catch (err) {
          get().notify(errorText(err), 'error');
          return null;
        } finally {
          set({ replaying: false });
        }
      },
    };
  };
