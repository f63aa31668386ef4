import { z } from 'zod';
import type { Attempt, CallDetail } from '../../shared/types';
import { forwardingOutput } from '../../shared/api.contract';
import { forwardingText } from '../../shared/forwarding';
import { headerValue } from '../../shared/header-value';

// explain_call (issue 39): why a call was not forwarded, failed or is retrying, in sentences built
// only from the facts the lab keeps with it (its status and drop reason, the forwarding verdict,
// its plan check, each delivery's state and its last attempt's facts). Nothing is guessed: where the
// lab cannot know (why a receiver answered 401), it says what the receiver answered and what to check.

export const explanationOutput = z.object({
  id: z.number().int(),
  /** In one word: delivered, not_forwarded, failed, expired, retrying, pending, in_flight, canceled, dropped, blocked. */
  outcome: z.string(),
  /** The explanation, a sentence a line, most important first. */
  explanation: z.array(z.string()),
  forwarding: forwardingOutput,
  deliveries: z.array(
    z.object({
      id: z.number().int(),
      kind: z.string(),
      mapping: z.string().nullable(),
      state: z.string(),
      attempts: z.number().int(),
      nextAttemptAt: z.string().nullable(),
      lastAttempt: z.string().nullable(),
    }),
  ),
});
export type Explanation = z.infer<typeof explanationOutput>;

/** One attempt's facts in words: what came back, or why nothing did. */
export function attemptFacts(a: Attempt): string {
  const where = `${a.method} ${a.url} (round ${a.round}, ${a.trigger})`;
  if (a.timedOut) return `${where}: timed out after ${a.timeoutMs ?? a.durationMs} ms without a whole answer`;
  if (a.tlsError) return `${where}: the TLS handshake failed (${a.tlsError.code}: ${a.tlsError.kind}); no HTTP request was sent`;
  if (a.connectError) return `${where}: no connection (${a.connectError.code}${a.errorMessage ? `: ${a.errorMessage}` : ''})`;
  if (a.responseStatus === null) return `${where}: no answer${a.errorMessage ? ` (${a.errorMessage})` : ''}`;
  const body = a.responseBody ? `, body ${JSON.stringify(a.responseBody.length > 200 ? `${a.responseBody.slice(0, 200)}…` : a.responseBody)}` : '';
  return `${where}: answered ${a.responseStatus}${body}`;
}

/** What a receiver's status means for the Webhooks destination (SPEC §4), and what to look at. */
function statusAdvice(status: number, signed: boolean, callId: number, attemptId: number): string | null {
  if (status === 401 || status === 403) {
    return signed
      ? `The receiver refused it (${status}). The lab signed it: if the receiver checks X-Signature (HMAC-SHA1, lowercase hex, over the exact bytes sent) or webhook-signature, run verify_signature {"callId": ${callId}, "attemptId": ${attemptId}, "secret": <the receiver's secret>} to see whether the signature it sent matches; a receiver that re-serializes the JSON before hashing, or holds another secret, fails this way.`
      : `The receiver refused it (${status}) and the lab sent no signature (the source has no shared secret): check what the receiver expects (a secret, a header of the URL's).`;
  }
  if (status >= 300 && status < 400) return `The receiver redirected (${status}): redirects are not followed, and a 3xx is a failure that is not retried; give the final URL.`;
  if (status === 408 || status === 429) return `${status} is retried (429 honours Retry-After within the window).`;
  if (status >= 500) return `${status} is retried until the window (4 h by default) ends.`;
  if (status >= 400) return `${status} is not retried: a 4xx other than 408 and 429 discards the delivery (as Segment does).`;
  return null;
}

const signedAttempt = (a: Attempt) => !!(a.signature || headerValue(a.requestHeaders, 'webhook-signature') !== undefined);

export function explainCall(d: CallDetail): Explanation {
  const c = d.call;
  const lines: string[] = [];
  const deliveries = d.deliveries.map((del) => {
    const last = del.attempts.at(-1);
    return { id: del.id, kind: del.kind, mapping: del.mapping, state: del.state, attempts: del.attemptCount, nextAttemptAt: del.nextAttemptAt, lastAttempt: last ? attemptFacts(last) : null };
  });
  let outcome: string;
  if (c.status === 'dropped') {
    outcome = 'dropped';
    lines.push(forwardingText(d.forwarding, c.dropReason) ?? 'Dropped.');
  } else if (c.status === 'blocked') {
    outcome = 'blocked';
    lines.push(forwardingText(d.forwarding, d.planCheck?.blocked ?? c.dropReason) ?? 'Blocked by its tracking plan.');
  } else if (!d.forwarding.forwarded) {
    outcome = 'not_forwarded';
    lines.push(forwardingText(d.forwarding) ?? 'Not forwarded.');
  } else {
    // The worst state first: what needs explaining.
    const order = ['failed', 'expired', 'retrying', 'in_flight', 'pending', 'canceled', 'delivered'];
    const states = d.deliveries.map((del) => del.state as string);
    outcome = order.find((s) => states.includes(s)) ?? (states.length === 0 ? 'pending' : states[0]);
    if (states.length === 0) lines.push('Forwarded: it waits in an Actions mapping\'s batch, not yet sent.');
  }
  if (d.violations && d.violations.length > 0) {
    lines.push(`Its tracking plan${d.planCheck?.planName ? ` (${d.planCheck.planName})` : ''} found ${d.violations.length} violation${d.violations.length === 1 ? '' : 's'}: ${d.violations.slice(0, 3).map((v) => `${v.path || '(the call)'}: ${v.message}`).join('; ')}${d.violations.length > 3 ? '; …' : ''}.`);
  }
  for (const del of d.deliveries) {
    const name = del.kind === 'actions' ? `Actions mapping ${JSON.stringify(del.mapping)} (delivery ${del.id})` : `Delivery ${del.id}`;
    // Each URL's last attempt: a delivery to several URLs fails or retries for each its own way.
    const lastByUrl = new Map<number, Attempt>();
    for (const a of del.attempts) lastByUrl.set(a.urlIndex, a);
    const lasts = [...lastByUrl.values()];
    const facts =
      lasts.length === 0 ? '' : lasts.length === 1 ? ` Last attempt: ${attemptFacts(lasts[0])}.` : ` Last attempt to each URL: ${lasts.map((a) => `URL ${a.urlIndex + 1}: ${attemptFacts(a)}`).join('; ')}.`;
    const advices = [...new Set(lasts.flatMap((a) => (a.responseStatus != null ? [statusAdvice(a.responseStatus, signedAttempt(a), c.id, a.id)] : [])).filter((x): x is string => x !== null))];
    const advice = advices.length > 0 ? advices.join(' ') : null;
    switch (del.state) {
      case 'delivered': {
        lines.push(`${name} was delivered${del.deliveredAt ? ` at ${del.deliveredAt}` : ''} after ${del.attemptCount} attempt${del.attemptCount === 1 ? '' : 's'}.`);
        // Several URLs: one success delivers the call, and the others' failures are not retried (SPEC §4).
        for (const a of lasts) {
          if (a.outcome === 'success') continue;
          const advice = a.responseStatus != null ? statusAdvice(a.responseStatus, signedAttempt(a), c.id, a.id) : null;
          lines.push(`Not there: ${attemptFacts(a)} (another URL delivered the call, so this one is not retried).${advice ? ` ${advice}` : ''}`);
        }
        break;
      }
      case 'failed':
        lines.push(`${name} failed and will not be retried.${facts}${advice ? ` ${advice}` : ''}${lasts.some((a) => a.tlsError) ? ' TLS errors are not retried: the receiver needs a certificate the lab trusts.' : ''}`);
        break;
      case 'expired':
        lines.push(`${name} expired: its retries ran out of the retry window after ${del.attemptCount} attempts.${facts}${advice ? ` ${advice}` : ''}`);
        break;
      case 'retrying':
        lines.push(`${name} is retrying: attempt ${del.attemptCount} failed, the next round is at ${del.nextAttemptAt ?? 'a time not known yet'}.${facts}${advice ? ` ${advice}` : ''}`);
        break;
      case 'canceled':
        lines.push(`${name} was canceled before it finished${del.lastError ? `: ${del.lastError}` : ''} (its source was deleted, or its Webhooks turned off).`);
        break;
      case 'in_flight':
        lines.push(`${name} is being sent now (round ${del.round + 1}).${facts}`);
        break;
      default:
        lines.push(`${name} is ${del.state}${del.nextAttemptAt ? `, next round at ${del.nextAttemptAt}` : ''}.${facts}`);
    }
  }
  return { id: c.id, outcome, explanation: lines, forwarding: d.forwarding, deliveries };
}
