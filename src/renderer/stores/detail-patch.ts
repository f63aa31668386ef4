import type { EngineEvent } from '../../shared/api.contract';
import type { Attempt, CallDetail, CallSummary } from '../../shared/types';
import { numberProvisional, shownOut } from '../../shared/rounds-out';

// The open call's detail, patched from engine events instead of read again (issue 27, "push, don't
// pull"; issue 41: a round still out too). Each function answers the detail as the engine would now
// send it, or null when the events do not say enough (a delivery the detail does not hold, a change
// without an attempt): the caller then reads the detail (getMessage), as it did for every event before.

export type AttemptRecorded = Extract<EngineEvent, { type: 'attempt.recorded' }>;
export type AttemptAnswered = Extract<EngineEvent, { type: 'attempt.answered' }>;
/** What the open detail is patched with, in the order the engine sent it. */
export type DetailStep = AttemptRecorded | AttemptAnswered | { type: 'summary'; summary: CallSummary };

/** Each step applied in order; null as soon as one cannot be (the detail must be read). */
export function patchedDetail(detail: CallDetail, steps: DetailStep[]): CallDetail | null {
  let next: CallDetail | null = detail;
  for (const step of steps) {
    if (next === null) return null;
    next = step.type === 'summary' ? patchSummary(next, step.summary) : patchAttempts(next, [step]);
  }
  return next;
}

/**
 * The pushed attempts of this call put into its deliveries. A recorded one comes with its delivery's
 * progress as the round left it, and takes the place of its in-flight version (listed while other
 * URLs of its round were out). An answered one (attempt.answered) is that in-flight version: listed
 * after the recorded ones, counted, its delivery shown in flight. Provisional ids are numbered as
 * the engine numbers them (shared/rounds-out.ts). Null when an attempt is for a delivery the detail
 * does not hold (a replay's new delivery, an Actions batch sent since) or one whose body the detail
 * shows cut (a large batch: its attempts' bodies are cut the same way, by the engine).
 */
export function patchAttempts(detail: CallDetail, events: (AttemptRecorded | AttemptAnswered)[]): CallDetail | null {
  let deliveries = detail.deliveries;
  for (const e of events) {
    if (e.callId !== detail.call.id) continue;
    const i = deliveries.findIndex((d) => d.id === e.attempt.deliveryId);
    if (i < 0 || deliveries[i].bodyTruncated) return null;
    const d = deliveries[i];
    const a = e.attempt;
    const same = (x: Attempt) => x.round === a.round && x.urlIndex === a.urlIndex && x.trigger === a.trigger;
    let next: typeof d;
    if (e.type === 'attempt.answered') {
      // Already listed (read with the detail, or recorded since): nothing to add.
      if (d.attempts.some(same)) continue;
      next = shownOut({ ...d, attemptCount: d.attemptCount + 1, attempts: [...d.attempts, a] });
    } else {
      const recorded = d.attempts.filter((x) => x.id > 0 && x.id !== a.id);
      const stillOut = d.attempts.filter((x) => x.id < 0 && !same(x));
      const attempts: Attempt[] = [...[...recorded, a].sort((x, y) => x.id - y.id), ...stillOut];
      next = { ...d, ...e.delivery, attemptCount: e.delivery.attemptCount + stillOut.length, attempts };
    }
    deliveries = deliveries.map((x, j) => (j === i ? next : x));
  }
  return deliveries === detail.deliveries ? detail : { ...detail, deliveries: numberProvisional(deliveries) };
}

/**
 * The call's summary (calls.updated) applied to a detail already patched with the attempts pushed
 * before it: the per-URL outcomes are the summary's, and a delivery with a URL out shows in flight.
 * Null when the summary says what the detail does not know: a delivery it does not hold, a delivery
 * the detail shows in flight that is no longer out (its round ended unrecorded: abandoned at a stop),
 * or a Classic delivery whose state or attempt count differ from what the pushed attempts said (an
 * answer not pushed yet, a cancel).
 */
export function patchSummary(detail: CallDetail, summary: CallSummary): CallDetail | null {
  if (summary.id !== detail.call.id) return detail;
  const known = new Set(detail.deliveries.map((d) => d.id));
  if (summary.urls.some((u) => u.via?.deliveryId != null && !known.has(u.via.deliveryId))) return null;
  const out = new Set<number>();
  if (summary.deliveryState === 'in_flight' && summary.deliveryId !== null && summary.urls.some((u) => u.state === 'in_flight' && !u.via)) out.add(summary.deliveryId);
  for (const u of summary.urls) if (u.state === 'in_flight' && u.via?.deliveryId != null) out.add(u.via.deliveryId);
  if (detail.deliveries.some((d) => d.state === 'in_flight' && !out.has(d.id))) return null;
  const deliveries = out.size === 0 ? detail.deliveries : detail.deliveries.map((d) => (out.has(d.id) ? shownOut(d) : d));
  if (summary.deliveryId !== null) {
    const d = deliveries.find((x) => x.id === summary.deliveryId);
    if (!d || d.state !== summary.deliveryState || d.attemptCount !== summary.attemptCount || d.nextAttemptAt !== summary.nextAttemptAt) return null;
  } else if (deliveries.some((d) => d.kind === 'classic')) return null;
  return { ...detail, deliveries, urls: summary.urls };
}
