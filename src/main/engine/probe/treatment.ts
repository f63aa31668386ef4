import type { SendResult } from '../dispatcher/http-sender';
import type { Classification } from '../dispatcher/classify';
import { CLASSIC_TIMEOUT_MS } from '../../../shared/actions/retry-classes';

/**
 * How Segment's Classic Webhooks destination would treat this answer (SPEC §4, README "Retries"):
 * 2xx delivered; 5xx, 408, 429, timeouts and connection errors retried for up to 4 hours; other
 * 4xx not retried, so the event is lost; 3xx not followed; TLS errors not retried. The class comes
 * from the dispatcher's own classify(); an answer slower than 5 s is one Segment never sees. A
 * refusal the probe asked for (a bad signature) is said to be one: "Segment drops the event" read
 * as a fault there (issue 40). No parentheses: reports show it inside one pair already.
 */
/** What a ready receiver answers a probe's request; 'either': a diagnostic request, any HTTP answer is fine (it tells where a refusal comes from). */
export type ProbeExpectation = '2xx' | '4xx' | 'either';

export function describeTreatment(r: SendResult, c: Classification, expected: ProbeExpectation): string {
  if (r.errorCode === null && r.status !== null && r.durationMs > CLASSIC_TIMEOUT_MS) {
    return `answered after ${r.durationMs} ms: Segment times out at ${CLASSIC_TIMEOUT_MS} ms and retries it for up to 4 h`;
  }
  const refused = r.status !== null && r.status >= 400 && r.status < 500;
  if (refused && expected === '4xx') return 'refused, as expected';
  if (refused && expected === 'either') return 'refused, which is right here too';
  if (c.outcome === 'success') return 'delivered';
  // The answer's status is shown beside it: the reason is said only when there was none.
  if (c.outcome === 'retryable') return r.status === null ? `retried by Segment for up to 4 h: ${c.reason}` : 'retried by Segment for up to 4 h';
  if (r.tlsError) return `refused by Segment: ${c.reason}`;
  // "HTTP 307: redirect not followed (no Location)": the status is beside it, the parentheses go.
  if (r.status !== null && r.status >= 300 && r.status < 400) return `not delivered: ${c.reason.replace(/^HTTP \d+: /, '').replace(/ \((.*)\)$/, ', $1')}`;
  if (refused) return 'not retried: Segment drops the event';
  return `not delivered: ${c.reason}`;
}
