/** One counter analytics.js reported at POST /v1/m, summed since the lab started. */
export interface LibraryMetricCount {
  metric: string;
  /** Its `library` tag (analytics.js), null when absent. */
  library: string | null;
  /** Its `library_version` tag (next-1.84.3, npm:next-1.84.3), null when absent. */
  libraryVersion: string | null;
  count: number;
}

/** What getLibraryMetrics answers: the browser SDK the collector serves, and what it reported. */
export interface LibraryMetrics {
  /** The @segment/analytics-next copy the collector serves (null when the package cannot be found). */
  analyticsNext: { version: string } | null;
  since: string;
  /** POST /v1/m requests counted. */
  reports: number;
  lastReportAt: string | null;
  metrics: LibraryMetricCount[];
  /** Counts not kept because the distinct-key bound was reached. */
  overflow: number;
}
