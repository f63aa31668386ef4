import { describe, expect, it } from 'vitest';
import { UUID_POOL_SIZE, UuidPool, uuidV4 } from '../../src/main/engine/client/uuid-pool';

// Lowercase, dashed, version nibble 4, variant bits 10 (8, 9, a or b): RFC 4122 §4.4.
const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('UuidPool (RFC 4122 v4 ids for the enqueue hot path)', () => {
  it('makes well-formed v4 ids across many refills', () => {
    const pool = new UuidPool(3);
    for (let i = 0; i < 3000; i++) expect(pool.take()).toMatch(V4);
  });

  it('never repeats an id, within a pool or across refills', () => {
    const pool = new UuidPool(16);
    const seen = new Set<string>();
    for (let i = 0; i < 50_000; i++) seen.add(pool.take());
    expect(seen.size).toBe(50_000);
  });

  it('gives different ids after each refill, not the same pool again', () => {
    const pool = new UuidPool(4);
    const first = Array.from({ length: 4 }, () => pool.take());
    const second = Array.from({ length: 4 }, () => pool.take());
    expect(new Set([...first, ...second]).size).toBe(8);
  });

  it('uses every random bit but the six fixed ones', () => {
    // Each of the 122 random bits must take both values over many ids; a digit stuck at one value
    // (a formatting slip, a byte never filled) would show up here.
    const pool = new UuidPool();
    const hex = Array.from({ length: 2000 }, () => pool.take().replaceAll('-', ''));
    for (let digit = 0; digit < 32; digit++) {
      const values = new Set(hex.map((h) => h[digit]));
      if (digit === 12) expect([...values]).toEqual(['4']);
      else if (digit === 16) expect([...values].sort()).toEqual(['8', '9', 'a', 'b']);
      else expect(values.size).toBe(16);
    }
  });

  it('refuses a size that cannot hold an id', () => {
    expect(() => new UuidPool(0)).toThrow(RangeError);
    expect(() => new UuidPool(1.5)).toThrow(RangeError);
  });

  it('the shared pool serves more than one pool of ids', () => {
    const ids = Array.from({ length: UUID_POOL_SIZE * 2 + 1 }, uuidV4);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(V4);
  });
});
