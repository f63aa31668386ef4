import type { ConnectionStatus } from '../api/transport.types';
import { callHref, callIdFromHash, DEFAULT_TAB, tabFromHash, tabHref, type Tab } from '../screens';
import type { SliceCreator } from './app.types';
import type { InspectorFilters } from '../../shared/delivery-filters';

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
  /**
   * The address changed (a link, the sidebar, the palette, Back, a typed or reloaded permalink): show
   * its screen, and on `#/inspector/<id>` open that call. Leaving unsaved edits asks first
   * (unsaved.slice.ts); meanwhile the address shows where the app still is.
   */
  followHash(hash: string): void;
  setConnection(status: ConnectionStatus): void;
  notify(text: string, kind?: Toast['kind']): void;
  dismiss(id: number): void;
  /**
   * A link to one call from another screen: the inspector's filters are cleared (one left on by an
   * earlier link, e.g. Audiences' "see in Inspector", would hide this call) and the call is opened,
   * at its address (`#/inspector/<id>`).
   */
  /** `filters`: set after the inspector's are cleared (the probe's calls listed, say). */
  openCallInInspector(id: number, filters?: Partial<InspectorFilters>): void;
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
  followHash(hash) {
    const s = get();
    const tab = tabFromHash(hash);
    const callId = tab === 'inspector' ? callIdFromHash(hash) : null;
    const go = () => {
      replaceHash(hash);
      get().setTab(tab);
      if (callId !== null && callId !== get().selectedCallId) get().selectCall(callId);
      else if (tab === 'inspector') replaceHash(currentHref(get()));
    };
    if (tab === s.tab && (callId === null || callId === s.selectedCallId)) return go();
    if (Object.keys(s.unsaved).length === 0) return go();
    // Back where the app still is while it asks; Discard goes on to the address (replacing this one).
    replaceHash(currentHref(s));
    s.guardLeave(go);
  },
  openCallInInspector(id, filters) {
    get().guardLeave(() => {
      const s = get();
      s.clearInspectorFilters();
      if (filters) s.setFilters(filters);
      s.selectCall(id);
      // A new entry in the history (Back returns to the screen the link was on); followHash then
      // finds the call already open.
      if (typeof location !== 'undefined' && s.tab !== 'inspector') location.hash = callHref(id);
    });
  },
});

/** Where the app is: the screen, and on the inspector the open call. */
function currentHref(s: { tab: Tab; selectedCallId: number | null }): string {
  return s.tab === 'inspector' && s.selectedCallId !== null ? callHref(s.selectedCallId) : tabHref(s.tab);
}

/** Sets the address without a new history entry (and without a hashchange event). */
export function replaceHash(hash: string): void {
  if (typeof location === 'undefined' || location.hash === hash) return;
  history.replaceState(history.state, '', hash);
}
