import type { SliceCreator } from './app.types';

/**
 * The one unsaved-changes guard. A screen holding edits no save has kept registers them (useUnsaved,
 * components/leave-dialog.tsx) under a key of its own, with what they are ("the Webhooks settings of
 * checkout"); every way of leaving them (a hash change: the sidebar, the palette, a link, Back; a
 * call switch in the inspector, by key or click; another source in Destinations) goes through
 * guardLeave, which asks in the app's own dialog. A reload or a closed tab cannot wait for an
 * answer: there the browser's own beforeunload prompt asks (registered only while something is
 * unsaved, LeaveDialog).
 */
export interface UnsavedSlice {
  /** Key → what is unsaved there, in words. */
  unsaved: Record<string, string>;
  /** The question being asked: what would be lost, and what to do on Discard. */
  leaving: { what: string[]; proceed(): void } | null;
  setUnsaved(key: string, what: string | null): void;
  /** Runs `proceed` at once when nothing is unsaved; otherwise asks first and runs it only on Discard. */
  guardLeave(proceed: () => void): void;
  /** The dialog's answer: Discard (forget the edits, then go on) or Keep editing (stay). */
  answerLeave(discard: boolean): void;
}

export const createUnsavedSlice: SliceCreator<UnsavedSlice> = (set, get) => ({
  unsaved: {},
  leaving: null,
  setUnsaved(key, what) {
    const cur = get().unsaved;
    if ((cur[key] ?? null) === what) return;
    const next = { ...cur };
    if (what === null) delete next[key];
    else next[key] = what;
    set({ unsaved: next });
  },
  guardLeave(proceed) {
    const what = Object.values(get().unsaved);
    if (what.length === 0) proceed();
    else set({ leaving: { what, proceed } });
  },
  answerLeave(discard) {
    const leaving = get().leaving;
    set({ leaving: null });
    if (!discard || !leaving) return;
    // What stays on screen after proceeding (none of it should) registers again when edited.
    set({ unsaved: {} });
    leaving.proceed();
  },
});
