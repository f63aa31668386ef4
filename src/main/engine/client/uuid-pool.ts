import { randomFillSync } from 'node:crypto';

/** Ids made per refill: one randomFillSync call and one formatting pass serve this many calls. */
export const UUID_POOL_SIZE = 256;

export const UUID_LENGTH = 36;
const DASH = 0x2d;
const HEX_CODES = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
// Where each of the 16 random bytes puts its two hex digits in `xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`.
const DIGIT_OFFSETS = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
const DASH_OFFSETS = [8, 13, 18, 23];

/**
 * RFC 4122 version 4 UUIDs (122 bits from the CSPRNG), formatted a pool at a time into one ASCII
 * buffer, so that each id costs one small string copy. crypto.randomUUID builds every id from 20
 * concatenated pieces, which the enqueue hot path then pays for again in garbage collection.
 */
export class UuidPool {
  private readonly random: Buffer;
  private readonly text: Buffer;
  private next: number;

  constructor(private readonly size: number = UUID_POOL_SIZE) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError('UuidPool size must be a positive integer');
    this.random = Buffer.alloc(16 * size);
    this.text = Buffer.alloc(UUID_LENGTH * size);
    this.next = size;
  }

  /** A fresh lowercase v4 UUID, e.g. `9b2f…-…-4…-[89ab]…-…`. */
  take(): string {
    if (this.next === this.size) this.refill();
    const at = this.next++ * UUID_LENGTH;
    // A copy, not a slice of one big string: an id the caller keeps must not keep the pool alive.
    return this.text.toString('latin1', at, at + UUID_LENGTH);
  }

  /** A fresh UUID written as 36 ASCII bytes at `target[at]`, for callers that need its bytes, not a string. */
  takeInto(target: Uint8Array, at: number): void {
    if (this.next === this.size) this.refill();
    const from = this.next++ * UUID_LENGTH;
    const text = this.text;
    for (let i = 0; i < UUID_LENGTH; i++) target[at + i] = text[from + i];
  }

  private refill(): void {
    const { random, text } = this;
    randomFillSync(random);
    for (let id = 0; id < this.size; id++) {
      const r = id * 16;
      const t = id * UUID_LENGTH;
      random[r + 6] = (random[r + 6] & 0x0f) | 0x40; // version 4
      random[r + 8] = (random[r + 8] & 0x3f) | 0x80; // variant 10xx (RFC 4122)
      for (let i = 0; i < 16; i++) {
        const byte = random[r + i];
        const at = t + DIGIT_OFFSETS[i];
        text[at] = HEX_CODES[byte >> 4];
        text[at + 1] = HEX_CODES[byte & 0x0f];
      }
      for (const d of DASH_OFFSETS) text[t + d] = DASH;
    }
    this.next = 0;
  }
}

const shared = new UuidPool();

/** A v4 UUID from the process-wide pool (what crypto.randomUUID returns, made cheaper). */
export function uuidV4(): string {
  return shared.take();
}

/** A v4 UUID from the process-wide pool, written as 36 ASCII bytes at `target[at]`. */
export function uuidV4Into(target: Uint8Array, at: number): void {
  shared.takeInto(target, at);
}
