import type { SendResult } from '../dispatcher/http-sender';
import type { Classification } from '../dispatcher/classify';
import { CLASSIC_TIMEOUT_MS } from '../../../shared/actions/retry-classes';

/**
 * How Segment's Classic Webhooks destination would treat this answer (SPEC §4, README "Retries"):
 * 2xx delivered; 5xx, 408, 429, timeouts and connection errors retried for up to 4 hours; other
 * 4xx not retried, so the event is lost; 3xx not followed; TLS errors not retried. The class comes
 * from the dispatcher's own classify(); an answer slower than 5 s is one Segment never sees.
 */
export function describeTreatment(r: SendResult, c: Classification): string {
  if (r.errorCode === null && r.status !== null && r.durationMs > CLASSIC_TIMEOUT_MS) {
    return `answered after ${r.durationMs} ms: Segment times out at ${CLASSIC_TIMEOUT_MS} ms and retries it for up to 4 h`;
  }
  if (c.outcome === 'success') return `delivered (${c.reason})`;
  if (c.outcome === 'retryable') return `retried by Segment for up to 4 h (${c.reason})`;
  if (r.tlsError) return `refused by Segment: ${c.reason}`;
  if (r.status !== null && r.status >= 300 && r.status < 400) return `not delivered: ${c.reason}`;
  if (r.status !== null && r.status >= 400 && r.status < 500) return `not retried: Segment drops the event (${c.reason})`;
  return `not delivered: ${c.reason}`;
}
