import type { ApiClient } from '../../shared/api.contract';
import type { Demo } from '../../shared/demo.contract';
import type { SliceCreator } from './app.types';
import { errorText } from './errors';

// The first-run demo (src/shared/demo.contract.ts): offered while the lab has no source; once made,
// a bar says what it is and removes it.

export interface DemoSlice {
  demo: Demo | null;
  demoBusy: boolean;
  loadDemo(): Promise<void>;
  /** Makes the demo (or finds it) and opens its sample call in the inspector. */
  tryDemo(): Promise<void>;
  removeDemo(): Promise<void>;
}

export const createDemoSlice =
  (api: ApiClient): SliceCreator<DemoSlice> =>
  (set, get) => ({
    demo: null,
    demoBusy: false,
    async loadDemo() {
      try {
        set({ demo: await api.call('getDemo', {}) });
      } catch {
        // An engine without the demo operations (older) or unreachable: no bar, nothing to say.
      }
    },
    async tryDemo() {
      if (get().demoBusy) return;
      set({ demoBusy: true });
      try {
        const { created: _created, ...demo } = await api.call('createDemo', {});
        set({ demo });
        await get().loadSources();
        void get().loadReceivers();
        if (demo.callIds[0] !== undefined) get().openCallInInspector(demo.callIds[0]);
      } catch (err) {
        get().notify(`Could not make the demo: ${errorText(err)}`, 'error');
      } finally {
        set({ demoBusy: false });
      }
    },
    async removeDemo() {
      if (get().demoBusy) return;
      set({ demoBusy: true });
      try {
        const r = await api.call('removeDemo', {});
        set({ demo: null });
        get().notify(`Demo removed: ${[r.sourceRemoved && 'its source', r.receiverRemoved && 'its mock receiver', r.callsRemoved > 0 && `${r.callsRemoved} call${r.callsRemoved === 1 ? '' : 's'}`].filter(Boolean).join(', ') || 'nothing was left'}`);
        await get().loadSources();
        void get().loadReceivers();
      } catch (err) {
        get().notify(`Could not remove the demo: ${errorText(err)}`, 'error');
      } finally {
        set({ demoBusy: false });
      }
    },
  });
