import { describe, expect, it } from 'vitest';
import { urlCountOf } from '../../src/renderer/features/inspector/delivery-model';

describe('inspector: how many URL timelines a delivery shows', () => {
  it('is its URLs, or more when an attempt names a later URL index', () => {
    expect(urlCountOf({ urls: [{ url: 'http://a/', headers: {} }], attempts: [] })).toBe(1);
    expect(urlCountOf({ urls: [{ url: 'http://a/', headers: {} }], attempts: [{ urlIndex: 0 }, { urlIndex: 2 }] })).toBe(3);
    expect(urlCountOf({ urls: [], attempts: [] })).toBe(0);
  });

  it('counts a delivery with hundreds of thousands of attempts without overflowing the stack', () => {
    // A custom schedule of short delays over a long window makes this many: Math.max(...attempts)
    // threw "Maximum call stack size exceeded" and the call detail crashed.
    const attempts = Array.from({ length: 300_000 }, (_, i) => ({ urlIndex: i % 2 }));
    expect(urlCountOf({ urls: [{ url: 'http://a/', headers: {} }, { url: 'http://b/', headers: {} }], attempts })).toBe(2);
  });
});
