import { describe, expect, it } from 'vitest';
import { batchItemSizes as sizesOf } from '../../src/main/engine/collector/batch-item-sizes';

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
