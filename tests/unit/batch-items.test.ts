import { describe, expect, it } from 'vitest';
import { arrayItemSpans, batchBodyPreview, batchItemsPage, DETAIL_BATCH_BODY_BYTES } from '../../src/main/engine/store/batch-items';

// An Actions batch body's items, found in its bytes without parsing (issue 22 item 7).

const items = (text: string) => arrayItemSpans(Buffer.from(text), 0, () => true).map(([s, e]) => Buffer.from(text).toString('utf8', s, e));

describe('batch body items', () => {
  it('splits at top-level commas only: strings with brackets, commas, quotes and escapes, nested values, UTF-8, whitespace', () => {
    const parts = ['{"a":"x,]}[{\\"\\\\"}', '[1,[2,3],{"b":[]}]', 'null', '"é😀,"', '42', '{}', '[]'];
    expect(items(`[${parts.join(',')}]`)).toEqual(parts);
    expect(items(` [ ${parts.join(' ,\n')} ] `)).toEqual(parts);
    expect(items('[]')).toEqual([]);
    expect(items('not an array')).toEqual([]);
  });

  it('pages from an offset, stops when asked, and keeps each item\'s exact bytes', () => {
    const parts = Array.from({ length: 10 }, (_, i) => JSON.stringify({ i, s: 'ü'.repeat(i) }));
    const body = Buffer.from(`[${parts.join(',')}]`);
    const page = batchItemsPage(7, body, parts.map((_, i) => 100 + i), 3, 4);
    expect(page).toEqual({ deliveryId: 7, offset: 3, total: 10, items: [3, 4, 5, 6].map((i) => ({ item: i, callId: 100 + i, data: parts[i] })) });
    expect(batchItemsPage(7, body, parts.map((_, i) => i), 10, 4).items).toEqual([]);
  });

  it('a detail shows a body over 64 KB as its first items within 64 KB (at least one), and a smaller one whole', () => {
    const small = Buffer.from('[1,2]');
    expect(batchBodyPreview(small, 2)).toBeNull();
    const parts = Array.from({ length: 100 }, (_, i) => JSON.stringify({ i, pad: 'x'.repeat(1000) }));
    const body = Buffer.from(`[${parts.join(',')}]`);
    const p = batchBodyPreview(body, 100)!;
    expect(Buffer.byteLength(p.body)).toBeLessThanOrEqual(DETAIL_BATCH_BODY_BYTES);
    expect(JSON.parse(p.body)).toEqual(parts.slice(0, p.marker.shownItems).map((x) => JSON.parse(x)));
    expect(p.marker).toEqual({ bytes: body.length, items: 100, shownItems: 64 });
    const huge = Buffer.from(`[${JSON.stringify('x'.repeat(70_000))},1]`);
    expect(batchBodyPreview(huge, 2)!.marker.shownItems).toBe(1);
  });
});
