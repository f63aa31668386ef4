import type { EngineEvent } from '../../shared/api.contract';
import type { Attempt, CallDetail, CallSummary } from '../../shared/types';

// The open call's detail, patched from engine events instead of read again (issue 27, "push, don't
// pull"). Each function answers the detail as the engine would now send it, or null when the events
// do not say enough (a delivery the detail does not hold, a round still out, a change without an
// attempt): the caller then reads the detail (getMessage), as it did for every event before.

export type AttemptRecorded = Extract<EngineEvent, { type: 'attempt.recorded' }>;

/**
 * The recorded attempts of this call put into its deliveries, each with its delivery's progress as
 * the round left it. The in-flight version of an attempt (negative id, listed while other URLs of its
 * round were out) gives way to the recorded one. Null when an attempt is for a delivery the detail
 * does not hold (a replay's new delivery, an Actions batch sent since) or one whose body the detail
 * shows cut (a large batch: its attempts' bodies are cut the same way, by the engine).
 */
export function patchAttempts(detail: CallDetail, events: AttemptRecorded[]): CallDetail | null {
  let deliveries = detail.deliveries;
  for (const e of events) {
    if (e.callId !== detail.call.id) continue;
    const i = deliveries.findIndex((d) => d.id === e.attempt.deliveryId);
    if (i < 0 || deliveries[i].bodyTruncated) return null;
    const d = deliveries[i];
    const a = e.attempt;
    const recorded = d.attempts.filter((x) => x.id > 0 && x.id !== a.id);
    const stillOut = d.attempts.filter((x) => x.id < 0 && !(x.round === a.round && x.urlIndex === a.urlIndex));
    const attempts: Attempt[] = [...[...recorded, a].sort((x, y) => x.id - y.id), ...stillOut];
    const next = { ...d, ...e.delivery, attemptCount: e.delivery.attemptCount + stillOut.length, attempts };
    deliveries = deliveries.map((x, j) => (j === i ? next : x));
  }
  return deliveries === detail.deliveries ? detail : { ...detail, deliveries };
}

/**
 * The call's summary (calls.updated) applied to a detail already patched with its attempts: the
 * per-URL outcomes are the summary's. Null when the summary says what the detail does not know: a
 * delivery it does not hold, a URL in flight (its answered attempts are only in the detail), or a
 * Classic delivery whose state or attempt count differ from what the attempts' events said.
 */
export function patchSummary(detail: CallDetail, summary: CallSummary): CallDetail | null {
  if (summary.id !== detail.call.id) return detail;
  if (summary.urls.some((u) => u.state === 'in_flight' || u.startedAt !== null)) return null;
  const known = new Set(detail.deliveries.map((d) => d.id));
  if (summary.urls.some((u) => u.via?.deliveryId != null && !known.has(u.via.deliveryId))) return null;
  if (summary.deliveryId !== null) {
    const d = detail.deliveries.find((x) => x.id === summary.deliveryId);
    if (!d || d.state !== summary.deliveryState || d.attemptCount !== summary.attemptCount || d.nextAttemptAt !== summary.nextAttemptAt) return null;
  } else if (detail.deliveries.some((d) => d.kind === 'classic')) return null;
  return { ...detail, urls: summary.urls };
}
