import { coalesce, type Coalescer } from '../../shared/coalesce';
import type { EventHub } from './event-hub';
import { nodeScheduler } from './node-scheduler';
import type { Store } from './store/store';
import type { NewAttempt } from './store/delivery.types';
import { attemptOf } from './store/attempt-rows';
import { answeredInFlight, hasUrlOut } from './store/url-states';
import type { OutDelivery } from './dispatcher/dispatcher-deps';

/** How often rounds still out are announced: a round that ends sooner is announced only by its recording. */
export const IN_FLIGHT_NOTICE_MS = 250;

/**
 * Tells the inspector about rounds in flight (a receiver that takes seconds): each attempt whose URL
 * answered meanwhile (`attempt.answered`, once each), then the call touched (`calls.updated`, its
 * URLs in flight since their start, read at the same moment). Gathered and sent at most every
 * IN_FLIGHT_NOTICE_MS, and only for deliveries still out then: under load, where rounds end within
 * milliseconds, this adds next to nothing to the event stream. With both, the open detail is
 * patched, never read again mid-round.
 */
export class InFlightNotices {
  /** [callId, delivery]: one per delivery for its own call, one per call for an Actions batch's other members. */
  private readonly pending: Coalescer<[number, OutDelivery]>;
  /** Answered attempts already announced (held by their round until it is recorded). */
  private readonly announced = new WeakSet<NewAttempt>();

  constructor(
    private readonly store: Store,
    private readonly events: EventHub,
  ) {
    this.pending = coalesce<[number, OutDelivery]>({
      maxWaitMs: IN_FLIGHT_NOTICE_MS,
      // Numbers, not a string made per round: this runs for every round that goes out.
      key: ([callId, d]) => (callId === d.callId ? d.id : -callId),
      flush: (rounds) => this.flush(rounds),
      scheduler: nodeScheduler,
    });
  }

  add(callId: number, d: OutDelivery): void {
    this.pending.push([callId, d]);
  }

  stop(): void {
    this.pending.dispose();
  }

  private flush(rounds: [number, OutDelivery][]): void {
    const touched: number[] = [];
    for (const [callId, d] of rounds) {
      const out = this.store.inFlight.of(d.id);
      if (!hasUrlOut(out)) continue;
      // Listed under the delivery's own call (an Actions batch's first); its other members are touched.
      if (callId === d.callId) {
        for (const a of answeredInFlight(out)) {
          if (this.announced.has(a)) continue;
          this.announced.add(a);
          this.events.emit({ type: 'attempt.answered', callId, attempt: attemptOf(-1, a, { method: d.method }) });
        }
      }
      touched.push(callId);
    }
    // Their summaries read now, from the state the answers above were chosen from: one answering after
    // this is announced by the next notice or by its round's recording, not by this summary first. (A
    // touch of the same call by something else in this turn is read at the hub's flush and may count
    // it; the Inspector then reads the call again, as for any change it was not told of.)
    this.events.announce(touched);
  }
}
