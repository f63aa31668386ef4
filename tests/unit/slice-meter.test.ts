import { afterEach, describe, expect, it, vi } from 'vitest';
import { SliceMeter } from '../../src/main/engine/slice-meter';

// The meter behind health's eventLoop.slices (issue 38): per job, its slices and the longest, over
// the last 30-60 s.

afterEach(() => vi.useRealTimers());

describe('SliceMeter', () => {
  it('counts each job apart, keeps the longest, and forgets what is older than two windows', () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const m = new SliceMeter();
    m.record('export', 4);
    m.record('export', 12.34);
    m.record('retention', 2);
    expect(m.figures()).toEqual({ export: { slices: 2, longestMs: 12.3 }, retention: { slices: 1, longestMs: 2 } });
    vi.advanceTimersByTime(31_000);
    m.record('export', 1);
    // The window before still counts.
    expect(m.figures()).toEqual({ export: { slices: 3, longestMs: 12.3 }, retention: { slices: 1, longestMs: 2 } });
    vi.advanceTimersByTime(31_000);
    expect(m.figures()).toEqual({ export: { slices: 1, longestMs: 1 } });
    vi.advanceTimersByTime(61_000);
    expect(m.figures()).toEqual({});
  });

  it('times a slice that throws too', () => {
    const m = new SliceMeter();
    expect(() =>
      m.time('job', () => {
        throw new Error('failed');
      }),
    ).toThrow('failed');
    expect(m.figures().job?.slices).toBe(1);
  });
});
