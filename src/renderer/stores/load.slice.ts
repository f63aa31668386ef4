import type { ApiClient } from '../../shared/api.contract';
import type { ApiError } from '../../shared/api-error';
import type { LoadInput, LoadRun } from '../../shared/simulation.contract';
import type { LoadDraft } from './load-model';
import type { SliceCreator } from './app.types';
import { asApiError, errorText } from './errors';

export interface LoadSlice {
  /** The current or last load run (the engine keeps one). */
  loadRun: LoadRun | null;
  loadRunError: string | null;
  loadFormError: ApiError | null;
  loadStarting: boolean;
  loadStopping: boolean;
  /** The Load form as typed, kept here so leaving the screen does not reset it (null: the defaults). */
  loadDraft: LoadDraft | null;
  setLoadDraft(draft: LoadDraft): void;
  fetchLoadRun(): Promise<void>;
  startLoad(input: LoadInput): Promise<boolean>;
  stopLoad(): Promise<void>;
  /** From `load.progress` events. */
  setLoadRun(run: LoadRun): void;
}

/** An event for the run on screen or a newer one replaces it; a late event of an older run does not. */
export function newerRun(current: LoadRun | null, next: LoadRun): boolean {
  if (!current) return true;
  // A progress event sent just before the run ended must not bring back `running`.
  if (current.id === next.id) return !(current.state !== 'running' && next.state === 'running');
  return next.startedAt >= current.startedAt;
}

export const createLoadSlice =
  (api: ApiClient): SliceCreator<LoadSlice> =>
  (set, get) => ({
    loadRun: null,
    loadRunError: null,
    loadFormError: null,
    loadStarting: false,
    loadStopping: false,
    loadDraft: null,
    setLoadDraft(loadDraft) {
      set({ loadDraft });
    },
    async fetchLoadRun() {
      try {
        const run = await api.call('getLoad', {});
        if (run && newerRun(get().loadRun, run)) set({ loadRun: run });
        set({ loadRunError: null });
      } catch (err) {
        set({ loadRunError: errorText(err) });
      }
    },
    async startLoad(input) {
      set({ loadStarting: true });
      try {
        set({ loadRun: await api.call('startLoad', input), loadFormError: null });
        return true;
      } catch (err) {
        set({ loadFormError: asApiError(err) });
        return false;
      } finally {
        set({ loadStarting: false });
      }
    },
    async stopLoad() {
      set({ loadStopping: true });
      try {
        const run = await api.call('stopLoad', {});
        if (run) set({ loadRun: run });
      } catch (err) {
        get().notify(errorText(err), 'error');
      } finally {
        set({ loadStopping: false });
      }
    },
    setLoadRun(run) {
      if (newerRun(get().loadRun, run)) set({ loadRun: run });
    },
  });
