import { describe, expect, it } from 'vitest';
import { DedupWindow } from '../../src/main/engine/store/dedup-window';

describe('DedupWindow', () => {
  it('remembers per source within the window', () => {
    const w = new DedupWindow(1000, 10);
    w.add('s1', 'm1', 0);
    expect(w.has('s1', 'm1', 500)).toBe(true);
    expect(w.has('s2', 'm1', 500)).toBe(false);
    expect(w.has('s1', 'm1', 1001)).toBe(false);
  });

  it('evicts the oldest past its capacity, and entries past the window', () => {
    const w = new DedupWindow(1000, 3);
    for (let i = 0; i < 5; i++) w.add('s', `m${i}`, i);
    expect(w.size).toBe(3);
    expect(w.has('s', 'm0', 5)).toBe(false);
    expect(w.has('s', 'm4', 5)).toBe(true);
    w.add('s', 'late', 2000);
    expect(w.size).toBe(1);
  });

  it('admit: true and remembered for a new id, false and unchanged for a duplicate, true again past the window', () => {
    const w = new DedupWindow(1000, 10);
    expect(w.admit('s', 'm', 0)).toBe(true);
    expect(w.size).toBe(1);
    expect(w.admit('s', 'm', 999)).toBe(false);
    expect(w.admit('other', 'm', 999)).toBe(true);
    expect(w.size).toBe(2);
    expect(w.admit('s', 'm', 1001)).toBe(true);
    // Re-admitted: the same id counts once, dated from its new arrival.
    expect(w.size).toBe(2);
    expect(w.has('s', 'm', 2000)).toBe(true);
    expect(w.has('s', 'm', 2002)).toBe(false);
  });

  it('forgets a rolled-back id', () => {
    const w = new DedupWindow(1000, 10);
    w.add('s', 'm', 0);
    w.remove('s', 'm');
    expect(w.has('s', 'm', 1)).toBe(false);
  });

  it('keeps exactly the newest ids under sustained load, through removals and re-adds', () => {
    const cap = 1000;
    const w = new DedupWindow(1e12, cap);
    for (let i = 0; i < 20_000; i++) {
      w.add('s', `m${i}`, i);
      // Now and then a rolled-back id, and an old id seen again (moved to the newest end).
      if (i % 97 === 0) w.remove('s', `m${i - 5}`);
      expect(w.size).toBeLessThanOrEqual(cap);
    }
    expect(w.size).toBe(cap);
    const present = Array.from({ length: 20_000 }, (_, i) => w.has('s', `m${i}`, 20_000));
    const removed = new Set(Array.from({ length: 20_000 }, (_, i) => (i % 97 === 0 ? i - 5 : -1)));
    // The newest ids are all there except the rolled-back ones; nothing older is.
    const newest = Array.from({ length: 20_000 }, (_, i) => i).filter((i) => present[i]);
    expect(newest.length).toBe(cap);
    expect(newest.every((i) => !removed.has(i))).toBe(true);
    const oldestKept = newest[0];
    for (let i = oldestKept; i < 20_000; i++) if (!removed.has(i)) expect(present[i]).toBe(true);

    // A re-added old id counts as new and survives the next evictions.
    w.add('s', `m${oldestKept}`, 20_001);
    for (let i = 0; i < cap - 1; i++) w.add('s', `n${i}`, 20_002 + i);
    expect(w.has('s', `m${oldestKept}`, 30_000)).toBe(true);
    expect(w.size).toBe(cap);
  });
});
