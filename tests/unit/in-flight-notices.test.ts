import { afterEach, describe, expect, it, vi } from 'vitest';
import { InFlightNotices, IN_FLIGHT_NOTICE_MS } from '../../src/main/engine/in-flight-notices';
import { InFlight } from '../../src/main/engine/store/url-states';
import type { EventHub } from '../../src/main/engine/event-hub';
import type { Store } from '../../src/main/engine/store/store';

// Rounds in flight are announced in one gathering every IN_FLIGHT_NOTICE_MS, and only those still out
// then: under load (rounds ending within milliseconds) the event stream gains next to nothing.
afterEach(() => {
  vi.useRealTimers();
});

describe('in-flight notices', () => {
  it('1,000 rounds started: one gathering, touching only the 3 still out when it runs', () => {
    vi.useFakeTimers();
    const inFlight = new InFlight();
    const touched: number[] = [];
    const notices = new InFlightNotices({ inFlight } as unknown as Store, { touch: (id: number) => touched.push(id) } as unknown as EventHub);
    const rounds = [];
    for (let d = 1; d <= 1000; d++) {
      rounds.push(inFlight.start(d, [0], 0));
      notices.add(d + 10_000, d);
    }
    // All but three end quickly, as under load against a fast receiver.
    for (let d = 1; d <= 997; d++) inFlight.end(d, rounds[d - 1]);
    vi.advanceTimersByTime(IN_FLIGHT_NOTICE_MS - 1);
    expect(touched).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(touched).toEqual([10_998, 10_999, 11_000]);
    // Nothing more until something new is announced.
    vi.advanceTimersByTime(10 * IN_FLIGHT_NOTICE_MS);
    expect(touched).toHaveLength(3);
    notices.stop();
  });
});
