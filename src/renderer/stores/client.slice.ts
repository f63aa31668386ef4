import type { ApiClient, ClientState } from '../../shared/api.contract';
import type { ApiError } from '../../shared/api-error';
import type { SliceCreator } from './app.types';
import type { LibraryMetrics } from '../../shared/library-metrics';
import { asApiError, errorText } from './errors';
import { countOf } from '../components/format';

export interface ClientSlice {
  clientState: ClientState | null;
  clientError: string | null;
  clientFormError: ApiError | null;
  flushing: boolean;
  loadClient(): Promise<void>;
  setClientState(state: ClientState): void;
  updateClientSettings(patch: { flushAt?: number; flushAfter?: number; sourceId?: string; endpoint?: string }): Promise<boolean>;
  flushClient(): Promise<void>;
  /** The browser SDK the collector serves and its /v1/m counters (Client screen, Browser SDK). */
  libraryMetrics: LibraryMetrics | null;
  libraryMetricsError: string | null;
  loadLibraryMetrics(): Promise<void>;
}

export const createClientSlice =
  (api: ApiClient): SliceCreator<ClientSlice> =>
  (set, get) => ({
    clientState: null,
    clientError: null,
    clientFormError: null,
    flushing: false,
    libraryMetrics: null,
    libraryMetricsError: null,
    async loadLibraryMetrics() {
      try {
        set({ libraryMetrics: await api.call('getLibraryMetrics', {}), libraryMetricsError: null });
      } catch (err) {
        set({ libraryMetricsError: errorText(err) });
      }
    },
    async loadClient() {
      try {
        set({ clientState: await api.call('clientState', {}), clientError: null });
      } catch (err) {
        set({ clientError: errorText(err) });
      }
    },
    setClientState(clientState) {
      set({ clientState });
    },
    async updateClientSettings(patch) {
      try {
        const settings = await api.call('clientUpdateSettings', patch);
        const cur = get().clientState;
        set({ clientFormError: null, clientState: cur ? { ...cur, settings } : cur });
        return true;
      } catch (err) {
        set({ clientFormError: asApiError(err) });
        return false;
      }
    },
    async flushClient() {
      set({ flushing: true });
      try {
        const r = await api.call('clientFlush', {});
        get().notify(r.errors.length ? `Flush: ${r.errors.join('; ')}` : `Flushed ${countOf(r.sent, 'call')} in ${countOf(r.batches, 'batch', 'batches')}`, r.errors.length ? 'error' : 'info');
        await get().loadClient();
      } catch (err) {
        get().notify(errorText(err), 'error');
      } finally {
        set({ flushing: false });
      }
    },
  });
