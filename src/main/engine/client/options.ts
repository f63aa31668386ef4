import { DEFAULTS } from './constants';
import { debugEnabled } from './logger';
import type { AnalyticsOptions, ResolvedOptions } from './types';

/** The longest a timer can wait: Node fires a setTimeout of more than this after 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

function positiveInt(name: string, value: unknown, fallback: number, min = 1, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `≥ ${min} and ≤ ${max}`;
    throw new RangeError(`analytics option ${name} must be an integer ${range}, got ${JSON.stringify(value)}`);
  }
  return value;
}

function endpointOf(value: unknown): string {
  if (value === undefined) return DEFAULTS.endpoint;
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw new TypeError(`analytics option endpoint must be an absolute http(s) URL, got ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`analytics option endpoint must be an http: or https: URL, got ${JSON.stringify(value)}`);
  }
  // `{endpoint}/v1/batch` would land in the query or fragment instead of the path.
  if (url.search !== '' || url.hash !== '' || /[?#]/.test(String(value))) {
    throw new TypeError(`analytics option endpoint must not have a query string or fragment (requests go to {endpoint}/v1/batch), got ${JSON.stringify(value)}`);
  }
  // `http://host:8787/` and `http://host:8787` both mean the collector root.
  return String(value).replace(/\/+$/, '');
}

function debugOf(options: AnalyticsOptions): boolean {
  const { debug, logger } = options;
  if (debug !== undefined && typeof debug !== 'boolean') throw new TypeError(`analytics option debug must be true or false, got ${JSON.stringify(debug)}`);
  // Checked here too: without log() every report (debug lines, listeners that threw) would vanish.
  if (logger !== undefined && typeof (logger as { log?: unknown } | null)?.log !== 'function') {
    throw new TypeError('analytics option logger must have a log(line) function (console works)');
  }
  return debug ?? debugEnabled(options.env ?? process.env);
}

/** Apply defaults and refuse nonsense up front, so a typo fails at construction, not at the first flush. */
export function resolveOptions(options: AnalyticsOptions): ResolvedOptions {
  return {
    endpoint: endpointOf(options.endpoint),
    flushAt: positiveInt('flushAt', options.flushAt ?? options.size, DEFAULTS.flushAt),
    flushAfter: positiveInt('flushAfter', options.flushAfter, DEFAULTS.flushAfter, 1, MAX_TIMER_MS),
    maxRetries: positiveInt('maxRetries', options.maxRetries, DEFAULTS.maxRetries, 0),
    httpTimeout: positiveInt('httpTimeout', options.httpTimeout, DEFAULTS.httpTimeout, 1, MAX_TIMER_MS),
    maxQueueSize: positiveInt('maxQueueSize', options.maxQueueSize, DEFAULTS.maxQueueSize),
    concurrency: positiveInt('concurrency', options.concurrency, DEFAULTS.concurrency),
    debug: debugOf(options),
  };
}
