import type { ApiClient } from '../../shared/api.contract';
import type { ApiError } from '../../shared/api-error';
import type { ConfigWarning } from '../../shared/config.schema';
import type { SliceCreator } from './app.types';
import { asApiError, errorText } from './errors';
import { connectSimulationEvents } from './sim-events';

// Time-warp, export of deliveries, config export/import: small actions shared by several screens.

export interface SimToolsSlice {
  timeScaleError: string | null;
  exporting: boolean;
  configImportError: ApiError | null;
  /** What the last import adjusted or doubts (mock receivers named, URLs at another port of this machine); [] when nothing. */
  configImportWarnings: ConfigWarning[];
  /** Applies at once: retries already scheduled move to the new speed. */
  setTimeScale(scale: number): Promise<boolean>;
  /**
   * Deliveries matching the inspector's current filters: the file to download, or null when it failed
   * (notified) or the desktop app already saved it.
   */
  exportDeliveries(format: 'jsonl' | 'har'): Promise<{ filename: string; blob: Blob } | null>;
  exportConfig(): Promise<string | null>;
  /** `text` is the config file's JSON; the engine validates it. */
  importConfig(text: string): Promise<boolean>;
  /** Subscribes the simulation screens to engine events; returns the unsubscribe. */
  watchSimulation(): () => void;
}

export const createSimToolsSlice =
  (api: ApiClient): SliceCreator<SimToolsSlice> =>
  (set, get, store) => ({
    timeScaleError: null,
    exporting: false,
    configImportError: null,
    configImportWarnings: [],
    async setTimeScale(timeScale) {
      try {
        const settings = await api.call('updateSettings', { timeScale });
        get().setSettings(settings);
        set({ timeScaleError: null });
        get().notify(timeScale === 1 ? 'Time-warp off: retries run in real time' : `Time-warp ×${timeScale}: retry delays run ${timeScale} times faster`);
        return true;
      } catch (err) {
        const e = asApiError(err);
        set({ timeScaleError: e.fieldMessage('timeScale') ?? errorText(err) });
        return false;
      }
    },
    async exportDeliveries(format) {
      const f = get().filters;
      set({ exporting: true });
      try {
        const input = {
          format,
          sourceId: f.sourceId || undefined,
          type: f.type || undefined,
          status: f.status || undefined,
          urlState: f.urlState || undefined,
          q: f.q?.trim() || undefined,
        };
        if (api.saveExport) {
          // Desktop: the main process asks where, then writes the file itself; nothing to download here.
          const saved = await api.saveExport(input);
          if (saved.saved) get().notify(`Export saved to ${saved.path}`, 'info');
          return null;
        }
        if (api.exportFile) return await api.exportFile(input);
        const file = await api.call('exportDeliveries', input);
        return { filename: file.filename, blob: new Blob([file.content], { type: file.contentType }) };
      } catch (err) {
        get().notify(`Export failed: ${errorText(err)}`, 'error');
        return null;
      } finally {
        set({ exporting: false });
      }
    },
    async exportConfig() {
      try {
        // Its schemas (zod) load with the first export, not with the first screen (issue 40).
        const { configFileText } = await import('./config-file-text');
        const { text, problem } = configFileText(await api.call('getConfig', {}));
        if (problem) get().notify(`Config exported, but ${problem}`, 'error');
        return text;
      } catch (err) {
        get().notify(`Config export failed: ${errorText(err)}`, 'error');
        return null;
      }
    },
    async importConfig(text) {
      let config: unknown;
      try {
        config = JSON.parse(text);
      } catch (err) {
        set({ configImportError: asApiError(new Error(`The file is not JSON: ${(err as Error).message}`)), configImportWarnings: [] });
        return false;
      }
      try {
        const r = await api.call('importConfig', config as never);
        set({ configImportError: null, configImportWarnings: r.warnings });
        const doubts = r.warnings.filter((w) => w.code === 'loopback_port_not_owned').length;
        get().notify(`Config imported: ${r.sources} source(s), ${r.mockReceivers} mock receiver(s), ${r.audiences} audience(s)${doubts ? `; ${doubts} URL(s) to check (listed under Config file)` : ''}`);
        const s = get();
        void s.loadSources();
        void s.loadSettings();
        void s.loadReceivers();
        void s.loadAudiences();
        return true;
      } catch (err) {
        set({ configImportError: asApiError(err), configImportWarnings: [] });
        return false;
      }
    },
    watchSimulation() {
      return connectSimulationEvents(store, api);
    },
  });
