import type { ConnectionStatus } from '../api/transport.types';
import { DEFAULT_TAB, tabFromHash, tabHref, type Tab } from '../screens';
import type { SliceCreator } from './app.types';

export interface Toast {
  id: number;
  kind: 'info' | 'error';
  text: string;
}

/** The one overlay open over the app: the command palette (Ctrl/Cmd+K) or the shortcuts help (`?`). */
export type Overlay = 'palette' | 'help' | null;

export interface UiSlice {
  tab: Tab;
  connection: ConnectionStatus;
  toasts: Toast[];
  overlay: Overlay;
  setOverlay(overlay: Overlay): void;
  /** Every inspector filter off and the search emptied (the palette's "Clear inspector filters"). */
  clearInspectorFilters(): void;
  setTab(tab: Tab): void;
  setConnection(status: ConnectionStatus): void;
  notify(text: string, kind?: Toast['kind']): void;
  dismiss(id: number): void;
  /**
   * A link to one call from another screen: the inspector's filters are cleared (one left on by an
   * earlier link, e.g. Audiences' "see in Inspector", would hide this call) and the call is opened.
   */
  openCallInInspector(id: number): void;
}

let nextToast = 1;

export const createUiSlice: SliceCreator<UiSlice> = (set, get) => ({
  tab: typeof location === 'undefined' ? DEFAULT_TAB : tabFromHash(location.hash),
  connection: 'connecting',
  toasts: [],
  overlay: null,
  setOverlay(overlay) {
    set({ overlay });
  },
  clearInspectorFilters() {
    const s = get();
    const cleared = Object.fromEntries(Object.keys(s.filters).map((k) => [k, undefined]));
    s.setFilters({ ...cleared, q: '' });
  },
  setTab(tab) {
    const was = get().tab;
    set({ tab });
    // Opening the inspector shows fresh calls (main.tsx loads them when the app starts on it).
    if (tab === 'inspector' && was !== 'inspector') void get().loadCalls();
  },
  setConnection(connection) {
    set({ connection });
  },
  notify(text, kind = 'info') {
    const id = nextToast++;
    set({ toasts: [...get().toasts.slice(-3), { id, kind, text }] });
    setTimeout(() => get().dismiss(id), kind === 'error' ? 8000 : 3000);
  },
  dismiss(id) {
    set({ toasts: get().toasts.filter((t) => t.id !== id) });
  },
  openCallInInspector(id) {
    const s = get();
    s.clearInspectorFilters();
    s.selectCall(id);
    if (typeof location !== 'undefined') location.hash = tabHref('inspector');
  },
});
