import { useEffect } from 'react';
import type { AppStore } from '../../stores/app.store';
import { isTyping } from '../../shortcuts';
import { inspectorAction } from '../../inspector-shortcuts';

/**
 * The inspector's keys (inspector-shortcuts.ts), while it is on screen: ↑/↓ or j/k move the cursor row (and the
 * open detail with it), Enter opens it, Esc closes the detail, / goes to the search box. Nothing
 * happens while a field has the focus or a dialog is open, or with Ctrl/Cmd/Alt held. x picks the
 * cursor row (call-picks.slice.ts).
 */
export function useInspectorKeys(store: AppStore, cursor: number | null, setCursor: (id: number) => void): void {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || isTyping(e.target) || document.querySelector('[aria-modal="true"]')) return;
      const action = inspectorAction(e);
      if (action === null) return;
      const s = store.getState();
      if (action === 'search') {
        const box = document.querySelector<HTMLInputElement>('[data-testid="filter-search"]');
        if (!box) return;
        e.preventDefault();
        box.focus();
        box.select();
        return;
      }
      if (action === 'close') {
        if (s.selectedCallId === null) return;
        e.preventDefault();
        if (cursor === null) setCursor(s.selectedCallId);
        s.selectCall(null);
        return;
      }
      if (action === 'pick') {
        const id = cursor ?? s.calls[0]?.id;
        if (id === undefined) return;
        e.preventDefault();
        setCursor(id);
        s.togglePick(id);
        return;
      }
      if (action === 'open') {
        // Enter on a button, link or summary is theirs.
        if (e.target instanceof HTMLElement && e.target.closest('button, a, summary, [role="separator"]')) return;
        const id = cursor ?? s.calls[0]?.id;
        if (id === undefined) return;
        e.preventDefault();
        setCursor(id);
        if (s.selectedCallId !== id) s.selectCall(id);
        return;
      }
      if (s.calls.length === 0) return;
      e.preventDefault();
      const from = s.calls.findIndex((c) => c.id === (cursor ?? s.selectedCallId));
      const to = from === -1 ? 0 : Math.max(0, Math.min(s.calls.length - 1, from + (action === 'next' ? 1 : -1)));
      const id = s.calls[to].id;
      setCursor(id);
      // With the detail open, it follows the cursor (a reading pane).
      if (s.selectedCallId !== null && s.selectedCallId !== id) s.selectCall(id);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [store, cursor, setCursor]);
}
