import type { LibraryMetrics as LibraryMetricsView, LibraryMetricCount } from '../../../shared/library-metrics';
import { formatTimestamp } from '../../../shared/timestamp';

/** Distinct (metric, library, version) keys kept; past this, reports are only counted as overflow. */
export const MAX_METRIC_KEYS = 500;
const MAX_TEXT = 200;

const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v.slice(0, MAX_TEXT) : null);

/**
 * What analytics.js reports about itself at POST /v1/m, counted in memory since start. Never stored as
 * calls: these are the library's own counters (`analytics_js.invoke` per call type, errors), not
 * the user's events. Bounded, so a page that invents metric names cannot grow the process.
 */
export class LibraryMetrics {
  private readonly counts = new Map<string, LibraryMetricCount>();
  private reports = 0;
  private overflow = 0;
  private lastAt: string | null = null;

  constructor(
    private readonly now: () => number,
    private readonly startedAt = now(),
  ) {}

  /** Counts one POST /v1/m body; returns how many series items were counted, or an error text. */
  record(body: unknown): { counted: number } | { error: string } {
    const series = (body as { series?: unknown } | null)?.series;
    if (!Array.isArray(series)) return { error: 'body must be {"series": [...]}' };
    this.reports++;
    this.lastAt = formatTimestamp(this.now());
    let counted = 0;
    for (const item of series) {
      if (item === null || typeof item !== 'object') continue;
      const { metric, value, tags } = item as { metric?: unknown; value?: unknown; tags?: Record<string, unknown> };
      const name = text(metric);
      if (!name) continue;
      const library = text(tags?.library);
      const libraryVersion = text(tags?.library_version);
      const by = typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 1;
      const key = JSON.stringify([name, library, libraryVersion]);
      let entry = this.counts.get(key);
      if (!entry) {
        if (this.counts.size >= MAX_METRIC_KEYS) {
          this.overflow += by;
          continue;
        }
        entry = { metric: name, library, libraryVersion, count: 0 };
        this.counts.set(key, entry);
      }
      entry.count += by;
      counted++;
    }
    return { counted };
  }

  snapshot(): Omit<LibraryMetricsView, 'analyticsNext'> {
    return {
      since: formatTimestamp(this.startedAt),
      reports: this.reports,
      lastReportAt: this.lastAt,
      metrics: [...this.counts.values()].map((m) => ({ ...m })).sort((a, b) => b.count - a.count || a.metric.localeCompare(b.metric)),
      overflow: this.overflow,
    };
  }
}
