import { EmptyState } from '../../components/field';
import { CopyButton } from '../../components/copy-button';
import { useApp, useAppShallow, useAppStore } from '../../store-context';
import { CallList } from './call-list';
import { InspectorSplit } from './inspector-split';
import { FiltersBar } from './filters-bar';
import { ExportMenu } from '../../components/export-menu';
import { TimeWarpControl } from '../../components/time-warp';
import { BulkActions } from './bulk-actions';
import { LoadError } from '../../components/load-error';

function NoCalls() {
  const { filtered, collector, hasSources } = useAppShallow((s) => ({
    filtered: Boolean(s.filters.status || s.filters.urlState || s.filters.type || s.filters.sourceId || s.filters.q || s.filters.violations),
    collector: s.health?.collectorUrl ?? null,
    hasSources: s.sources.length > 0,
  }));
  const store = useAppStore();
  // A search of the calls' fields found nothing: the term may be inside a body (slower, so not by default).
  const fieldsMiss = useApp((s) => (s.filters.q?.trim() && !s.filters.body ? s.filters.q.trim() : null));
  if (filtered) {
    return (
      <EmptyState title="No call matches these filters" testId="inspector-empty">
        {fieldsMiss ? (
          <p data-testid="search-bodies-offer">
            No call&apos;s user, event or name, or ids match &ldquo;{fieldsMiss}&rdquo;.{' '}
            <button type="button" className="primary" data-testid="search-bodies" onClick={() => store.getState().setFilters({ body: true })}>
              Search inside bodies
            </button>
          </p>
        ) : null}
        <button type="button" onClick={() => store.getState().setFilters({ status: undefined, urlState: undefined, type: undefined, sourceId: undefined, q: '', violations: undefined })}>
          Clear filters
        </button>
      </EmptyState>
    );
  }
  return (
    <EmptyState title="No calls yet" testId="inspector-empty">
      <ol>
        {hasSources ? null : (
          <li>
            Create a source in <a href="#/destinations">Destinations</a> and add your receiver URL.
          </li>
        )}
        <li>
          Build a call in <a href="#/compose">Compose</a> and press <b>Send now</b>,
        </li>
        <li>
          or point any Segment SDK at the collector{' '}
          {collector ? (
            <>
              <code>{collector}</code> <CopyButton text={collector} />
            </>
          ) : null}{' '}
          with the source's write key.
        </li>
      </ol>
      <p className="muted">Each call appears here live, with every attempt made to each receiver URL.</p>
    </EmptyState>
  );
}

export function InspectorScreen() {
  const store = useAppStore();
  // A first load, or one for other filters, shows the list's frame; a reload of the same list keeps what is shown (an empty state
  // unmounted for the load's moment lost its Copy button's feedback, found by a CI run under load).
  const { count, loading, error } = useAppShallow((s) => ({ count: s.calls.length, loading: s.callsLoading && !s.callsRefreshing, error: s.callsError }));
  return (
    <div className="screen inspector-screen" data-testid="screen-inspector">
      {/* Named for screen readers (and focused when the palette brings one here with no rows yet); the filters say the rest. */}
      <h1 className="sr-only">Inspector</h1>
      <div className="inspector-head">
        <FiltersBar />
        <TimeWarpControl compact testId="inspector-time-warp" />
        <ExportMenu />
      </div>
      {error ? <LoadError what="calls" error={error} onRetry={() => void store.getState().loadCalls()} testId="calls-error" /> : null}
      <InspectorSplit
        list={(cursor, setCursor) =>
          // Under a failed load "No calls yet" would be untrue: the error above says what to do.
          count === 0 && !loading ? error ? <div /> : <NoCalls /> : <CallList cursor={cursor} onCursor={setCursor} footer={<BulkActions />} />
        }
      />
    </div>
  );
}
