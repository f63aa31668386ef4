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

  it('past its capacity, forgets ids older than the newest `capacity`, and entries past the window', () => {
    const w = new DedupWindow(1000, 3);
    for (let i = 0; i < 7; i++) w.add('s', `m${i}`, i);
    // m0–m2 turned into the previous generation at m3, and were dropped when m6 turned it again.
    expect(w.size).toBeLessThanOrEqual(6);
    for (let i = 4; i < 7; i++) expect(w.has('s', `m${i}`, 7)).toBe(true);
    for (let i = 0; i < 3; i++) expect(w.has('s', `m${i}`, 7)).toBe(false);
    w.add('s', 'late', 2000);
    expect(w.has('s', 'late', 2000)).toBe(true);
    for (let i = 0; i < 7; i++) expect(w.has('s', `m${i}`, 2000)).toBe(false);
    // A turn by time: what it drops is past the window; what it keeps is answered by arrival time.
    w.add('s', 'later', 3500);
    expect(w.size).toBeLessThanOrEqual(2);
    expect(w.has('s', 'late', 2900)).toBe(true);
  });

  it('admit: true and remembered for a new id, false and unchanged for a duplicate, true again past the window', () => {
    const w = new DedupWindow(1000, 10);
    expect(w.admit('s', 'm', 0)).toBe(true);
    expect(w.size).toBe(1);
    expect(w.admit('s', 'm', 999)).toBe(false);
    expect(w.admit('other', 'm', 999)).toBe(true);
    expect(w.size).toBe(2);
    expect(w.admit('s', 'm', 1001)).toBe(true);
    // Re-admitted: dated from its new arrival.
    expect(w.has('s', 'm', 2000)).toBe(true);
    expect(w.has('s', 'm', 2002)).toBe(false);
  });

  it('removeIfAt forgets only the entry of the arrival named', () => {
    const w = new DedupWindow(1000, 10);
    w.add('s', 'm', 5);
    w.removeIfAt('s', 'm', 4);
    expect(w.has('s', 'm', 6)).toBe(true);
    w.removeIfAt('s', 'm', 5);
    expect(w.has('s', 'm', 6)).toBe(false);
  });

  it('forgets a rolled-back id', () => {
    const w = new DedupWindow(1000, 10);
    w.add('s', 'm', 0);
    w.remove('s', 'm');
    expect(w.has('s', 'm', 1)).toBe(false);
  });

  it('keeps every one of the newest ids under sustained load, through removals and re-adds, and at most twice as many', () => {
    const cap = 1000;
    const w = new DedupWindow(1e12, cap);
    const removed = new Set<number>();
    for (let i = 0; i < 20_000; i++) {
      w.add('s', `m${i}`, i);
      // Now and then a rolled-back id.
      if (i % 97 === 0 && i >= 5) {
        w.remove('s', `m${i - 5}`);
        removed.add(i - 5);
      }
      expect(w.size).toBeLessThanOrEqual(2 * cap);
      // The newest `cap` ids, rolled-back ones aside, are all there; none older than twice that is.
      if (i % 487 === 0) {
        for (let k = Math.max(0, i - cap + 1); k <= i; k++) expect(w.has('s', `m${k}`, i)).toBe(removed.has(k) ? false : true);
        for (let k = 0; k <= i - 2 * cap; k++) expect(w.has('s', `m${k}`, i)).toBe(false);
      }
    }

    // A re-added old id counts as new and survives the next `cap` - 1 ids.
    const old = 20_000 - cap + 1;
    w.add('s', `m${old}`, 20_001);
    for (let i = 0; i < cap - 1; i++) w.add('s', `n${i}`, 20_002 + i);
    expect(w.has('s', `m${old}`, 30_000)).toBe(true);
    // Removing it forgets it in both generations.
    w.remove('s', `m${old}`);
    expect(w.has('s', `m${old}`, 30_000)).toBe(false);
  });
});
