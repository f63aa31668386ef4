import { describe, expect, it } from 'vitest';
import { bodyMatches, bodySearchText } from '../../src/shared/search-filter';
import { indexable, mergeNewestFirst, slicePace } from '../../src/main/engine/store/body-search';

// The body index (store/body-search.ts) holds bodySearchText and answers a term by substring: for
// every term it takes (indexable), that must be what bodyMatches says of the item itself.
const items: unknown[] = [
  { type: 'track', userId: 'User_42', properties: { Email: 'Alice@Example.com', total: 12345, ok: true, tags: ['Ünïcode', 'ΣΟΦΊΑ'] } },
  { traits: { name: 'ÉMILE Zola', nested: { deeper: [{ KEY: 'Value "quoted"' }, null, 7] } } },
  'not json at all: İstanbul KELVIN \u212A',
  [],
  { '': '', emptyKey: '' },
];
const terms = ['alice@example', 'email', 'user_42', '12345', 'true', 'ünïcode', 'σοφία', 'émile zola', 'key', 'value "quoted"', 'not json', 'i̇stanbul', 'kelvin k', 'zzz', 'track', 'emptykey', 'tags', 'l_4'];

describe('bodySearchText (the body index text)', () => {
  it('holds a term exactly when bodyMatches finds it in the item, for every term the index takes', () => {
    for (const item of items) {
      const text = bodySearchText(item);
      for (const term of terms) {
        expect(indexable(term), term).toBe(true);
        expect(text.includes(term), `${JSON.stringify(term)} in ${JSON.stringify(item)}`).toBe(bodyMatches(item, term));
      }
    }
  });

  it('takes terms of three characters or more without a line break; leaves the rest to the bodies', () => {
    expect(indexable('abc')).toBe(true);
    expect(indexable('ab')).toBe(false);
    expect(indexable('é')).toBe(false);
    // Three code points, one of them outside the BMP (two UTF-16 units).
    expect(indexable('a😀b')).toBe(true);
    expect(indexable('😀😀')).toBe(false);
    expect(indexable('zola\nparis')).toBe(false);
    expect(indexable('ab\uD800c')).toBe(false);
  });

  it('merges two newest-first lists without repeats', () => {
    expect(mergeNewestFirst([9, 7, 3], [8, 7, 2, 1])).toEqual([9, 8, 7, 3, 2, 1]);
    expect(mergeNewestFirst([], [5, 4])).toEqual([5, 4]);
    expect(mergeNewestFirst([5, 4], [])).toEqual([5, 4]);
  });
});

describe('the body indexer’s pace (slicePace)', () => {
  it('one slice per 600 ms while calls trickle in, none during a flood, back to back once they stop', () => {
    // A trickle: up to 600 calls between two ticks 600 ms apart.
    expect(slicePace(1, 0)).toEqual({ slice: true, gapMs: 600 });
    expect(slicePace(600, 100)).toEqual({ slice: true, gapMs: 600 });
    // A flood (over 1,000 calls a second): the collector keeps the engine's time; the tail is read from bodies meanwhile.
    expect(slicePace(601, 0)).toEqual({ slice: false, gapMs: 600 });
    expect(slicePace(100_000, 249)).toEqual({ slice: false, gapMs: 600 });
    // 250 ms without a call: caught up on idle, whatever came before.
    expect(slicePace(0, 250)).toEqual({ slice: true, gapMs: 2 });
    expect(slicePace(100_000, 5_000)).toEqual({ slice: true, gapMs: 2 });
  });
});
