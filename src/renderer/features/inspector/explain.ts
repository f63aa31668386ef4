import type { Attempt } from '../../../shared/types';
import { tlsCodeText } from '../../../shared/tls-codes';
import { connectCodeText } from '../../../shared/connect-codes';

// Attempt failures in words, from the facts the attempt recorded (timeoutMs, tlsError, connectError),
// never from its message. Which codes are TLS or connection errors, and what each means, are the
// dispatcher's own tables (src/shared/tls-codes.ts, src/shared/connect-codes.ts).

/** What the attempt is seen beside. */
export interface AttemptContext {
  /** Another URL of the call answered 2xx in this attempt's round. */
  deliveredByOther?: boolean;
  /** The delivery expired after this attempt: its URL's retry window is over. */
  lastBeforeExpiry?: boolean;
}

/**
 * What follows a retryable failure (SPEC §4): once one URL succeeds the call counts as delivered and
 * the URLs that failed in that round are not retried; a replay is sent once, whatever it gets.
 */
function retryNote(a: Attempt, ctx: AttemptContext): string {
  if (ctx.deliveredByOther) {
    return 'Not retried: another URL of this call answered 2xx in the same round, so the call counts as delivered and the URLs that failed in that round are not tried again. Replay this URL to send it again.';
  }
  if (ctx.lastBeforeExpiry) return 'Not retried: the retry window is over, so the delivery expired.';
  if (a.trigger === 'probe') return 'A receiver check’s request is sent once and never retried.';
  if (a.trigger !== 'scheduled') return 'A replay is sent once and not retried; the delivery’s own schedule is unchanged.';
  return 'Retried on the schedule.';
}

/**
 * The attempt's timeout in words ("5 s", "10 s", "300 ms"), as it recorded it (timeoutMs): Classic
 * attempts have the retry schedule's, Actions attempts 10 s. "the time limit" when it recorded none
 * (a timeout whose limit an older attempt did not say).
 */
export function attemptTimeout(a: Pick<Attempt, 'timeoutMs'>): string {
  const ms = a.timeoutMs;
  if (ms === null) return 'the time limit';
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** One sentence on what happened, or null for a plain HTTP answer. */
export function explainAttempt(a: Attempt, ctx: AttemptContext = {}): string | null {
  if (a.timedOut) {
    const t = attemptTimeout(a);
    return `No answer within ${t}: the receiver must send its response within ${t} of the request. ${retryNote(a, ctx)}`;
  }
  if (a.tlsError) {
    const { code } = a.tlsError;
    return `TLS error (${code}): ${tlsCodeText(code)}. No HTTP request was sent. TLS errors are not retried; use a certificate the system trusts, or http: for local testing.`;
  }
  if (a.connectError) {
    const { code } = a.connectError;
    return `${connectCodeText(code) ?? a.errorMessage ?? 'the connection failed'} (${code}). ${retryNote(a, ctx)}`;
  }
  const code = a.errorCode;
  if (code) return `${a.errorMessage ?? 'request failed'} (${code}).`;
  const s = a.responseStatus;
  if (s === null) return a.errorMessage;
  if (s >= 200 && s < 300) return null;
  if (s >= 300 && s < 400) return `HTTP ${s}: redirects are not followed; a 3xx counts as a failure and is not retried.`;
  if (s === 408 || s === 429) return `HTTP ${s}: ${s === 429 ? 'too many requests (Retry-After is honoured)' : 'request timeout'}. ${retryNote(a, ctx)}`;
  // Which statuses are retried depends on the rule the attempt ran under (Actions: 423 is, 501 is not); the outcome says.
  if (s === 423 && a.outcome === 'retryable') return `HTTP 423: locked; Webhooks (Actions) retries it. ${retryNote(a, ctx)}`;
  if (s >= 500 && a.outcome === 'failed') return `HTTP ${s}: not retried: Webhooks (Actions) does not retry ${s === 501 ? '501 Not Implemented, which a retry will not change' : `HTTP ${s}`}.`;
  if (s >= 500) return `HTTP ${s}: server error. ${retryNote(a, ctx)}`;
  return `HTTP ${s}: a 4xx other than 408/429 is not retried (discarded).`;
}

export function outcomeLabel(a: Attempt): string {
  if (a.outcome === 'success') return `${a.responseStatus} OK`;
  if (a.timedOut) return 'timed out';
  if (a.errorCode) return a.errorCode;
  return a.responseStatus !== null ? `HTTP ${a.responseStatus}` : 'error';
}
