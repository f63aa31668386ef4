import { useEffect, useRef } from 'react';
import { useApp, useAppStore } from '../store-context';

/**
 * Registers edits of a screen that no save has kept, while `what` (in words: "the Webhooks settings
 * of checkout") is not null and the component is mounted: leaving them asks first (unsaved.slice.ts).
 */
export function useUnsaved(key: string, what: string | null): void {
  const store = useAppStore();
  useEffect(() => {
    store.getState().setUnsaved(key, what);
  }, [store, key, what]);
  useEffect(() => () => store.getState().setUnsaved(key, null), [store, key]);
}

/** The browser's own prompt on a reload or a closed tab, the only one it allows there: only while something is unsaved. */
function useBeforeUnload(active: boolean): void {
  useEffect(() => {
    if (!active) return;
    const ask = (e: BeforeUnloadEvent) => {
      e.preventDefault();
      // Older Chromium (and Electron's will-prevent-unload) look at returnValue.
      e.returnValue = '';
    };
    window.addEventListener('beforeunload', ask);
    return () => window.removeEventListener('beforeunload', ask);
  }, [active]);
}

/** "Discard unsaved changes?": asked in the app (not window.confirm) before any way of leaving them. */
export function LeaveDialog() {
  const store = useAppStore();
  const leaving = useApp((s) => s.leaving);
  const dirty = useApp((s) => Object.keys(s.unsaved).length > 0);
  useBeforeUnload(dirty);
  const keep = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (leaving) keep.current?.focus();
  }, [leaving]);
  if (!leaving) return null;
  const answer = (discard: boolean) => store.getState().answerLeave(discard);
  return (
    <div className="overlay-backdrop" data-testid="leave-backdrop">
      <div
        className="leave-dialog"
        role="alertdialog"
        aria-modal="true"
        aria-labelledby="leave-title"
        aria-describedby="leave-what"
        data-testid="leave-dialog"
        onKeyDown={(e) => {
          // Esc keeps editing; no other key reaches the screen behind (the inspector's ↓ would move on).
          e.stopPropagation();
          if (e.key === 'Escape') {
            e.preventDefault();
            answer(false);
          }
        }}
      >
        <h2 id="leave-title">Discard unsaved changes?</h2>
        <p id="leave-what">
          Changes not saved yet: {leaving.what.join(' and ')}. Leaving now throws them away.
        </p>
        <div className="row leave-actions">
          <button ref={keep} type="button" className="primary" data-testid="leave-keep" onClick={() => answer(false)}>
            Keep editing
          </button>
          <button type="button" className="danger" data-testid="leave-discard" onClick={() => answer(true)}>
            Discard
          </button>
        </div>
      </div>
    </div>
  );
}
