import type { Settings } from '../../../shared/types';
import type { ProbeCheckId, ProbeEvidence } from '../../../shared/probe.contract';
import { buildWebhookBody } from '../../../shared/webhook-body';
import { MAX_CALL_BYTES } from '../../../shared/limits';
import type { ProbeAnswer, ProbeRequest } from './probe-sender';
import { SEGMENT_TIMEOUT_MS } from './probe-sender';
import { deleteCall, probeCall, PROBE_USER } from './calls';

// The checks of issue 25 but `transport` (probe-runner.ts judges it from the first request) and
// `actions`. Each sends its requests (in parallel unless one must follow another), and judges the
// answers; none of them judges time except `latency`, so a slow receiver fails that one only.

export type FinalVerdict = 'pass' | 'fail' | 'warn' | 'skipped';

export interface CheckResult {
  verdict: FinalVerdict;
  detail: string;
  evidence: ProbeEvidence[];
  /** Every validly signed request was refused because of this check's subject, so other checks' failures say so instead of a fix of their own. */
  blocksOthers?: boolean;
}

export interface CheckContext {
  send(req: ProbeRequest): Promise<ProbeAnswer>;
  now(): number;
  settings: Settings;
  hasSecret: boolean;
  hasStandardWebhooksSecret: boolean;
}

export interface CheckDef {
  title: string;
  /** Why it matters and how to fix a failure (one sentence; docs/receiver-check.md says more). */
  why: string;
}

export const CHECK_DEFS: Record<ProbeCheckId, CheckDef> = {
  transport: {
    title: 'Transport',
    why: 'Segment only reaches public URLs and refuses untrusted certificates without retrying; give it an https URL with a certificate from a public CA, answered directly (no redirect).',
  },
  'call-types': {
    title: 'Every call type',
    why: 'Segment sends every type a source receives, and a 4xx loses that call for good; answer 2xx to each type, even those you ignore.',
  },
  signature: {
    title: 'Signature enforced',
    why: 'Without checking X-Signature anyone can post to your receiver; compute HMAC-SHA1 of the raw body bytes with the shared secret, compare in constant time, and answer 401 when it differs or is missing.',
  },
  'standard-webhooks': {
    title: 'Standard Webhooks',
    why: 'webhook-signature covers the id, timestamp and body, and the timestamp stops replays; refuse a bad signature or a timestamp over 5 minutes off, but accept a retry with the same webhook-id, and a webhook-signature listing several signatures (a secret rotation) when any one matches.',
  },
  latency: {
    title: 'Fast acknowledgement',
    why: `Segment waits ${SEGMENT_TIMEOUT_MS / 1000} s for an answer and retries what times out; answer 2xx first and do the work afterwards (a queue), also when 20 requests arrive at once.`,
  },
  duplicates: {
    title: 'Duplicates',
    why: 'Segment delivers at least once, so the same messageId can arrive twice; answer 2xx to a repeat and skip its work (a 5xx, 408 or 429 makes Segment retry it for hours, another 4xx drops it).',
  },
  'retry-classes': {
    title: 'Retry classes',
    why: 'Segment retries 5xx, 408, 429 and timeouts for up to 4 hours and drops other 4xx for good; answer 2xx to any valid call you do not know, and 5xx only for a failure worth retrying.',
  },
  robustness: {
    title: 'Robustness',
    why: 'Payloads grow new fields and versions, reach 32 KB, carry any language and old timestamps; parse leniently and ignore what you do not know instead of refusing the call.',
  },
  ordering: {
    title: 'Ordering',
    why: 'Segment does not promise order (retries arrive late); accept an older call after a newer one and order by timestamp yourself.',
  },
  actions: {
    title: 'Actions mapping',
    why: "An Actions mapping sends its own method and mapped body, and a batch signed over its first event only; verify a batch's X-Signature against that first event.",
  },
};

const two = (e: ProbeEvidence[]) => e.filter((x) => !x.ok);

/** A line per request that did not get the answer a ready receiver gives. */
function misses(e: ProbeEvidence[]): string {
  return two(e)
    .map((x) => `${x.label}: ${answerOf(x)} (${x.treatment})`)
    .join('; ');
}

export function answerOf(e: ProbeEvidence): string {
  return e.status !== null && e.error === null ? `HTTP ${e.status}` : (e.error ?? 'no answer');
}

export async function callTypes(ctx: CheckContext): Promise<CheckResult> {
  const now = ctx.now();
  const reqs: ProbeRequest[] = (['identify', 'track', 'page', 'screen', 'group', 'alias'] as const).map((t) => ({ label: t, expected: '2xx', call: probeCall(t, now) }));
  reqs.push({ label: 'delete (deletion notice, no version)', expected: '2xx', call: deleteCall(now) });
  const evidence = (await Promise.all(reqs.map((r) => ctx.send(r)))).map((a) => a.evidence);
  if (two(evidence).length === 0) return { verdict: 'pass', detail: `all ${evidence.length} call types answered 2xx`, evidence };
  return { verdict: 'fail', detail: `not accepted: ${misses(evidence)}`, evidence };
}

/**
 * The same JSON in other bytes, as other senders write it: `<`, `>`, `&`, U+2028 and U+2029 escaped
 * as \u003c… (Go's encoding/json, what Segment's servers are written in, does so by default) and a
 * whole number written `1.0` (as senders that keep a float's form do). A receiver that verifies
 * JSON.stringify(JSON.parse(body)) computes another HMAC.
 */
export function inOtherBytes(text: string): string {
  const escapes: Record<string, string> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029' };
  return text.replace(/[<>&\u2028\u2029]/g, (c) => escapes[c]!).replace('"probe_ratio":1,', '"probe_ratio":1.0,');
}

/** Set on a signature result whose validly signed requests were refused: the other checks' failures follow from it. */
export const VALID_SIGNATURES_REFUSED = 'validly signed requests were refused';

export async function signature(ctx: CheckContext): Promise<CheckResult> {
  if (!ctx.hasSecret) return { verdict: 'skipped', detail: 'no shared secret given: without one nothing is signed, and anyone can post to the receiver', evidence: [] };
  const now = ctx.now();
  const reqs: ProbeRequest[] = [
    { label: 'tampered body, original X-Signature', expected: '4xx', call: probeCall('track', now), tamperedBody: (b) => ({ ...b, event: 'Order Refunded', probe_tampered: true }) },
    { label: 'wrong X-Signature', expected: '4xx', call: probeCall('track', now), signature: 'wrong' },
    { label: 'no X-Signature', expected: '4xx', call: probeCall('track', now), signature: 'none' },
  ];
  const valid: ProbeRequest[] = [
    { label: 'valid X-Signature', expected: '2xx', call: probeCall('track', now) },
    {
      label: 'valid X-Signature, the same JSON in other bytes (\\u003c escapes as Go writes them, a number as 1.0)',
      expected: '2xx',
      call: probeCall('track', now, { properties: { probe_ratio: 1, probe_text: '<b> & "c" \u2028 end' } }),
      rewriteBody: inOtherBytes,
    },
  ];
  const answers = await Promise.all([...reqs, ...valid].map((r) => ctx.send(r)));
  const evidence = answers.map((a) => a.evidence);
  const [plain, goWritten] = evidence.slice(reqs.length);
  const accepted = evidence.filter((e) => e.expected === '4xx' && e.status !== null && e.status >= 200 && e.status < 300 && e.error === null);
  if (accepted.length > 0) {
    return { verdict: 'fail', detail: `anyone can post to it: answered 2xx to ${accepted.map((e) => e.label).join(', ')}`, evidence };
  }
  if (!plain.ok) {
    const refused = plain.status === 401 || plain.status === 403;
    return {
      verdict: 'fail',
      detail: refused
        ? `${VALID_SIGNATURES_REFUSED} (${answerOf(plain)}): compute HMAC-SHA1 over the raw body bytes with the shared secret and compare it as lowercase hex (not SHA-256, not base64)`
        : `a validly signed request was not accepted: ${misses([plain])}`,
      evidence,
      ...(refused ? { blocksOthers: true } : {}),
    };
  }
  if (!goWritten.ok && (goWritten.status === 401 || goWritten.status === 403)) {
    return {
      verdict: 'fail',
      detail: `a validly signed body was refused when its bytes were not those JSON.stringify writes (${answerOf(goWritten)}): verify the raw bytes, before parsing; parsing and serializing again changes them`,
      evidence,
    };
  }
  if (!goWritten.ok) return { verdict: 'fail', detail: `a validly signed request was not accepted: ${misses([goWritten])}`, evidence };
  if (two(evidence).length > 0) return { verdict: 'warn', detail: `refused, but not with a 4xx: ${misses(evidence)}; answer 401 or 403`, evidence };
  return { verdict: 'pass', detail: 'refused all three bad signatures with 4xx, accepted both valid ones (one the same JSON in other bytes)', evidence };
}

export async function standardWebhooks(ctx: CheckContext): Promise<CheckResult> {
  if (!ctx.hasStandardWebhooksSecret) return { verdict: 'skipped', detail: 'no Standard Webhooks secret given (one starts whsec_)', evidence: [] };
  const now = ctx.now();
  const retried = (async () => {
    const call = probeCall('track', now);
    const first = await ctx.send({ label: 'signed now', expected: '2xx', call });
    const again = await ctx.send({ label: 'retry: same webhook-id, fresh timestamp', expected: '2xx', call, standardWebhooks: { kind: 'valid', id: first.webhookId ?? undefined } });
    return [first.evidence, again.evidence];
  })();
  // During a rotation the sender signs with the old and the new secret: one of two signatures matches.
  const rotation = ctx.send({ label: 'two signatures (a rotation): another key\'s, then this secret\'s', expected: '2xx', call: probeCall('track', now), standardWebhooks: { kind: 'rotation' } });
  const refused = Promise.all([
    ctx.send({ label: 'webhook-signature over other bytes', expected: '4xx', call: probeCall('track', now), standardWebhooks: { kind: 'other-bytes' } }),
    ctx.send({ label: 'webhook-timestamp 10 minutes old', expected: '4xx', call: probeCall('track', now), standardWebhooks: { kind: 'stale', ageS: 600 } }),
  ]);
  const evidence = [...(await refused).map((a) => a.evidence), ...(await retried), (await rotation).evidence];
  const accepted = evidence.filter((e) => e.expected === '4xx' && e.status !== null && e.status < 300 && e.error === null);
  if (accepted.length > 0) {
    // A stale timestamp taken: no window, or one in the wrong unit (300000 "ms" compared with seconds is 3.5 days).
    const stale = accepted.some((e) => e.label.startsWith('webhook-timestamp'))
      ? ': refuse a webhook-timestamp more than 5 minutes from now; it is in seconds since the epoch (a window written in milliseconds, 300000, compared with seconds lets days through)'
      : '';
    return { verdict: 'fail', detail: `accepted what it must refuse: ${accepted.map((e) => e.label).join(', ')}${stale}`, evidence };
  }
  const validRefused = evidence.filter((e) => e.expected === '2xx' && (e.status === 401 || e.status === 403));
  if (validRefused.length > 0 && validRefused.length === evidence.filter((e) => e.expected === '2xx').length) {
    // Refused for X-Signature or for these headers? The same request without them tells.
    const bare = await ctx.send({ label: 'valid X-Signature, no Standard Webhooks headers (which one is refused?)', expected: 'either', call: probeCall('track', now), standardWebhooks: { kind: 'none' } });
    const theirs = bare.evidence.status !== null && bare.evidence.status >= 200 && bare.evidence.status < 300;
    const fix = 'read webhook-timestamp as seconds since the epoch, not milliseconds, and verify "webhook-id.webhook-timestamp.body" with HMAC-SHA256 keyed with the base64 after "whsec_"';
    return {
      verdict: 'fail',
      detail: theirs
        ? `${VALID_SIGNATURES_REFUSED} (${answerOf(validRefused[0])}), yet the same request without Standard Webhooks headers was accepted: these headers are what it refuses: ${fix}`
        : `${VALID_SIGNATURES_REFUSED} (${answerOf(validRefused[0])}): ${fix}`,
      evidence: [...evidence, bare.evidence],
      ...(theirs ? { blocksOthers: true } : {}),
    };
  }
  if (two(evidence).length > 0) return { verdict: two(evidence).some((e) => e.expected === '2xx') ? 'fail' : 'warn', detail: misses(evidence), evidence };
  return { verdict: 'pass', detail: 'refused a bad signature and a stale timestamp, accepted the signed request, its retry and a request signed twice (a rotation)', evidence };
}

/** `first` is the run's first request, sent alone (probe-runner.ts); then 20 at once. */
export async function latency(ctx: CheckContext, first: ProbeAnswer): Promise<CheckResult> {
  const now = ctx.now();
  const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => ctx.send({ label: `20 at once #${i + 1}`, expected: '2xx', call: probeCall('track', now) })));
  const all = [first, ...burst];
  // Time only: what each answered is judged by the other checks.
  const evidence = all.map((a) => {
    const e = { ...a.evidence, label: a === first ? 'alone' : a.evidence.label };
    const answered = a.result.status !== null && a.result.errorCode === null;
    return { ...e, expected: `an answer within ${SEGMENT_TIMEOUT_MS} ms`, ok: answered && a.result.durationMs <= SEGMENT_TIMEOUT_MS };
  });
  const times = burst.map((a) => a.result.durationMs).sort((x, y) => x - y);
  const median = times[Math.floor(times.length / 2)];
  const slowest = times[times.length - 1];
  const summary = `alone: ${first.result.durationMs} ms; 20 at once: median ${median} ms, slowest ${slowest} ms (Segment waits ${SEGMENT_TIMEOUT_MS} ms)`;
  const late = evidence.filter((e) => !e.ok);
  if (late.length > 0) {
    return { verdict: 'fail', detail: `${late.length} of ${evidence.length} not answered within ${SEGMENT_TIMEOUT_MS} ms, which Segment counts as timed out and retries: ${summary}`, evidence };
  }
  if (Math.max(first.result.durationMs, slowest) > SEGMENT_TIMEOUT_MS / 2) return { verdict: 'warn', detail: `over half of Segment's timeout: ${summary}`, evidence };
  return { verdict: 'pass', detail: summary, evidence };
}

export async function duplicates(ctx: CheckContext): Promise<CheckResult> {
  const call = probeCall('track', ctx.now());
  const first = await ctx.send({ label: 'first delivery', expected: '2xx', call });
  // The same bytes and messageId, as a retry of Segment's sends them (and the same webhook-id).
  const again = await ctx.send({ label: 'same messageId again', expected: '2xx', call, standardWebhooks: { kind: 'valid', id: first.webhookId ?? undefined } });
  const evidence = [first.evidence, again.evidence];
  if (!first.evidence.ok) return { verdict: 'fail', detail: `the first delivery was not accepted: ${misses([first.evidence])}`, evidence };
  if (!again.evidence.ok) {
    const c = again.classification.outcome;
    const effect = c === 'retryable' ? 'Segment would retry it for up to 4 hours' : 'Segment would drop it, and log a failed delivery for an event you had';
    return { verdict: 'fail', detail: `a repeat of messageId ${call.messageId} got ${answerOf(again.evidence)}: ${effect}`, evidence };
  }
  return { verdict: 'pass', detail: 'both deliveries of one messageId answered 2xx', evidence };
}

export async function retryClasses(ctx: CheckContext): Promise<CheckResult> {
  const now = ctx.now();
  const reqs: ProbeRequest[] = [
    { label: 'track with an event it has never seen', expected: '2xx', call: probeCall('track', now, { event: 'Probe Unfamiliar Event', properties: { probe_unfamiliar: true } }) },
    { label: 'identify with unfamiliar traits', expected: '2xx', call: probeCall('identify', now, { traits: { probe_unfamiliar_trait: 'x' } }) },
  ];
  const answers = await Promise.all(reqs.map((r) => ctx.send(r)));
  const evidence = answers.map((a) => a.evidence);
  const dropped = answers.filter((a) => !a.evidence.ok && a.classification.outcome === 'failed');
  if (dropped.length > 0) return { verdict: 'fail', detail: `would drop events: ${misses(dropped.map((a) => a.evidence))}`, evidence };
  if (two(evidence).length > 0) return { verdict: 'warn', detail: `retried, not accepted: ${misses(evidence)}`, evidence };
  return { verdict: 'pass', detail: 'valid calls it does not know answered 2xx', evidence };
}

/** The body size the near-limit request is padded to: under the collector's 32 KB call limit. */
export const NEAR_LIMIT_BYTES = MAX_CALL_BYTES - 768;

export async function robustness(ctx: CheckContext): Promise<CheckResult> {
  const now = ctx.now();
  const big = probeCall('track', now);
  const size = Buffer.byteLength(JSON.stringify(buildWebhookBody(big, ctx.settings.payloadFormat, ctx.settings.aliasKeys)));
  big.properties = { ...big.properties, padding: 'x'.repeat(Math.max(0, NEAR_LIMIT_BYTES - size - '"padding":"",'.length)) };
  const reqs: ProbeRequest[] = [
    { label: 'unknown fields and version 2', expected: '2xx', call: probeCall('track', now), editBody: (b) => ({ ...b, version: 2, probe_unknown_field: { nested: [1, 'two'] } }) },
    { label: `body of ${NEAR_LIMIT_BYTES} bytes`, expected: '2xx', call: big },
    { label: 'non-ASCII text', expected: '2xx', call: probeCall('identify', now, { traits: { name: 'Zoë Ångström-Łukasiewicz', city: 'Zürich', note: '東京 · Δ · 🎉' } }) },
    { label: 'historical timestamp (2015)', expected: '2xx', call: probeCall('track', now, { timestamp: '2015-12-28T23:40:25.000Z' }) },
    { label: 'integrations object', expected: '2xx', call: probeCall('track', now, { integrations: { All: false, Webhooks: true, 'Google Analytics': false } }) },
  ];
  const evidence = (await Promise.all(reqs.map((r) => ctx.send(r)))).map((a) => a.evidence);
  if (two(evidence).length === 0) return { verdict: 'pass', detail: 'all five answered 2xx', evidence };
  return { verdict: 'fail', detail: `not accepted: ${misses(evidence)}`, evidence };
}

export async function ordering(ctx: CheckContext): Promise<CheckResult> {
  const now = ctx.now();
  // The sample's event, which call-types sends too: only the order differs, so a receiver that
  // refuses unfamiliar events fails retry-classes, not this (issue 37, item 8).
  const newer = probeCall('track', now, { userId: PROBE_USER, timestamp: new Date(now).toISOString() });
  const older = probeCall('track', now, { userId: PROBE_USER, timestamp: new Date(now - 60_000).toISOString() });
  const a = await ctx.send({ label: 'newer call first', expected: '2xx', call: newer });
  const b = await ctx.send({ label: 'older call (timestamp 60 s before) second', expected: '2xx', call: older });
  const evidence = [a.evidence, b.evidence];
  if (two(evidence).length === 0) return { verdict: 'pass', detail: 'both accepted, whatever their order', evidence };
  return { verdict: 'fail', detail: `not accepted out of order: ${misses(evidence)}`, evidence };
}
