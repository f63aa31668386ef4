import type { CallSummary } from '../../shared/types';
import { formatMs, formatTime } from './format';

// What the inspector's call list shows, without React: how many calls a page holds, how tall a row
// is, its columns and what each cell says. CallList renders it, and so does the shell painted before
// the app runs (first-page/first-page.ts, inlined by the build), so the two cannot drift.

/** Calls read at a time: the first page, and each one paged in as the list scrolls. */
export const PAGE_SIZE = 100;

/** A row's height in px (the virtualizer's estimate, and the painted rows' slots). */
export const ROW_HEIGHT = 30;

export interface CallColumn {
  label: string;
  /** The cell's classes; a numeric column's header is right-aligned as well ('num'). */
  className: string;
  numeric?: true;
  /** The cell's text; null for the status column, whose cell holds the status chip (and the Actions tag). */
  text: ((call: CallSummary) => string) | null;
  title?: (call: CallSummary) => string | undefined;
  testId?: string;
}

export const CALL_COLUMNS: readonly CallColumn[] = [
  { label: 'time', className: 'mono', text: (c) => formatTime(c.receivedAt) },
  { label: 'source', className: 'ellipsis', text: (c) => c.sourceName ?? '—' },
  { label: 'type', className: '', text: (c) => c.type },
  {
    label: 'user',
    className: 'ellipsis mono',
    text: (c) => c.userId ?? (c.anonymousId ? `anon ${c.anonymousId.slice(0, 8)}` : '—'),
    title: (c) => c.anonymousId ?? undefined,
  },
  { label: 'event / name', className: 'ellipsis', text: (c) => c.label ?? '', testId: 'call-label' },
  // A flex cell: the chip shrinks (ellipsized) before the Actions tag beside it does.
  { label: 'status', className: 'status-cell', text: null },
  { label: 'tries', className: 'num', numeric: true, text: (c) => String(c.attemptCount) },
  { label: 'latency', className: 'num', numeric: true, text: (c) => formatMs(c.latencyMs) },
];

/** A row's data-status: dropped, the delivery's state, or not_forwarded. */
export function rowStatus(call: Pick<CallSummary, 'status' | 'deliveryState'>): string {
  return call.status === 'dropped' ? 'dropped' : call.status === 'blocked' ? 'blocked' : (call.deliveryState ?? 'not_forwarded');
}
