import { describe, expect, it } from 'vitest';
import { sizeOfCall } from '../../src/main/engine/tracking-plans/plan-checks';
import { SIZE_BUCKETS } from '../../src/main/engine/tracking-plans/work-bounds';
import { mulberry32, randomSeed, type Random } from '../../src/main/engine/seeded-random';

const LIMIT = SIZE_BUCKETS[SIZE_BUCKETS.length - 1]!;

/** The size as its comment defines it, written plainly: every value, key and character counted, then capped. */
function reference(value: unknown): number {
  let values = 0;
  let keys = 0;
  let chars = 0;
  const visit = (v: unknown): void => {
    values++;
    if (typeof v === 'string') chars += v.length;
    else if (Array.isArray(v)) v.forEach(visit);
    else if (typeof v === 'object' && v !== null) {
      for (const [k, x] of Object.entries(v)) {
        keys++;
        chars += k.length;
        visit(x);
      }
    }
  };
  visit(value);
  const size = Math.max(values * 2, keys * 6, chars);
  return values * 2 > LIMIT || keys * 6 > LIMIT || chars > LIMIT ? LIMIT : size;
}

function randomJson(rand: Random, depth: number, budget: { left: number }): unknown {
  budget.left--;
  const pick = Math.floor(rand() * (depth > 5 || budget.left <= 0 ? 4 : 6));
  const text = () => 'abcdefghijklmnop'.slice(0, Math.floor(rand() * 17)).repeat(rand() < 0.05 ? 400 : 1);
  switch (pick) {
    case 0: return text();
    case 1: return Math.floor(rand() * 1e6) / 7;
    case 2: return rand() < 0.5;
    case 3: return null;
    case 4: return Array.from({ length: Math.floor(rand() * (rand() < 0.05 ? 3000 : 8)) }, () => randomJson(rand, depth + 1, budget));
    default: {
      const o: Record<string, unknown> = {};
      const n = Math.floor(rand() * (rand() < 0.05 ? 3000 : 8));
      for (let i = 0; i < n; i++) o[`${text()}${i}`] = randomJson(rand, depth + 1, budget);
      return o;
    }
  }
}

describe('sizeOfCall (the size a call is estimated at, issue 38)', () => {
  it('counts as the plain definition does, on seeded random JSON of every size up to past the limit', () => {
    const seed = Number(process.env.SIZE_SEED ?? randomSeed());
    console.log(`size-of-call seed ${seed} (SIZE_SEED=${seed} repeats it)`);
    const rand = mulberry32(seed);
    let capped = 0;
    for (let i = 0; i < 400; i++) {
      const v = randomJson(rand, 0, { left: 4000 });
      const want = reference(v);
      if (want === LIMIT) capped++;
      expect(sizeOfCall(v), `seed ${seed}, value ${i}`).toBe(want);
    }
    // The fuzz reaches both sides of the limit.
    expect(capped).toBeGreaterThan(0);
    expect(capped).toBeLessThan(400);
  });

  it('gives a bench call its counts, a bare string or number its own, and stops at the limit in one long array', () => {
    const call = { type: 'track', event: 'Order Completed', properties: { orderId: 'ord-1', products: [{ sku: 'a', price: 1 }] } };
    expect(sizeOfCall(call)).toBe(reference(call));
    expect(sizeOfCall('x'.repeat(100))).toBe(100);
    expect(sizeOfCall('x'.repeat(LIMIT + 1))).toBe(LIMIT);
    expect(sizeOfCall(7)).toBe(2);
    expect(sizeOfCall(new Array(1_000_000).fill(0))).toBe(LIMIT);
  });
});
