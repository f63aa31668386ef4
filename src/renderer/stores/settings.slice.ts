import type { ApiClient, Health } from '../../shared/api.contract';
import type { ApiError } from '../../shared/api-error';
import type { SettingsPatch } from '../../shared/settings.schema';
import type { Settings, StorageState } from '../../shared/types';
import type { SliceCreator } from './app.types';
import { asApiError, errorText } from './errors';

export interface SettingsSlice {
  settings: Settings | null;
  health: Health | null;
  /** Whether the engine can store calls now (health, then storage.changed events): the banner's state. */
  storage: StorageState | null;
  settingsError: string | null;
  settingsFormError: ApiError | null;
  loadSettings(): Promise<void>;
  loadHealth(): Promise<void>;
  saveSettings(patch: SettingsPatch): Promise<boolean>;
  setSettings(settings: Settings): void;
  setStorage(storage: StorageState): void;
}

export const createSettingsSlice =
  (api: ApiClient): SliceCreator<SettingsSlice> =>
  (set, get) => ({
    settings: null,
    health: null,
    storage: null,
    settingsError: null,
    settingsFormError: null,
    async loadSettings() {
      try {
        set({ settings: await api.call('getSettings', {}), settingsError: null });
      } catch (err) {
        set({ settingsError: errorText(err) });
      }
    },
    async loadHealth() {
      try {
        const health = await api.call('health', {});
        set({ health, storage: health.storage });
      } catch {
        // Health is informational (collector URL in empty states); other loads report failures.
      }
    },
    async saveSettings(patch) {
      try {
        set({ settings: await api.call('updateSettings', patch), settingsFormError: null });
        get().notify('Settings saved');
        return true;
      } catch (err) {
        set({ settingsFormError: asApiError(err) });
        return false;
      }
    },
    setSettings(settings) {
      set({ settings });
    },
    setStorage(storage) {
      set({ storage });
    },
  });
