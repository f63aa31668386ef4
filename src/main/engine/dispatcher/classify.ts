import type { AttemptVerdict } from '../store/delivery-transition';
import type { SendResult } from './http-sender';
import { retriesStatus, type RetryRule } from '../../../shared/actions/retry-classes';
import { headerValue } from '../../../shared/header-value';

/** How an answer is judged: the verdict a delivery's transition reads (store/delivery-transition.ts). */
export type Classification = AttemptVerdict;

// Errors raised before anything reached the network: the same request would fail the same way.
const REQUEST_ERRORS = new Set([
  'ERR_INVALID_URL', 'UND_ERR_INVALID_ARG', 'UND_ERR_NOT_SUPPORTED', 'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH',
  'ERR_INVALID_ARG_TYPE', 'ERR_INVALID_ARG_VALUE', 'ERR_INVALID_HTTP_TOKEN', 'ERR_INVALID_CHAR',
]);

/**
 * SPEC §4 outcome of one attempt. Success is a 2xx that arrived in full within the timeout.
 * Retried: timeouts, connection errors, and the statuses `rule` retries (shared/actions/
 * retry-classes.ts): Classic 408, 429, 5xx; Actions 408, 423, 429, 5xx but 501. Not retried by
 * either: other 4xx, 3xx (redirects are not followed), TLS failures. Pure: `now` (epoch ms) is only
 * used to turn an HTTP-date Retry-After into a delay.
 */
export function classify(r: SendResult, now: number, rule: RetryRule = 'classic'): Classification {
  if (r.timedOut) return { outcome: 'retryable', reason: r.errorMessage ?? 'timed out' };
  if (r.tlsError) return { outcome: 'failed', reason: `${r.errorMessage ?? r.errorCode}; TLS errors are not retried` };
  if (r.errorCode !== null) {
    // Covers errors after the status line too (reset mid-body): the receiver's answer is incomplete.
    const reason = r.errorMessage ?? r.errorCode;
    if (REQUEST_ERRORS.has(r.errorCode)) return { outcome: 'failed', reason: `request not sent: ${reason}` };
    return { outcome: 'retryable', reason };
  }
  const s = r.status;
  if (s === null) return { outcome: 'retryable', reason: 'no response' };
  if (s >= 200 && s < 300) return { outcome: 'success', reason: `HTTP ${s}` };
  if (s >= 300 && s < 400) {
    const location = header(r, 'location');
    const to = location ? ` to ${location}` : ' (no Location)';
    return { outcome: 'failed', reason: `HTTP ${s}: redirect not followed${to}` };
  }
  if (s >= 400 && retriesStatus(rule, s)) {
    const out: Classification = { outcome: 'retryable', reason: `HTTP ${s}` };
    // RFC 9110 §10.2.3 gives Retry-After meaning on 503 as well as 429.
    if (s === 429 || s === 503) {
      const after = parseRetryAfter(header(r, 'retry-after'), now);
      if (after !== undefined) {
        out.retryAfterMs = after;
        out.reason += `, Retry-After ${after} ms`;
      }
    }
    return out;
  }
  // Only the Actions rule leaves a 5xx out: 501 Not Implemented will not change on a retry.
  if (s >= 500) return { outcome: 'failed', reason: `discarded: HTTP ${s} is not retried by Actions' retry classes` };
  if (s >= 400) return { outcome: 'failed', reason: `discarded: 4xx (HTTP ${s})` };
  return { outcome: 'failed', reason: `unexpected HTTP ${s}` };
}

/** Retry-After as delta-seconds or an HTTP-date (RFC 9110 §10.2.3) → ms from `now`, never negative. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  // Date.parse accepts much looser input; require an HTTP-date's shape (IMF-fixdate, RFC 850, asctime).
  const gmt = /GMT$/.test(v);
  if (!gmt && !/^[A-Za-z]{3} /.test(v)) return undefined;
  // asctime carries no zone but means UTC; Date.parse would read it as local time.
  const at = Date.parse(gmt ? v : `${v} GMT`);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

// undici lowercases names; results built elsewhere (tests, stored rows) may not.
const header = (r: SendResult, name: string): string | undefined => (r.responseHeaders === null ? undefined : headerValue(r.responseHeaders, name));
