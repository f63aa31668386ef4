// The 32 KB limit applies to each call of a batch (SPEC §3). Measuring an item by serializing it
// again costs more than everything else the collector does with it, so the request text is scanned
// once instead: each item's size is its UTF-8 bytes as sent, without the whitespace between tokens
// (a pretty-printed batch is measured like the compact one a client would send).

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/**
 * Sizes in bytes of the items of the top-level `"batch"` array, in order. `text` must be valid JSON
 * whose top level is an object (the caller parsed it already). When the key repeats, the last one
 * counts, as with JSON.parse. Returns null when there is no top-level "batch" array.
 */
export function batchItemSizes(text: string): number[] | null {
  let depth = 0;
  let expectKey = false;
  let key: string | null = null;
  let inBatch = false;
  let sizes: number[] | null = null;
  let current: number[] = [];
  let item = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (isSpace(c)) continue;
    if (c === QUOTE) {
      const start = i;
      let bytes = 2;
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === QUOTE) break;
        if (d === BACKSLASH) {
          // An escape is ASCII: `\n` is two bytes, `\u00e9` six (the hex digits count below).
          bytes += 2;
          i++;
        } else if (d < 0x80) bytes += 1;
        else if (d < 0x800) bytes += 2;
        else if (d >= 0xd800 && d < 0xdc00 && i + 1 < n && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
          bytes += 4;
          i++;
        } else bytes += 3;
      }
      if (inBatch) item += bytes;
      else if (depth === 1 && expectKey) {
        const raw = text.slice(start + 1, i);
        key = raw.includes('\\') ? (JSON.parse(text.slice(start, i + 1)) as string) : raw;
        expectKey = false;
      }
      continue;
    }
    if (inBatch) {
      if (depth === 2 && (c === COMMA || c === CLOSE_ARRAY)) {
        if (c === COMMA || item > 0) current.push(item);
        item = 0;
        if (c === CLOSE_ARRAY) {
          depth = 1;
          inBatch = false;
          sizes = current;
        }
        continue;
      }
      item += 1;
      if (c === OPEN_OBJECT || c === OPEN_ARRAY) depth++;
      else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth--;
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (depth === 1 && c === OPEN_ARRAY && key === 'batch') {
        inBatch = true;
        current = [];
        item = 0;
      }
      depth++;
      if (depth === 1) expectKey = true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    } else if (depth === 1 && c === COMMA) {
      expectKey = true;
      key = null;
    }
  }
  return sizes;
}
