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

  it('forgets a rolled-back id', () => {
    const w = new DedupWindow(1000, 10);
    w.add('s', 'm', 0);
    w.remove('s', 'm');
    expect(w.has('s', 'm', 1)).toBe(false);
  });
});
