import { useEffect } from 'react';
import type { Source } from '../../../shared/types';
import { CopyButton } from '../../components/copy-button';
import { formatTime } from '../../components/format';
import { useApp, useAppStore } from '../../store-context';

/** The two ways a web page's analytics.js 2.0 is pointed at the lab: only the host changes. */
export function browserSdkLines(collector: string, writeKey: string): { snippet: string; cdnURL: string } {
  return {
    snippet: `${collector}/analytics.js/v1/${writeKey}/analytics.min.js`,
    cdnURL: `AnalyticsBrowser.load({ writeKey: '${writeKey}', cdnURL: '${collector}' })`,
  };
}

function SourceLines({ source, collector }: { source: Source; collector: string }) {
  const lines = browserSdkLines(collector, source.writeKey);
  return (
    <div className="sdk-source" data-testid={`sdk-source-${source.id}`}>
      <h4>{source.name}</h4>
      <div className="row">
        <span className="muted small-text">snippet host</span>
        <code className="ellipsis" data-testid={`sdk-snippet-${source.id}`}>{lines.snippet}</code>
        <CopyButton text={lines.snippet} testId={`sdk-copy-snippet-${source.id}`} />
      </div>
      <div className="row">
        <span className="muted small-text">npm</span>
        <code className="ellipsis" data-testid={`sdk-cdnurl-${source.id}`}>{lines.cdnURL}</code>
        <CopyButton text={lines.cdnURL} testId={`sdk-copy-cdnurl-${source.id}`} />
      </div>
    </div>
  );
}

/**
 * Client screen, "Browser SDK": what to change in a web page so its real analytics.js sends here,
 * and the counters analytics.js posted about itself to /v1/m (never stored as calls).
 */
export function BrowserSdk() {
  const store = useAppStore();
  const collector = useApp((s) => s.health?.collectorUrl ?? null);
  const sources = useApp((s) => s.sources);
  const lib = useApp((s) => s.libraryMetrics);
  const error = useApp((s) => s.libraryMetricsError);
  useEffect(() => {
    void store.getState().loadLibraryMetrics();
  }, [store]);
  return (
    <section className="browser-sdk" data-testid="browser-sdk">
      <h3>Browser SDK (analytics.js 2.0)</h3>
      <div className="muted small-text">
        The collector serves{' '}
        <code data-testid="sdk-version">{lib?.analyticsNext ? `@segment/analytics-next ${lib.analyticsNext.version}` : '@segment/analytics-next (not found)'}</code>
        , its settings and its chunks. In the standard snippet, replace <code>https://cdn.segment.com</code> with the collector; or give{' '}
        <code>AnalyticsBrowser.load</code> the collector as <code>cdnURL</code>. Calls then arrive here from the page, unpatched.
      </div>
      {!collector ? (
        <div className="muted">Collector address not known yet.</div>
      ) : sources.length === 0 ? (
        <div className="muted">No source yet: create one in Destinations.</div>
      ) : (
        sources.map((s) => <SourceLines key={s.id} source={s} collector={collector} />)
      )}
      <div className="row">
        <h4>Library metrics (POST /v1/m)</h4>
        <span className="spacer" />
        <button type="button" className="small" data-testid="sdk-metrics-refresh" onClick={() => void store.getState().loadLibraryMetrics()}>
          Refresh
        </button>
      </div>
      {error && <div className="notice error">{error}</div>}
      {lib && lib.metrics.length > 0 ? (
        <table className="table" data-testid="sdk-metrics">
          <thead>
            <tr>
              <th>metric</th>
              <th>library</th>
              <th className="num">count</th>
            </tr>
          </thead>
          <tbody>
            {lib.metrics.map((m) => (
              <tr key={`${m.metric}|${m.library}|${m.libraryVersion}`}>
                <td className="mono">{m.metric}</td>
                <td>{[m.library, m.libraryVersion].filter(Boolean).join(' ') || '—'}</td>
                <td className="num">{m.count}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <div className="muted small-text" data-testid="sdk-metrics-empty">
          No metrics received since {lib ? formatTime(lib.since) : 'start'}. analytics.js samples them (the settings say 10 %) and posts every 30 s; version
          1.84 posts them over https unless the page loads with <code>{"integrations: { 'Segment.io': { protocol: 'http' } }"}</code>, so a plain
          http collector sees them only then.
        </div>
      )}
      {lib && lib.overflow > 0 && <div className="muted small-text">{lib.overflow} more not kept (at most 500 distinct counters).</div>}
    </section>
  );
}
