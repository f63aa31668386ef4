import type { InspectorFilters } from '../../shared/delivery-filters';
import type { CallSummary } from '../../shared/types';
import { matchesSearch, searchTerm } from '../../shared/search-filter';
import { PROBE_SOURCE_NAME } from '../../shared/probe-source';

// Live updates applied to the loaded page of calls without refetching: new calls that match the
// filters go on top, changed calls are replaced where they are. Lists are newest first (id desc).

/**
 * Whether a call belongs in the list under these filters: the engine's rules, applied to a summary.
 * Null when only the engine can tell: a body search the call's fields do not match (summaries carry
 * no body).
 */
export function matchesFilters(c: CallSummary, f: InspectorFilters): boolean | null {
  if (f.type && c.type !== f.type) return false;
  if (f.sourceId && c.sourceId !== f.sourceId) return false;
  if (!f.sourceId && !f.probe && c.sourceName === PROBE_SOURCE_NAME) return false;
  if (f.status) {
    if (f.status === 'dropped') {
      if (c.status !== 'dropped' && c.deliveryState !== 'dropped') return false;
    } else if (f.status === 'blocked') {
      if (c.status !== 'blocked') return false;
    } else if (f.status === 'not_forwarded') {
      if (c.status !== 'accepted' || c.deliveryState !== null) return false;
    } else if (c.deliveryState !== f.status) return false;
  }
  if (f.urlState && !c.urls.some((u) => u.state === f.urlState)) return false;
  if (f.violations && !(c.violations && c.violations > 0)) return false;
  const term = searchTerm(f.q);
  if (term && !matchesSearch(c, term)) return f.body ? null : false;
  return true;
}

export interface MergeInput {
  items: CallSummary[];
  total: number;
  /** Paging cursor: null when every matching call is loaded. */
  next: number | null;
  filters: InspectorFilters;
  /** Kept in the list even when it stops matching, so the open detail does not vanish. */
  keepId?: number | null;
}

/** `undecided`: new calls only the engine can place (a body search): read the list again. */
export function mergeCallEvents(state: MergeInput, stored: CallSummary[], updated: CallSummary[]): { items: CallSummary[]; total: number; undecided: boolean } {
  if (stored.length === 0 && updated.length === 0) return { items: state.items, total: state.total, undecided: false };
  const byId = new Map(state.items.map((c) => [c.id, c]));
  // Newest version wins: stored then updated, each in arrival order.
  const incoming = new Map<number, CallSummary>();
  for (const c of stored) incoming.set(c.id, c);
  for (const c of updated) incoming.set(c.id, c);
  const minLoaded = state.items.length ? state.items[state.items.length - 1].id : Infinity;
  let total = state.total;
  let undecided = false;
  for (const [id, c] of incoming) {
    const had = byId.has(id);
    const matches = matchesFilters(c, state.filters);
    if (matches === null) {
      // A body never changes: a call in the list stays; a new one is the engine's to place.
      if (had) byId.set(id, c);
      else if (state.next === null || id > minLoaded) undecided = true;
    } else if (matches) {
      // A call below the loaded window belongs to a page not fetched yet; paging will bring it.
      if (!had && state.next !== null && id < minLoaded) continue;
      if (!had) total++;
      byId.set(id, c);
    } else if (had && id !== state.keepId) {
      byId.delete(id);
      total--;
    } else if (had) {
      byId.set(id, c);
    }
  }
  const items = [...byId.values()].sort((a, b) => b.id - a.id);
  return { items, total: Math.max(total, items.length), undecided };
}
