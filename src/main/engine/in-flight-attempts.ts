import type { Attempt, Delivery } from '../../shared/types';
import { numberProvisional, shownOut } from '../../shared/rounds-out';
import { attemptOf } from './store/attempt-rows';
import type { Store } from './store/store';
import { answeredInFlight, hasUrlOut } from './store/url-states';

/**
 * A call's deliveries as the detail shows them: a delivery with a round out in flight (as its call's
 * summary says), with each URL's attempt as soon as it answered, while other URLs of its round are
 * still out (issue 26: "delivered · HTTP 200" beside "No attempt yet"), and attemptCount counting it.
 * The round records these attempts when it ends, in the same step that forgets them here (dispatcher
 * commit), so no read sees one twice. Until then they carry provisional ids (shared/rounds-out.ts),
 * numbered as the renderer numbers those it is pushed (attempt.answered).
 */
export function withAnsweredAttempts<D extends Delivery & { attempts: Attempt[] }>(store: Store, deliveries: D[]): D[] {
  let changed = false;
  const shown = deliveries.map((d) => {
    const rounds = store.inFlight.of(d.id);
    // Every URL of a round may have answered before the round's write: its attempts are still listed.
    const answered = answeredInFlight(rounds).map((a) => attemptOf(-1, a, { method: d.method }));
    const out = hasUrlOut(rounds);
    if (answered.length === 0 && !out) return d;
    changed = true;
    const listed = answered.length === 0 ? d : { ...d, attemptCount: d.attemptCount + answered.length, attempts: [...d.attempts, ...answered] };
    return out ? shownOut(listed) : listed;
  });
  return changed ? numberProvisional(shown) : deliveries;
}
