import { useEffect, useState } from 'react';
import { CALL_TYPES } from '../../../shared/types';
import { DELIVERY_FILTERS, URL_STATE_FILTERS } from '../../../shared/delivery-filters';
import { URL_STATE_LABELS } from '../../../shared/url-outcome';
import { useApp, useAppShallow, useAppStore } from '../../store-context';
import type { StatusFilter, UrlStateFilter } from '../../../shared/delivery-filters';
import { PROBE_SOURCE_NAME } from '../../../shared/probe-source';

export function FiltersBar() {
  const store = useAppStore();
  const filters = useApp((s) => s.filters);
  const { paused, missed, sources } = useAppShallow((s) => ({
    paused: s.paused,
    missed: s.missedWhilePaused,
    sources: s.sources,
  }));
  const [q, setQ] = useState(filters.q ?? '');
  // Search as you type, but query the engine once typing pauses.
  useEffect(() => {
    if ((filters.q ?? '') === q) return;
    const t = setTimeout(() => store.getState().setFilters({ q }), 250);
    return () => clearTimeout(t);
  }, [q, filters.q, store]);
  const s = store.getState();
  return (
    <div className="filters-bar">
      <select aria-label="Status" data-testid="filter-status" value={filters.status ?? ''} onChange={(e) => s.setFilters({ status: (e.target.value || undefined) as StatusFilter | undefined })}>
        <option value="">all statuses</option>
        {DELIVERY_FILTERS.map((f) => (
          <option key={f} value={f}>
            {f.replace('_', ' ')}
          </option>
        ))}
      </select>
      <select
        aria-label="URL outcome"
        title="Calls with at least one URL in this state (a call delivered by one URL can have others failed)"
        data-testid="filter-url-state"
        value={filters.urlState ?? ''}
        onChange={(e) => s.setFilters({ urlState: (e.target.value || undefined) as UrlStateFilter | undefined })}
      >
        <option value="">any URL</option>
        {URL_STATE_FILTERS.map((f) => (
          <option key={f} value={f}>
            URL {URL_STATE_LABELS[f]}
          </option>
        ))}
      </select>
      <select aria-label="Type" data-testid="filter-type" value={filters.type ?? ''} onChange={(e) => s.setFilters({ type: e.target.value || undefined })}>
        <option value="">all types</option>
        {[...CALL_TYPES, 'delete'].map((t) => (
          <option key={t} value={t}>
            {t}
          </option>
        ))}
      </select>
      <select aria-label="Source" data-testid="filter-source" value={filters.sourceId ?? ''} onChange={(e) => s.setFilters({ sourceId: e.target.value || undefined })}>
        <option value="">all sources</option>
        {sources.map((src) => (
          <option key={src.id} value={src.id}>
            {src.name}
          </option>
        ))}
      </select>
      <input
        type="search"
        className="grow"
        aria-label="Search"
        placeholder="Search ids, event, name…"
        title="Any part of userId, anonymousId, messageId, event/name, groupId or previousId, upper or lower case; tick “in bodies” to look inside each call's JSON too (keys and text values)"
        data-testid="filter-search"
        value={q}
        onChange={(e) => setQ(e.target.value)}
      />
      <label className="small-text" title="Also match keys and text values inside each call's JSON as received (slower on large histories)">
        <input type="checkbox" data-testid="filter-search-bodies" checked={filters.body ?? false} onChange={(e) => s.setFilters({ body: e.target.checked || undefined })} /> in bodies
      </label>
      <label className="small-text" title="Only calls their source's tracking plan found violations in">
        <input type="checkbox" data-testid="filter-violations" checked={filters.violations ?? false} onChange={(e) => s.setFilters({ violations: e.target.checked || undefined })} /> violations
      </label>
      {sources.some((src) => src.name === PROBE_SOURCE_NAME) && !filters.sourceId ? (
        <label className="small-text" title="Calls sent by Check a receiver (its source “probe”, about 45 a run): hidden unless ticked">
          <input type="checkbox" data-testid="filter-probe" checked={filters.probe ?? false} onChange={(e) => s.setFilters({ probe: e.target.checked || undefined })} /> probe calls
        </label>
      ) : null}
      <button type="button" data-testid="pause-button" className={paused ? 'primary' : ''} onClick={() => s.setPaused(!paused)}>
        {paused ? `Resume${missed ? ` (${missed} new)` : ''}` : 'Pause'}
      </button>
    </div>
  );
}
