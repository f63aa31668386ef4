import type { ApiClient } from '../../shared/api.contract';
import type { ApiError } from '../../shared/api-error';
import type { CallDetail, Source, WebhookSettings } from '../../shared/types';
import type { CollectorFaultCounts, CollectorFaults } from '../../shared/collector-faults';
import type { SliceCreator } from './app.types';
import { asApiError, errorText } from './errors';

export interface SourcesSlice {
  sources: Source[];
  sourcesLoaded: boolean;
  sourcesError: string | null;
  selectedSourceId: string | null;
  /** The last failed create/update, so forms can put `fields` messages on their inputs. */
  sourceFormError: ApiError | null;
  lastTestCall: CallDetail | null;
  loadSources(): Promise<void>;
  selectSource(id: string | null): void;
  createSource(input: { name: string; writeKey?: string }): Promise<Source | null>;
  saveWebhooks(id: string, webhooks: WebhookSettings): Promise<boolean>;
  regenerateWriteKey(id: string): Promise<void>;
  /** A new version of one of the source's secrets (`secret`, else a random one); false when refused (the error notified). */
  rotateSecret(id: string, which: 'sharedSecret' | 'standardWebhooksSecret', secret?: string, overlap?: boolean): Promise<boolean>;
  /**
   * The new secret a rotation proposes, per `${sourceId}:${which}`, kept from the moment Rotate is
   * opened until it is done or canceled: it may be copied to a receiver and deployed before the switch,
   * and leaving the screen meanwhile must not lose it.
   */
  secretDrafts: Record<string, string>;
  setSecretDraft(key: string, secret: string | null): void;
  deleteSource(id: string): Promise<void>;
  sendTestCall(id: string): Promise<CallDetail | null>;
  /** The test call changed (live events): read it again so its chip shows where it is now. */
  refreshTestCall(): Promise<void>;
  clearSourceFormError(): void;
  /** Faults the collector injected per source since start (null until loaded). */
  faultCounts: CollectorFaultCounts | null;
  loadFaultCounts(): Promise<void>;
  /** Sets or (null) clears a source's collector faults; the error, with its fields, when refused. */
  saveCollectorFaults(id: string, faults: CollectorFaults | null): Promise<ApiError | null>;
}

export const createSourcesSlice =
  (api: ApiClient): SliceCreator<SourcesSlice> =>
  (set, get) => {
    const replace = (source: Source) =>
      set({ sources: get().sources.map((s) => (s.id === source.id ? source : s)) });
    return {
      sources: [],
      sourcesLoaded: false,
      sourcesError: null,
      selectedSourceId: null,
      sourceFormError: null,
      lastTestCall: null,
      async loadSources() {
        try {
          const sources = await api.call('listSources', {});
          const selected = get().selectedSourceId;
          set({
            sources,
            sourcesLoaded: true,
            sourcesError: null,
            selectedSourceId: selected && sources.some((s) => s.id === selected) ? selected : (sources[0]?.id ?? null),
          });
        } catch (err) {
          // Not "loaded": an empty list here would read as "no source yet" (first run, Compose).
          set({ sourcesError: errorText(err) });
        }
      },
      selectSource(id) {
        set({ selectedSourceId: id, sourceFormError: null, lastTestCall: null });
      },
      async createSource(input) {
        try {
          const source = await api.call('createSource', input);
          set({ sources: [...get().sources, source], selectedSourceId: source.id, sourceFormError: null });
          get().notify(`Source "${source.name}" created`);
          return source;
        } catch (err) {
          set({ sourceFormError: asApiError(err) });
          return null;
        }
      },
      async saveWebhooks(id, webhooks) {
        try {
          replace(await api.call('updateSource', { id, webhooks }));
          set({ sourceFormError: null });
          get().notify('Webhooks settings saved');
          return true;
        } catch (err) {
          set({ sourceFormError: asApiError(err) });
          return false;
        }
      },
      async regenerateWriteKey(id) {
        try {
          replace(await api.call('regenerateWriteKey', { id }));
          get().notify('New write key generated; the old one no longer works');
        } catch (err) {
          get().notify(errorText(err), 'error');
        }
      },
      async rotateSecret(id, which, secret, overlap) {
        try {
          const s = await api.call('rotateSecret', { id, which, ...(secret === undefined ? {} : { secret }), ...(overlap === undefined ? {} : { overlap }) });
          replace(s);
          const v = s.secretVersions?.[which]?.version;
          get().notify(`${which === 'sharedSecret' ? 'Shared secret' : 'Standard Webhooks secret'} rotated${v ? ` (version ${v})` : ''}: new requests sign with it`);
          return true;
        } catch (err) {
          get().notify(errorText(err), 'error');
          return false;
        }
      },
      secretDrafts: {},
      setSecretDraft(key, secret) {
        const next = { ...get().secretDrafts };
        if (secret === null) delete next[key];
        else next[key] = secret;
        set({ secretDrafts: next });
      },
      async deleteSource(id) {
        try {
          await api.call('deleteSource', { id });
          const sources = get().sources.filter((s) => s.id !== id);
          set({ sources, selectedSourceId: sources[0]?.id ?? null });
        } catch (err) {
          get().notify(errorText(err), 'error');
        }
      },
      async sendTestCall(id) {
        try {
          const detail = await api.call('sendTestCall', { id });
          set({ lastTestCall: detail });
          // Its delivery may have been answered, and its events come, before this answer did: they
          // were not known to be the test call's then (live-events.ts), so read it once now.
          void get().refreshTestCall();
          return detail;
        } catch (err) {
          get().notify(errorText(err), 'error');
          return null;
        }
      },
      async refreshTestCall() {
        const id = get().lastTestCall?.call.id;
        if (id === undefined) return;
        try {
          const detail = await api.call('getMessage', { id });
          if (get().lastTestCall?.call.id === id) set({ lastTestCall: detail });
        } catch {
          // The call was deleted meanwhile (retention, purge): the chip keeps its last state.
        }
      },
      clearSourceFormError() {
        set({ sourceFormError: null });
      },
      faultCounts: null,
      async loadFaultCounts() {
        try {
          set({ faultCounts: await api.call('getCollectorFaultCounts', {}) });
        } catch {
          // Counts are a convenience: the next poll tries again.
        }
      },
      async saveCollectorFaults(id, collectorFaults) {
        try {
          replace(await api.call('updateSource', { id, collectorFaults }));
          get().notify(collectorFaults ? 'Collector faults on for this source' : 'Collector faults off');
          return null;
        } catch (err) {
          return asApiError(err);
        }
      },
    };
  };
