import type { EventHub } from './event-hub';
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
  private readonly pending = new Map<number, number>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: Store,
    private readonly events: EventHub,
  ) {}

  add(callId: number, deliveryId: number): void {
    this.pending.set(callId, deliveryId);
    if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), IN_FLIGHT_NOTICE_MS);
      this.timer.unref();
    }
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pending.clear();
  }

  private flush(): void {
    this.timer = null;
    for (const [callId, deliveryId] of this.pending) {
      if (hasUrlOut(this.store.inFlight.of(deliveryId))) this.events.touch(callId);
    }
    this.pending.clear();
  }
}
