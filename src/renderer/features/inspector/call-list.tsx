import { useEffect, useRef, type ReactNode } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { CallSummary } from '../../../shared/types';
import { ActionsTag, StatusChip } from '../../components/status-chip';
import { ViolationsBadge } from '../../components/violations-view';
import { useApp, useAppShallow, useAppStore } from '../../store-context';
import { CALL_COLUMNS, ROW_HEIGHT, rowStatus } from '../../components/call-list-model';

/** What a click on a row does: Ctrl/⌘ toggles its pick, Shift picks up to it, a plain click opens it. */
function clickKind(e: MouseEvent): 'toggle' | 'range' | 'open' {
  if (e.ctrlKey || e.metaKey) return 'toggle';
  return e.shiftKey ? 'range' : 'open';
}

function Row({ call, selected, picked, cursor, onClick }: { call: CallSummary; selected: boolean; picked: boolean; cursor: boolean; onClick(kind: 'toggle' | 'range' | 'open'): void }) {
  return (
    <div
      role="row"
      aria-selected={selected}
      // One row in the tab order (roving): the cursor's; the keys move it (keyboard.ts).
      tabIndex={cursor ? 0 : -1}
      className={`call-row${selected ? ' selected' : ''}${cursor ? ' cursor' : ''}${picked ? ' picked' : ''}`}
      data-testid="call-row"
      data-id={call.id}
      data-cursor={cursor || undefined}
      data-status={rowStatus(call)}
      data-picked={picked || undefined}
      title={picked ? 'Picked (Ctrl/⌘-click or x to unpick)' : undefined}
      onMouseDown={(e) => {
        // Shift-click would select the rows' text.
        if (e.shiftKey) e.preventDefault();
      }}
      onClick={(e) => onClick(clickKind(e.nativeEvent))}
    >
      {CALL_COLUMNS.map((col) => (
        <span key={col.label} role="gridcell" className={col.className || undefined} title={col.title?.(call)} data-testid={col.testId}>
          {col.text ? (
            col.text(call)
          ) : (
            <>
              <StatusChip call={call} />
              <ActionsTag urls={call.urls} />
              <ViolationsBadge count={call.violations} />
            </>
          )}
        </span>
      ))}
    </div>
  );
}

/**
 * `cursor`: the row the keys are on (focused, in the tab order); the first row when none. `footer`
 * goes under the rows (actions on the calls): there it never moves them.
 */
export function CallList({ cursor, onCursor, footer }: { cursor: number | null; onCursor(id: number): void; footer?: ReactNode }) {
  const store = useAppStore();
  const calls = useApp((s) => s.calls);
  const { selected, next, loadingMore } = useAppShallow((s) => ({ selected: s.selectedCallId, next: s.callsNext, loadingMore: s.callsLoadingMore }));
  const picked = useApp((s) => s.pickedCallIds);
  const pickedSet = new Set(picked);
  const parent = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: calls.length,
    getScrollElement: () => parent.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
    getItemKey: (i) => calls[i].id,
    // Until the list is measured (in a layout effect, after the first commit) assume it is as tall as
    // the window, which it never exceeds: the first commit already has the rows, not an empty list.
    initialRect: { width: 0, height: window.innerHeight },
  });
  const items = virtualizer.getVirtualItems();
  const cursorId = cursor !== null && calls.some((c) => c.id === cursor) ? cursor : (calls[0]?.id ?? null);
  // The cursor moved (keys, which never act while a field has the focus, or a click): bring its row
  // into view and give it the focus.
  useEffect(() => {
    if (cursor === null) return;
    const index = calls.findIndex((c) => c.id === cursor);
    if (index === -1) return;
    virtualizer.scrollToIndex(index, { align: 'auto' });
    requestAnimationFrame(() => parent.current?.querySelector<HTMLElement>(`[data-testid="call-row"][data-id="${cursor}"]`)?.focus({ preventScroll: true }));
    // Only when the cursor moves, not on every live update of the list.
  }, [cursor]);
  const lastIndex = items.length ? items[items.length - 1].index : -1;
  // Page in the next 100 when the viewport nears the end of what is loaded.
  useEffect(() => {
    if (next !== null && !loadingMore && lastIndex >= calls.length - 20) void store.getState().loadMoreCalls();
  }, [lastIndex, calls.length, next, loadingMore, store]);

  return (
    <div className="call-list" role="grid" aria-label="Calls" aria-rowcount={calls.length}>
      <div className="call-row call-head" role="row">
        {CALL_COLUMNS.map((col) => (
          <span key={col.label} role="columnheader" className={col.numeric ? 'num' : undefined}>
            {col.label}
          </span>
        ))}
      </div>
      <div className="call-scroll" ref={parent} data-testid="call-list">
        <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
          {items.map((v) => (
            <div key={v.key} style={{ position: 'absolute', top: 0, left: 0, right: 0, height: v.size, transform: `translateY(${v.start}px)` }}>
              <Row
                call={calls[v.index]}
                selected={calls[v.index].id === selected}
                picked={pickedSet.has(calls[v.index].id)}
                cursor={calls[v.index].id === cursorId}
                onClick={(kind) => {
                  const id = calls[v.index].id;
                  onCursor(id);
                  if (kind === 'toggle') store.getState().togglePick(id);
                  else if (kind === 'range') store.getState().pickRange(id);
                  else store.getState().selectCall(id);
                }}
              />
            </div>
          ))}
        </div>
        {loadingMore ? <div className="muted list-foot">loading more…</div> : null}
      </div>
      {footer ? <div className="call-list-foot">{footer}</div> : null}
    </div>
  );
}
