import { useEffect, useRef } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { CallSummary } from '../../../shared/types';
import { formatMs, formatTime } from '../../components/format';
import { StatusChip } from '../../components/status-chip';
import { useApp, useAppShallow, useAppStore } from '../../store-context';

const ROW_HEIGHT = 30;

function Row({ call, selected, onSelect }: { call: CallSummary; selected: boolean; onSelect(): void }) {
  return (
    <div
      role="row"
      aria-selected={selected}
      className={`call-row${selected ? ' selected' : ''}`}
      data-testid="call-row"
      data-id={call.id}
      data-status={call.status === 'dropped' ? 'dropped' : (call.deliveryState ?? 'not_forwarded')}
      onClick={onSelect}
    >
      <span className="mono">{formatTime(call.receivedAt)}</span>
      <span className="ellipsis">{call.sourceName ?? '—'}</span>
      <span>{call.type}</span>
      <span className="ellipsis mono" title={call.anonymousId ?? undefined}>
        {call.userId ?? (call.anonymousId ? `anon ${call.anonymousId.slice(0, 8)}` : '—')}
      </span>
      <span className="ellipsis" data-testid="call-label">{call.label ?? ''}</span>
      <span className="ellipsis">
        <StatusChip call={call} />
      </span>
      <span className="num">{call.attemptCount}</span>
      <span className="num">{formatMs(call.latencyMs)}</span>
    </div>
  );
}

export function CallList() {
  const store = useAppStore();
  const calls = useApp((s) => s.calls);
  const { selected, next, loadingMore } = useAppShallow((s) => ({ selected: s.selectedCallId, next: s.callsNext, loadingMore: s.callsLoadingMore }));
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
  const lastIndex = items.length ? items[items.length - 1].index : -1;
  // Page in the next 100 when the viewport nears the end of what is loaded.
  useEffect(() => {
    if (next !== null && !loadingMore && lastIndex >= calls.length - 20) void store.getState().loadMoreCalls();
  }, [lastIndex, calls.length, next, loadingMore, store]);

  return (
    <div className="call-list" role="grid" aria-rowcount={calls.length}>
      <div className="call-row call-head" role="row">
        <span>time</span>
        <span>source</span>
        <span>type</span>
        <span>user</span>
        <span>event / name</span>
        <span>status</span>
        <span className="num">tries</span>
        <span className="num">latency</span>
      </div>
      <div className="call-scroll" ref={parent} data-testid="call-list">
        <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
          {items.map((v) => (
            <div key={v.key} style={{ position: 'absolute', top: 0, left: 0, right: 0, height: v.size, transform: `translateY(${v.start}px)` }}>
              <Row call={calls[v.index]} selected={calls[v.index].id === selected} onSelect={() => store.getState().selectCall(calls[v.index].id)} />
            </div>
          ))}
        </div>
        {loadingMore ? <div className="muted list-foot">loading more…</div> : null}
      </div>
    </div>
  );
}
