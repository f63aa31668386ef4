import { describe, expect, it } from 'vitest';
import { attemptOffset } from '../../src/renderer/features/inspector/attempt-offset';

describe("an attempt's offset from its call's arrival", () => {
  const arrived = '2026-11-29T10:00:00.000Z';
  it('is the wall-clock time since the call arrived', () => {
    expect(attemptOffset('2026-11-29T10:00:00.012Z', arrived, 0)).toBe('+12 ms');
    expect(attemptOffset('2026-11-29T10:00:05.020Z', arrived, 5_000)).toBe('+5.02 s');
    expect(attemptOffset('2026-11-29T10:02:00.000Z', arrived, undefined)).toBe('+2m 00s');
  });
  it('adds the simulated offset when a time warp made it differ by a second or more', () => {
    expect(attemptOffset('2026-11-29T10:00:06.100Z', arrived, 300_000)).toBe('+6.10 s (+5m 00s simulated)');
    expect(attemptOffset('2026-11-29T10:00:05.400Z', arrived, 5_000)).toBe('+5.40 s');
  });
  it("compares the simulated offset with the time since the delivery's first attempt, where the schedule's clock starts", () => {
    // Found in CI on a slow machine: a first attempt 1.19 s after its call read "+1.19 s (+0s simulated)" with no warp.
    expect(attemptOffset('2026-11-29T10:00:01.190Z', arrived, 0, '2026-11-29T10:00:01.190Z')).toBe('+1.19 s');
    expect(attemptOffset('2026-11-29T10:00:06.190Z', arrived, 5_000, '2026-11-29T10:00:01.190Z')).toBe('+6.19 s');
    expect(attemptOffset('2026-11-29T10:00:06.190Z', arrived, 300_000, '2026-11-29T10:00:01.190Z')).toBe('+6.19 s (+5m 00s simulated)');
  });
  it('says nothing without the arrival, and never a negative offset', () => {
    expect(attemptOffset('2026-11-29T10:00:00.000Z', undefined, 0)).toBeNull();
    expect(attemptOffset('2026-11-29T09:59:59.000Z', arrived, undefined)).toBe('+0 ms');
  });
});
