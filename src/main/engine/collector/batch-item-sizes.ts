// The 32 KB limit applies to each call of a batch (SPEC §3). Measuring an item by serializing it
// again costs more than everything else the collector does with it, so the request bytes are scanned
// once instead: each item's size is its bytes as sent, without the whitespace between tokens (a
// pretty-printed batch is measured like the compact one a client would send).

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** Index of the quote that closes the string opened at `start`. */
function stringEnd(body: Buffer, start: number): number {
  let end = start;
  for (;;) {
    end = body.indexOf(QUOTE, end + 1);
    if (end === -1) return body.length - 1;
    // Escaped when preceded by an odd run of backslashes.
    let slashes = 0;
    while (body[end - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return end;
  }
}

/**
 * Sizes in bytes of the items of the top-level `"batch"` array, in order. `body` must be valid JSON
 * whose top level is an object (the caller parsed it already). When the key repeats, the last one
 * counts, as with JSON.parse. Returns null when there is no top-level "batch" array.
 */
export function batchItemSizes(body: Buffer): number[] | null {
  let depth = 0;
  let expectKey = false;
  let key: string | null = null;
  let inBatch = false;
  let sizes: number[] | null = null;
  let current: number[] = [];
  let item = 0;
  const n = body.length;
  for (let i = 0; i < n; i++) {
    const c = body[i];
    if (isSpace(c)) continue;
    if (c === QUOTE) {
      const end = stringEnd(body, i);
      if (inBatch) item += end - i + 1;
      else if (depth === 1 && expectKey) {
        const raw = body.toString('utf8', i, end + 1);
        key = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
        expectKey = false;
      }
      i = end;
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

/**
 * Whether some item of a parsed batch could be over `limit` bytes as sent, judged from the body's
 * length alone, so the scan above runs only when it might find one. Items are disjoint parts of the
 * body, so an item is at most the body's length minus what all the others take at least. That least
 * is a lower bound from each item's top-level keys and string values (a JS string's length never
 * exceeds its bytes as sent: every UTF-16 unit takes at least one byte, escapes more).
 */
export function mayHoldOversizeItem(bodyBytes: number, items: unknown[], limit: number): boolean {
  if (bodyBytes <= limit) return false;
  let sum = 0;
  let max = 0;
  for (let i = 0; i < items.length; i++) {
    const least = leastBytes(items[i]);
    sum += least;
    if (least > max) max = least;
    if (bodyBytes - sum + max <= limit) return false;
  }
  return bodyBytes - sum + max > limit;
}

/**
 * Fewest bytes `v` can take as compact JSON, looking `depth` levels into objects and arrays (two:
 * an item's own keys and those of its properties, traits and context, where the bytes usually are).
 */
export function leastBytes(v: unknown, depth = 2): number {
  if (typeof v === 'string') return v.length + 2;
  if (typeof v !== 'object' || v === null) return 1;
  if (Array.isArray(v)) {
    if (v.length === 0) return 2;
    if (depth === 1) return 2 * v.length + 1; // brackets, commas, at least a byte each
    let n = 1; // "[" and, per element, "," or "]"
    for (let i = 0; i < v.length; i++) n += leastBytes(v[i], depth - 1) + 1;
    return n;
  }
  let n = 1; // "{" and, per member, "," or "}"
  for (const key of Object.keys(v)) {
    const value = (v as Record<string, unknown>)[key];
    n += key.length + 4 + (depth === 1 ? (typeof value === 'string' ? value.length + 2 : typeof value === 'object' && value !== null ? 2 : 1) : leastBytes(value, depth - 1));
  }
  return n === 1 ? 2 : n;
}
