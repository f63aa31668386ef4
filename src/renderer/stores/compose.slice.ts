import type { ApiClient } from '../../shared/api.contract';
import type { ApiError } from '../../shared/api-error';
import { SAMPLE_CALLS, sampleCall } from '../../shared/sample-calls';
import type { CallType } from '../../shared/types';
import type { SliceCreator } from './app.types';
import { buildMessage, draftFromSample, emptyFields, emptyJson, type Draft, type JsonField, type TextField } from './compose-model';
import { asApiError, errorText } from './errors';
import { tabHref } from '../screens';
import { countOf } from '../components/format';

export interface ComposeSlice {
  draft: Draft;
  /** Set after a send is refused (client-side or by the engine) so every error is shown. */
  sendError: ApiError | null;
  sending: 'queue' | 'now' | null;
  lastSend: { messageId: string; text: string } | null;
  setComposeType(type: CallType): void;
  setField(field: TextField, value: string): void;
  setJson(field: JsonField, text: string): void;
  setTimestampMode(mode: Draft['timestampMode']): void;
  setHistoricalTimestamp(value: string): void;
  applyTemplate(id: string): void;
  send(mode: 'queue' | 'now'): Promise<boolean>;
  /**
   * "see it in the Inspector": the call just sent, opened (found by its messageId). One still in the
   * client's queue is not a call yet: the inspector opens searching for its messageId, where it
   * appears once the client sends it.
   */
  openSentCall(): Promise<void>;
  /**
   * The source list changed: when the client has no source to send as (none existed, or its source
   * was deleted), read the client's settings again so the engine's choice (the first source) shows,
   * and drop a "no source" error that no longer holds.
   */
  syncComposeSource(): void;
}

function initialDraft(): Draft {
  const base: Draft = {
    type: 'track',
    fields: emptyFields(),
    json: emptyJson(),
    timestampMode: 'now',
    historicalTimestamp: new Date(Date.now() - 24 * 3600_000).toISOString(),
  };
  const first = SAMPLE_CALLS.find((s) => s.id === 'signed-up') ?? SAMPLE_CALLS[0];
  return first ? draftFromSample(first, base) : base;
}

export const createComposeSlice =
  (api: ApiClient): SliceCreator<ComposeSlice> =>
  (set, get) => {
    const edit = (patch: Partial<Draft>) => set({ draft: { ...get().draft, ...patch }, sendError: null });
    return {
      draft: initialDraft(),
      sendError: null,
      sending: null,
      lastSend: null,
      setComposeType(type) {
        edit({ type });
      },
      setField(field, value) {
        edit({ fields: { ...get().draft.fields, [field]: value } });
      },
      setJson(field, text) {
        edit({ json: { ...get().draft.json, [field]: text } });
      },
      setTimestampMode(timestampMode) {
        edit({ timestampMode });
      },
      setHistoricalTimestamp(historicalTimestamp) {
        edit({ historicalTimestamp });
      },
      applyTemplate(id) {
        const sample = sampleCall(id);
        if (sample) set({ draft: draftFromSample(sample, get().draft), sendError: null });
      },
      async openSentCall() {
        const messageId = get().lastSend?.messageId;
        if (!messageId) return;
        try {
          const page = await api.call('listMessages', { q: messageId, limit: 10 });
          const call = page.items.find((c) => c.messageId === messageId);
          if (call) return get().openCallInInspector(call.id);
          get().guardLeave(() => {
            get().clearInspectorFilters();
            get().setFilters({ q: messageId });
            location.hash = tabHref('inspector');
            get().notify('Not sent yet: it is in the client’s queue. The inspector shows it here once the client sends it.');
          });
        } catch (err) {
          get().notify(errorText(err), 'error');
        }
      },
      syncComposeSource() {
        const { sources, clientState, sendError } = get();
        if (sources.length === 0) return;
        if (sendError?.status === 409 && !sendError.fields.length) set({ sendError: null });
        const cur = clientState?.settings;
        if (!cur) return;
        const noSource = cur.sourceId === null ? cur.writeKey === '' : !sources.some((s) => s.id === cur.sourceId);
        if (noSource) void get().loadClient();
      },
      async send(mode) {
        if (get().sending) return false;
        const { draft } = get();
        const built = buildMessage(draft);
        if (Object.keys(built.errors).length) {
          get().notify('Fix the highlighted fields first', 'error');
          return false;
        }
        set({ sending: mode, sendError: null });
        try {
          const queued = await api.call('clientSend', { type: draft.type, ...built.message });
          let text = `Queued ${draft.type} (${queued.queued} in the client's queue)`;
          if (mode === 'now') {
            const flushed = await api.call('clientFlush', {});
            text = flushed.errors.length
              ? `Flush failed: ${flushed.errors.join('; ')}`
              : flushed.sent === 0
                ? // An idle client sends a first message at once (flushAfter counts from the last flush),
                  // so its own flush can beat ours to it.
                  'Sent by the client’s background flush before the manual flush'
                : `Sent ${countOf(flushed.sent, 'call')} in ${countOf(flushed.batches, 'batch', 'batches')}`;
          }
          set({ lastSend: { messageId: queued.messageId, text } });
          get().notify(text, text.startsWith('Flush failed') ? 'error' : 'info');
          return true;
        } catch (err) {
          set({ sendError: asApiError(err) });
          get().notify(asApiError(err).message, 'error');
          return false;
        } finally {
          set({ sending: null });
        }
      },
    };
  };
