import { describe, expect, it } from 'vitest';
import { withWait } from '../../src/main/engine/dispatcher/dispatcher';
import { laneKey } from '../../src/main/engine/dispatcher/lanes';
import type { ActiveDelivery } from '../../src/main/engine/store/delivery.types';

const delivery = (over: Partial<ActiveDelivery>): ActiveDelivery =>
  ({ id: 1, round: 2, nextAttemptAt: 1_000_000, simElapsedMs: 15_000, ...over }) as ActiveDelivery;

describe('a retry that waited for its lane', () => {
  it('has used the wait of its retry window, warped like the delays', () => {
    expect(withWait(delivery({}), 1_010_000, 1).simElapsedMs).toBe(25_000);
    expect(withWait(delivery({}), 1_010_000, 100).simElapsedMs).toBe(1_015_000);
  });
  it('a first attempt, or one on time, is unchanged', () => {
    const first = delivery({ round: 0, nextAttemptAt: null });
    expect(withWait(first, 5_000_000, 1)).toBe(first);
    const onTime = delivery({});
    expect(withWait(onTime, 1_000_000, 1)).toBe(onTime);
    expect(withWait(onTime, 999_000, 1)).toBe(onTime);
  });
});

describe('laneKey', () => {
  it('is the origin and path: query, fragment and credentials do not make another lane', () => {
    expect(laneKey('http://u:p@127.0.0.1:8789/hang?x=1#f')).toBe('http://127.0.0.1:8789/hang');
    expect(laneKey('HTTP://LOCALHOST:80/a')).toBe('http://localhost/a');
    expect(laneKey('http://127.0.0.1:8789/ok')).not.toBe(laneKey('http://127.0.0.1:8789/hang'));
  });
});
