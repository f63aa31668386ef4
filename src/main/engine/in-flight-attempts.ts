import type { Attempt, Delivery } from '../../shared/types';
import { attemptOf } from './store/attempt-rows';
import type { Store } from './store/store';
import { answeredInFlight } from './store/url-states';

/**
 * A call's deliveries as the detail shows them: with each URL's attempt as soon as it answered, while
 * other URLs of its round are still out (issue 26: "delivered · HTTP 200" beside "No attempt yet"),
 * and attemptCount counting it. The round records these attempts when it ends, in the same step that
 * forgets them here (dispatcher commit), so no read sees one twice. Until then they carry negative ids.
 */
export function withAnsweredAttempts<D extends Delivery & { attempts: Attempt[] }>(store: Store, deliveries: D[]): D[] {
  let provisional = 0;
  return deliveries.map((d) => {
    const answered = answeredInFlight(store.inFlight.of(d.id));
    if (answered.length === 0) return d;
    const attempts = answered.map((a) => attemptOf(--provisional, a, { method: d.method }));
    return { ...d, attemptCount: d.attemptCount + attempts.length, attempts: [...d.attempts, ...attempts] };
  });
}
