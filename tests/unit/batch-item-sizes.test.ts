import { describe, expect, it } from 'vitest';
import { batchItemSizes as sizesOf, leastBytes, mayHoldOversizeItem } from '../../src/main/engine/collector/batch-item-sizes';

const batchItemSizes = (text: string) => sizesOf(Buffer.from(text));

// Reference: the UTF-8 length of the item serialized compactly (what a client sends).
const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v));

describe('batchItemSizes', () => {
  it('measures every item of a compact batch exactly', () => {
    const batch = [
      { type: 'track', event: 'Order Completed', properties: { total: 12.5, tags: ['a', 'b'], nested: { deep: [1, [2, [3]]] } } },
      { type: 'identify', userId: 'u', traits: { name: 'Zoë', city: '東京', emoji: '😀', quote: 'say "hi"\\n', ctrl: '\u0001' } },
      'not an object',
      42,
      null,
      [1, 2, { a: '}' }],
      {},
    ];
    const text = JSON.stringify({ writeKey: 'k', batch, context: { library: { name: 'x' } } });
    expect(batchItemSizes(text)).toEqual(batch.map(bytes));
  });

  it('ignores whitespace between tokens but not inside strings', () => {
    const batch = [{ type: 'track', event: 'two  spaces', properties: { list: [1, 2, 3] } }, { a: ' \n\t ' }];
    expect(batchItemSizes(JSON.stringify({ batch }, null, 4))).toEqual(batch.map(bytes));
    expect(batchItemSizes(`{ "batch" : [ ${JSON.stringify(batch[0])} ,\n\n ${JSON.stringify(batch[1])} ] }`)).toEqual(batch.map(bytes));
  });

  it('counts escapes as sent, and multi-byte characters by their UTF-8 bytes', () => {
    expect(batchItemSizes('{"batch":["\\u00e9"]}')).toEqual([8]);
    expect(batchItemSizes('{"batch":["a\\\\","b\\"c",{"k\\\\":"\\\\\\""}]}')).toEqual([5, 6, 14]);
    expect(batchItemSizes(`{"batch":["\ud800"]}`)).toEqual([Buffer.byteLength('"\ud800"')]);
    expect(batchItemSizes(`{"batch":["\ud83d\ude00x"]}`)).toEqual([7]);
  });

  it('finds the top-level key only, takes the last of repeated keys, reads escaped key names', () => {
    const inner = JSON.stringify({ context: { batch: [1, 2, 3] }, batch: [{ a: 1 }] });
    expect(batchItemSizes(inner)).toEqual([7]);
    expect(batchItemSizes('{"batch":[1,2],"x":"batch","batch":["abc"]}')).toEqual([5]);
    expect(batchItemSizes('{"b\\u0061tch":[true,false]}')).toEqual([4, 5]);
    expect(batchItemSizes('{"batches":[1],"other":{"batch":[1]}}')).toBeNull();
    expect(batchItemSizes('{"batch":"no"}')).toBeNull();
  });

  it('an empty batch has no items', () => {
    expect(batchItemSizes('{"batch":[]}')).toEqual([]);
    expect(batchItemSizes('{"batch":[ ]}')).toEqual([]);
  });

  it('agrees with the reference on generated batches', () => {
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    const chars = ['a', 'é', '東', '😀', '"', '\\', '\n', ' ', '}', ']', ',', ':'];
    const value = (depth: number): unknown => {
      switch (rnd(depth > 3 ? 4 : 6)) {
        case 0: return Array.from({ length: rnd(8) }, () => chars[rnd(chars.length)]).join('');
        case 1: return rnd(100000) / 7;
        case 2: return rnd(2) === 0;
        case 3: return null;
        case 4: return Array.from({ length: rnd(4) }, () => value(depth + 1));
        default: return Object.fromEntries(Array.from({ length: rnd(4) }, (_, i) => [`k${i}${chars[rnd(chars.length)]}`, value(depth + 1)]));
      }
    };
    for (let round = 0; round < 200; round++) {
      const batch = Array.from({ length: rnd(6) }, () => value(0));
      expect(batchItemSizes(JSON.stringify({ sentAt: 'x', batch }))).toEqual(batch.map(bytes));
    }
  });
});

describe('mayHoldOversizeItem', () => {
  // A small deterministic generator of JSON values: nested objects and arrays, escapes, multi-byte text.
  function rng(seed: number) {
    return () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  }
  const pieces = ['a', 'é', '東', '😀', '"', '\\', '\n', ' ', '\u0001', 'xyz'];
  function value(r: () => number, depth: number): unknown {
    const pick = r();
    if (depth > 2 || pick < 0.3) return r() < 0.5 ? Math.floor(r() * 1e6) / 7 : r() < 0.5 ? null : true;
    if (pick < 0.6) return Array.from({ length: Math.floor(r() * 40) }, () => pieces[Math.floor(r() * pieces.length)]).join('');
    if (pick < 0.75) return Array.from({ length: Math.floor(r() * 4) }, () => value(r, depth + 1));
    return Object.fromEntries(Array.from({ length: Math.floor(r() * 5) }, (_, i) => [`k${i}${pieces[Math.floor(r() * pieces.length)]}`, value(r, depth + 1)]));
  }

  it('bounds every value from below by its bytes as sent, exactly for flat ones', () => {
    for (let seed = 1; seed <= 2000; seed++) {
      const v = value(rng(seed), 0);
      expect(leastBytes(v), JSON.stringify(v)).toBeLessThanOrEqual(bytes(v));
    }
    for (const flat of [{}, [], { a: 1 }, { type: 'track', event: 'E', n: 1 }, ['ab', 'c'], 'plain', 7]) expect(leastBytes(flat)).toBe(bytes(flat));
  });

  it('never rules out a batch that holds an item over the limit (random batches, compact and pretty)', () => {
    let ruledOut = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const r = rng(seed);
      const batch = Array.from({ length: 1 + Math.floor(r() * 12) }, () => value(r, 0));
      for (const text of [JSON.stringify({ batch }), JSON.stringify({ batch, context: { k: 'v' } }, null, 2)]) {
        const body = Buffer.from(text);
        const largest = Math.max(...sizesOf(body)!);
        for (const limit of [16, 64, 256, 1024]) {
          if (!mayHoldOversizeItem(body.length, batch, limit)) {
            ruledOut++;
            expect(largest, `seed ${seed}, limit ${limit}`).toBeLessThanOrEqual(limit);
          }
        }
      }
    }
    // The bound must also be useful, not always "maybe".
    expect(ruledOut).toBeGreaterThan(200);
  });

  it('rules out a typical SDK batch of 100 calls over 32 KB, and keeps one with a large item', () => {
    const call = (i: number, pad = '') => ({ type: 'track', userId: 'user-4c1f0a9e', event: 'Order Completed', messageId: `m-${i}`, timestamp: '2026-11-21T10:00:00.000Z', properties: { orderId: 'ord-1', pad }, context: { ip: '203.0.113.7' } });
    const batch = Array.from({ length: 100 }, (_, i) => call(i, 'x'.repeat(300)));
    const body = Buffer.from(JSON.stringify({ batch }));
    expect(body.length).toBeGreaterThan(32 * 1024);
    expect(mayHoldOversizeItem(body.length, batch, 32 * 1024)).toBe(false);
    const big = [...batch.slice(0, 10), call(10, 'y'.repeat(40 * 1024))];
    expect(mayHoldOversizeItem(Buffer.byteLength(JSON.stringify({ batch: big })), big, 32 * 1024)).toBe(true);
    // At or under the limit in total, nothing can be over it.
    expect(mayHoldOversizeItem(32 * 1024, [call(0, 'z'.repeat(32 * 1024))], 32 * 1024)).toBe(false);
  });
});
