import { coalesce, type Coalescer } from '../../shared/coalesce';
import type { EventHub } from './event-hub';
import { nodeScheduler } from './node-scheduler';
import type { Store } from './store/store';
import { hasUrlOut } from './store/url-states';

/** How often rounds still out are announced: a round that ends sooner is announced only by its recording. */
export const IN_FLIGHT_NOTICE_MS = 250;

/**
 * Tells the inspector about attempts in flight (a receiver that takes seconds), as `calls.updated`
 * with summaries whose URLs read in flight since their start. Gathered and sent at most every
 * IN_FLIGHT_NOTICE_MS, and only for deliveries still out then: under load, where rounds end within
 * milliseconds, this adds next to nothing to the event stream.
 */
export class InFlightNotices {
  /** [callId, deliveryId], one per call (its latest delivery started). */
  private readonly pending: Coalescer<[number, number]>;

  constructor(
    private readonly store: Store,
    private readonly events: EventHub,
  ) {
    this.pending = coalesce<[number, number]>({
      maxWaitMs: IN_FLIGHT_NOTICE_MS,
      key: ([callId]) => callId,
      flush: (rounds) => this.flush(rounds),
      scheduler: nodeScheduler,
    });
  }

  add(callId: number, deliveryId: number): void {
    this.pending.push([callId, deliveryId]);
  }

  stop(): void {
    this.pending.dispose();
  }

  private flush(rounds: [number, number][]): void {
    for (const [callId, deliveryId] of rounds) {
      if (hasUrlOut(this.store.inFlight.of(deliveryId))) this.events.touch(callId);
    }
  }
}
