import type { BatchItemsPage } from '../../../shared/types';

// An Actions batch's body is one JSON array of its calls' data (dispatcher/delivery-plan.ts
// batchRequest), up to 4,000 items of up to 512 KB. A call's detail shows only its first items and the
// rest is read a page at a time (getBatchItems), so opening one member of a 1,000-call batch of 30 KB
// calls costs kilobytes, not the 30 MB body twice (issue 22). Items are found by scanning the stored
// bytes: JSON's structural characters are ASCII, and no byte of a multi-byte UTF-8 character is, so
// the scan needs no decoding and each item comes back as the exact bytes that were sent.

/** The most of a batch body a call's detail carries: its first items up to this size (at least one). */
export const DETAIL_BATCH_BODY_BYTES = 64 * 1024;
/** The most item bytes one getBatchItems page carries (at least one item). */
export const BATCH_PAGE_BYTES = 1024 * 1024;

const OPEN_BRACE = 0x7b, CLOSE_BRACE = 0x7d, OPEN_BRACKET = 0x5b, CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22, BACKSLASH = 0x5c, COMMA = 0x2c;

/**
 * Byte spans [start, end) of a JSON array's items `from` onwards, taken while `take` says so (it sees
 * each span, and how many were taken before it, before it is added). Whitespace around items is left
 * out. Stops scanning once `take` refuses, so reading the first items of a 30 MB body is cheap.
 */
export function arrayItemSpans(body: Uint8Array, from: number, take: (start: number, end: number, taken: number) => boolean): [number, number][] {
  const out: [number, number][] = [];
  let i = body.indexOf(OPEN_BRACKET);
  if (i < 0) return out;
  let depth = 0;
  let inString = false;
  let index = 0;
  let start = i + 1;
  for (i = i + 1; i < body.length; i++) {
    const b = body[i];
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
      continue;
    }
    if (b === QUOTE) inString = true;
    else if (b === OPEN_BRACE || b === OPEN_BRACKET) depth++;
    else if ((b === CLOSE_BRACE || b === CLOSE_BRACKET) && depth > 0) depth--;
    else if (depth === 0 && (b === COMMA || b === CLOSE_BRACKET)) {
      const span = trim(body, start, i);
      if (span[1] > span[0] && index >= from) {
        if (!take(span[0], span[1], out.length)) return out;
        out.push(span);
      }
      index++;
      if (b === CLOSE_BRACKET) return out;
      start = i + 1;
    }
  }
  return out;
}

function trim(body: Uint8Array, start: number, end: number): [number, number] {
  const ws = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
  while (start < end && ws(body[start])) start++;
  while (end > start && ws(body[end - 1])) end--;
  return [start, end];
}

/**
 * What a call's detail shows of a batch body: null when it is at most DETAIL_BATCH_BODY_BYTES (shown
 * whole); otherwise its first items as a JSON array, at least one, within that size.
 */
export function batchBodyPreview(body: Buffer, items: number): { body: string; marker: { bytes: number; items: number; shownItems: number } } | null {
  if (body.length <= DETAIL_BATCH_BODY_BYTES) return null;
  // `[`, then each item with the comma or `]` after it; the first item whatever its size.
  let size = 1;
  const spans = arrayItemSpans(body, 0, (start, end, taken) => ((size += end - start + 1), taken === 0 || size <= DETAIL_BATCH_BODY_BYTES));
  if (spans.length === 0) return null; // not an array: nothing to page, shown whole
  const text = `[${spans.map(([s, e]) => body.toString('utf8', s, e)).join(',')}]`;
  return { body: text, marker: { bytes: body.length, items, shownItems: spans.length } };
}

/** Up to `limit` items of a batch body from `offset`, within BATCH_PAGE_BYTES (at least one item). */
export function batchItemsPage(deliveryId: number, body: Buffer, callIds: readonly number[], offset: number, limit: number): BatchItemsPage {
  let size = 0;
  const spans = arrayItemSpans(body, offset, (start, end, taken) => taken < limit && ((size += end - start), taken === 0 || size <= BATCH_PAGE_BYTES));
  return {
    deliveryId,
    offset,
    total: callIds.length,
    items: spans.map(([s, e], k) => ({ item: offset + k, callId: callIds[offset + k], data: body.toString('utf8', s, e) })),
  };
}
