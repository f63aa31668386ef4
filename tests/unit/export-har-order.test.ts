import { describe, expect, it } from 'vitest';
import { AttemptOrder } from '../../src/main/engine/simulation/export-har-order';
import { Pace } from '../../src/main/engine/simulation/export-slices';
import { mulberry32 } from '../../src/main/engine/seeded-random';

// The HAR export's order: runs sorted as they arrive, merged as entries are written. It must be the
// order one sort of every pair gave (the export before issue 38), ties on the start time included.

function oneSort(runs: [number, number][][]): number[] {
  return runs.flat().sort((a, b) => a[0] - b[0] || a[1] - b[1]).map((p) => p[1]);
}

function merged(runs: [number, number][][], takes: () => number): number[] {
  const order = new AttemptOrder();
  for (const run of runs) order.addRun(run.map((p) => [p[0], p[1]]));
  const out: number[] = [];
  for (let page = order.take(takes()); page.length > 0; page = order.take(takes())) out.push(...page);
  return out;
}

describe('AttemptOrder', () => {
  it('gives the order of one sort, over seeded runs with ties, interleaving and empty runs', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const r = mulberry32(seed);
      let nextId = 1;
      const base = 1_795_000_000_000;
      const runs = Array.from({ length: Math.floor(r() * 30) }, () =>
        // Few distinct times (ties on the millisecond are common), ids unique but not in time order.
        Array.from({ length: Math.floor(r() * 50) }, (): [number, number] => [base + Math.floor(r() * 40), 0]),
      );
      const ids = Array.from({ length: runs.flat().length }, () => nextId++).sort(() => r() - 0.5);
      let k = 0;
      for (const run of runs) for (const pair of run) pair[1] = ids[k++]!;
      const expected = oneSort(runs);
      expect(merged(runs, () => 1 + Math.floor(r() * 20))).toEqual(expected);
      expect(merged(runs, () => 1_000_000)).toEqual(expected);
    }
  });

  it('is empty without runs, and refuses a run once taking began', () => {
    const order = new AttemptOrder();
    expect(order.take(10)).toEqual([]);
    const o2 = new AttemptOrder();
    o2.addRun([[5, 2], [5, 1]]);
    expect(o2.size).toBe(2);
    expect(o2.take(1)).toEqual([1]);
    expect(() => o2.addRun([[1, 3]])).toThrow();
    expect(o2.take(5)).toEqual([2]);
    expect(o2.take(5)).toEqual([]);
  });

  it('holds many pairs (growing its arrays) in order', () => {
    const order = new AttemptOrder();
    const runs: [number, number][][] = [];
    for (let i = 0; i < 50; i++) runs.push(Array.from({ length: 1_000 }, (_, j): [number, number] => [((j * 7919 + i) % 5_000) * 3, i * 1_000 + j]));
    for (const run of runs) order.addRun(run.map((p) => [p[0], p[1]]));
    expect(order.size).toBe(50_000);
    const out: number[] = [];
    for (let page = order.take(333); page.length > 0; page = order.take(333)) out.push(...page);
    expect(out).toEqual(oneSort(runs));
  });
});

describe('Pace', () => {
  it('fits the count to the time from what the last pieces cost, believing slower at once and faster halfway', () => {
    const pace = new Pace(0.2, 1, 5_000);
    expect(pace.fit(10)).toBe(50);
    pace.took(50, 20); // 0.4 ms each: believed at once
    expect(pace.fit(10)).toBe(25);
    pace.took(25, 2.5); // 0.1 ms each: halfway, 0.25
    expect(pace.fit(10)).toBe(40);
    pace.took(0, 5); // nothing done tells nothing
    expect(pace.fit(10)).toBe(40);
    pace.took(1, 500);
    expect(pace.fit(10)).toBe(1);
    const quick = new Pace(0.000001, 1, 5_000);
    expect(quick.fit(10)).toBe(5_000);
  });
});
