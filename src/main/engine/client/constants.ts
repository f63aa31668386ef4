// Limits and defaults of the batching client (SPEC §3 limits, SPEC §5 surface).
import { DEFAULT_COLLECTOR_URL } from '../../../shared/ports';

/** Reported on every batch envelope as `context.library`. Kept equal to package.json (a unit test checks). */
export const LIBRARY_NAME = 'webhook-lab-client';
export const LIBRARY_VERSION = '0.1.0';

/**
 * The collector's own limits (src/shared/limits.ts), so the client never sends what it would refuse;
 * under the names this package has always exported ("message" is the client's word for a call).
 */
export { MAX_CALL_BYTES as MAX_MESSAGE_BYTES, MAX_BATCH_BYTES, MAX_BATCH_ITEMS as MAX_BATCH_MESSAGES } from '../../../shared/limits';

export const DEFAULTS = {
  endpoint: DEFAULT_COLLECTOR_URL,
  flushAt: 20,
  flushAfter: 5000,
  maxRetries: 10,
  httpTimeout: 10_000,
  maxQueueSize: 10_000,
  concurrency: 4,
} as const;

/** Backoff between attempts of one batch: 100 ms doubling, capped at 10 s (SPEC §5 decision). */
export const BACKOFF_BASE_MS = 100;
export const BACKOFF_CAP_MS = 10_000;

export function backoffDelay(retry: number): number {
  // retry is 1-based: the first retry waits BACKOFF_BASE_MS.
  return Math.min(BACKOFF_BASE_MS * 2 ** (retry - 1), BACKOFF_CAP_MS);
}
