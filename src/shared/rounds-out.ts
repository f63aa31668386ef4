import type { Attempt, Delivery } from './types';

// A delivery while a round of it is out, as the detail shows it (issue 41, "one read model"): the
// engine's read (in-flight-attempts.ts) and the renderer's patches from pushed events
// (detail-patch.ts) both go through these, so a patched detail is the one a read would answer.

/** A delivery with a URL out now: in flight, with no next attempt planned (its round plans it when it ends). */
export function shownOut<D extends Pick<Delivery, 'state' | 'nextAttemptAt' | 'nextAttemptSimOffsetMs'>>(d: D): D {
  return { ...d, state: 'in_flight', nextAttemptAt: null, nextAttemptSimOffsetMs: null };
}

/**
 * Attempts answered while their round is still out (not recorded yet) come after the recorded ones,
 * by round, then URL, then start, and are numbered -1, -2, … over the call's deliveries in order:
 * their ids are provisional, the recorded attempt that replaces one has its own.
 */
export function numberProvisional<D extends { attempts: Attempt[] }>(deliveries: D[]): D[] {
  let next = 0;
  return deliveries.map((d) => {
    const provisional = d.attempts.filter((a) => a.id < 0);
    if (provisional.length === 0) return d;
    const recorded = d.attempts.filter((a) => a.id > 0);
    provisional.sort((a, b) => a.round - b.round || a.urlIndex - b.urlIndex || a.startedAt.localeCompare(b.startedAt));
    const numbered = provisional.map((a) => (a.id === --next ? a : { ...a, id: next }));
    return { ...d, attempts: [...recorded, ...numbered] };
  });
}
