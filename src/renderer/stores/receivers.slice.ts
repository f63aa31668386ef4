import type { ApiClient } from '../../shared/api.contract';
import type { ApiError } from '../../shared/api-error';
import type { MockReceiverInput, MockRequestRecord } from '../../shared/mock-receiver.schema';
import type { MockReceiverView } from '../../shared/simulation.contract';
import type { CallDetail } from '../../shared/types';
import type { SliceCreator } from './app.types';
import { asApiError, errorText } from './errors';

/** Most recent requests kept for the open receiver; older ones are a reload away. */
export const REQUESTS_KEPT = 200;

/** What the dispatcher recorded for the message a mock receiver got (found by the body's messageId). */
export type DispatcherMatch =
  | { state: 'loading' }
  | { state: 'found'; detail: CallDetail }
  | { state: 'none'; reason: string }
  | { state: 'error'; error: string };

export interface ReceiversSlice {
  receivers: MockReceiverView[];
  receiversLoaded: boolean;
  receiversError: string | null;
  /** The last refused create/update, for messages on the form's fields. */
  receiverFormError: ApiError | null;
  selectedReceiverId: string | null;
  receiverRequests: MockRequestRecord[];
  receiverRequestsError: string | null;
  /** Keyed by MockRequestRecord.id. */
  dispatcherMatches: Record<string, DispatcherMatch>;
  loadReceivers(): Promise<void>;
  selectReceiver(id: string | null): void;
  saveReceiver(input: MockReceiverInput, id?: string): Promise<MockReceiverView | null>;
  /** `detach`: also remove its URL from the sources that send to it (the engine refuses otherwise). */
  deleteReceiver(id: string, detach?: boolean): Promise<void>;
  resetReceiver(id: string): Promise<void>;
  attachReceiver(id: string, sourceId: string): Promise<boolean>;
  loadReceiverRequests(): Promise<void>;
  /** Live `receiver.request` events: the open receiver's list grows, every count moves. */
  applyReceiverRequests(records: MockRequestRecord[]): void;
  matchDispatcher(record: MockRequestRecord): Promise<void>;
  clearReceiverFormError(): void;
}

/** The messageId in a request body, or null when the body is not a JSON object with one. */
export function bodyMessageId(body: string): string | null {
  try {
    const v: unknown = JSON.parse(body);
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const id = (v as Record<string, unknown>).messageId;
      return typeof id === 'string' && id ? id : null;
    }
  } catch {
    // Not JSON (a hand-made request): nothing to match.
  }
  return null;
}

export const createReceiversSlice =
  (api: ApiClient): SliceCreator<ReceiversSlice> =>
  (set, get) => {
    let requestsSeq = 0;
    const replace = (r: MockReceiverView) => set({ receivers: get().receivers.map((x) => (x.id === r.id ? r : x)) });
    return {
      receivers: [],
      receiversLoaded: false,
      receiversError: null,
      receiverFormError: null,
      selectedReceiverId: null,
      receiverRequests: [],
      receiverRequestsError: null,
      dispatcherMatches: {},
      async loadReceivers() {
        try {
          const receivers = await api.call('listReceivers', {});
          const sel = get().selectedReceiverId;
          set({ receivers, receiversLoaded: true, receiversError: null });
          if (sel && !receivers.some((r) => r.id === sel)) get().selectReceiver(null);
        } catch (err) {
          set({ receiversError: errorText(err), receiversLoaded: true });
        }
      },
      selectReceiver(id) {
        requestsSeq++;
        set({ selectedReceiverId: id, receiverRequests: [], receiverRequestsError: null, dispatcherMatches: {}, receiverFormError: null });
        if (id !== null) void get().loadReceiverRequests();
      },
      async saveReceiver(input, id) {
        try {
          const r = id ? await api.call('updateReceiver', { ...input, id, secret: input.secret ?? null }) : await api.call('createReceiver', input);
          if (get().receivers.some((x) => x.id === r.id)) replace(r);
          else set({ receivers: [...get().receivers, r] });
          set({ receiverFormError: null });
          get().notify(id ? `Receiver "${r.name}" saved` : `Receiver "${r.name}" created at ${r.url}`);
          return r;
        } catch (err) {
          set({ receiverFormError: asApiError(err) });
          return null;
        }
      },
      async deleteReceiver(id, detach) {
        try {
          const name = get().receivers.find((r) => r.id === id)?.name ?? 'receiver';
          const { detached } = await api.call('deleteReceiver', { id, detach });
          set({ receivers: get().receivers.filter((r) => r.id !== id) });
          if (get().selectedReceiverId === id) get().selectReceiver(null);
          if (detached.length) {
            get().notify(`Receiver "${name}" deleted; its URL was removed from ${detached.map((d) => d.sourceName).join(', ')}`);
            void get().loadSources();
          }
        } catch (err) {
          get().notify(errorText(err), 'error');
        }
      },
      async resetReceiver(id) {
        try {
          replace(await api.call('resetReceiver', { id }));
          if (get().selectedReceiverId === id) set({ receiverRequests: [], dispatcherMatches: {} });
          get().notify('Receiver reset: counters and recorded requests cleared');
        } catch (err) {
          get().notify(errorText(err), 'error');
        }
      },
      async attachReceiver(id, sourceId) {
        try {
          const source = await api.call('attachReceiver', { id, sourceId });
          set({ sources: get().sources.map((s) => (s.id === source.id ? source : s)) });
          get().notify(`Source "${source.name}" now sends to this receiver (Webhooks enabled)`);
          return true;
        } catch (err) {
          get().notify(errorText(err), 'error');
          return false;
        }
      },
      async loadReceiverRequests() {
        const id = get().selectedReceiverId;
        if (id === null) return;
        const seq = ++requestsSeq;
        try {
          const list = await api.call('listReceiverRequests', { id, limit: REQUESTS_KEPT });
          if (seq !== requestsSeq) return;
          // Events that arrived while loading are already in the list; keep them, newest first.
          const known = new Set(list.map((r) => r.id));
          const live = get().receiverRequests.filter((r) => !known.has(r.id));
          set({ receiverRequests: [...live, ...list].slice(0, REQUESTS_KEPT), receiverRequestsError: null });
        } catch (err) {
          if (seq === requestsSeq) set({ receiverRequestsError: errorText(err) });
        }
      },
      applyReceiverRequests(records) {
        if (records.length === 0) return;
        const counts = new Map<string, { n: number; last: string }>();
        for (const r of records) {
          const c = counts.get(r.receiverId) ?? { n: 0, last: r.at };
          counts.set(r.receiverId, { n: c.n + 1, last: r.at > c.last ? r.at : c.last });
        }
        const receivers = get().receivers.map((x) => {
          const c = counts.get(x.id);
          return c ? { ...x, requestCount: x.requestCount + c.n, lastRequestAt: c.last } : x;
        });
        const sel = get().selectedReceiverId;
        const mine = records.filter((r) => r.receiverId === sel);
        if (mine.length === 0) return set({ receivers });
        const known = new Set(get().receiverRequests.map((r) => r.id));
        const fresh = mine.filter((r) => !known.has(r.id)).sort((a, b) => b.at.localeCompare(a.at) || b.seq - a.seq);
        set({ receivers, receiverRequests: [...fresh, ...get().receiverRequests].slice(0, REQUESTS_KEPT) });
      },
      async matchDispatcher(record) {
        const setMatch = (m: DispatcherMatch) => set({ dispatcherMatches: { ...get().dispatcherMatches, [record.id]: m } });
        const messageId = bodyMessageId(record.body);
        if (!messageId) {
          // An Actions request's body is its mapping's data: it rarely carries the call's messageId.
          const actions = /^Segment \(Actions\)/.test(record.headers['user-agent'] ?? '');
          return setMatch({
            state: 'none',
            reason: actions
              ? "A Webhooks (Actions) request: its body is the mapping's data, with no call's messageId to match here. Find it in the Inspector, under the call's Actions delivery."
              : 'The body has no messageId, so it was not sent by the dispatcher (or is not JSON).',
          });
        }
        setMatch({ state: 'loading' });
        try {
          const page = await api.call('listMessages', { q: messageId, limit: 20 });
          const hit = page.items.find((c) => c.messageId === messageId);
          if (!hit) return setMatch({ state: 'none', reason: `No stored call has messageId ${messageId} (it may have been purged or sent by another app).` });
          setMatch({ state: 'found', detail: await api.call('getMessage', { id: hit.id }) });
        } catch (err) {
          setMatch({ state: 'error', error: errorText(err) });
        }
      },
      clearReceiverFormError() {
        set({ receiverFormError: null });
      },
    };
  };
