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

/**
 * Each step applied in order; null as soon as one cannot be (the detail must be read). A summary
 * may change a URL's outcome only for a delivery an attempt was pushed for since the summary before
 * it, or one it shows in flight: any other change (a cancel, a batch member's round) is read.
 */
export function patchedDetail(detail: CallDetail, steps: DetailStep[]): CallDetail | null {
  let next: CallDetail | null = detail;
  let pushedFor = new Set<number>();
  for (const step of steps) {
    if (next === null) return null;
    if (step.type === 'summary') {
      next = patchSummary(next, step.summary, pushedFor);
      pushedFor = new Set();
    } else {
      // Only the open call's attempts explain its deliveries (a batch member opened a moment before shares them).
      if (step.callId === detail.call.id) pushedFor.add(step.attempt.deliveryId);
      next = patchAttempts(next, [step]);
    }
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
    // Its in-flight version: the same URL of the same round (two replays out at once differ in their start).
    const same = (x: Attempt) => x.round === a.round && x.urlIndex === a.urlIndex && x.trigger === a.trigger && x.startedAt === a.startedAt;
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
 * Null when the summary says what the detail does not know: a delivery it does not hold; a URL whose
 * outcome changed though its delivery was neither pushed an attempt (`pushedFor`) nor is out (a
 * cancel, a batch member's round, a batch filling); a delivery the detail shows in flight that is no
 * longer out (its round ended unwritten); or a Classic delivery whose state or attempt count differ
 * from what the pushed attempts said (an answer not pushed yet).
 */
export function patchSummary(detail: CallDetail, summary: CallSummary, pushedFor: ReadonlySet<number> = new Set()): CallDetail | null {
  if (summary.id !== detail.call.id) return detail;
  const known = new Set(detail.deliveries.map((d) => d.id));
  if (summary.urls.some((u) => u.via?.deliveryId != null && !known.has(u.via.deliveryId))) return null;
  const classic = detail.deliveries.find((d) => d.kind === 'classic')?.id ?? null;
  const out = new Set<number>();
  for (const u of summary.urls) {
    const id = u.via ? u.via.deliveryId : classic;
    if (u.state === 'in_flight' && id !== null) out.add(id);
  }
  if (summary.urls.length !== detail.urls.length) return null;
  for (let i = 0; i < summary.urls.length; i++) {
    const u = summary.urls[i]!;
    const was = detail.urls[i]!;
    if (sameOutcome(u, was)) continue;
    // Waiting in a batch before and after: its count of queued items is all that changed, and the summary carries it.
    if (u.via?.deliveryId === null && was.via?.deliveryId === null) continue;
    const id = u.via ? u.via.deliveryId : classic;
    if (id === null || !(out.has(id) || pushedFor.has(id))) return null;
  }
  if (detail.deliveries.some((d) => d.state === 'in_flight' && !out.has(d.id))) return null;
  const deliveries = out.size === 0 ? detail.deliveries : detail.deliveries.map((d) => (out.has(d.id) ? shownOut(d) : d));
  if (summary.deliveryId !== null) {
    const d = deliveries.find((x) => x.id === summary.deliveryId);
    if (!d || d.state !== summary.deliveryState || d.attemptCount !== summary.attemptCount || d.nextAttemptAt !== summary.nextAttemptAt) return null;
  } else if (deliveries.some((d) => d.kind === 'classic')) return null;
  return { ...detail, deliveries, urls: summary.urls };
}

/** Two outcomes of one URL alike (their JSON: the summary's objects are plain data). */
function sameOutcome(a: CallSummary['urls'][number], b: CallSummary['urls'][number]): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}
