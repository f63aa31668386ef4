import { randomBytes } from 'node:crypto';

/**
 * A 63-bit fingerprint of (source, messageId), computed into `fp` (no allocation per call): two
 * MurmurHash3-style 32-bit hashes of the id's UTF-16 code units under two seeds drawn at each start,
 * each lane seeded also by the source's number (unique per source in the process, so two sources
 * never share a seed). Seeds unknown outside the process mean ids cannot be crafted to collide with
 * another; two different ids share a fingerprint (63 bits: lo is kept odd) with odds of about 1 in
 * 9 × 10^18 per pair.
 */
export interface Fingerprint {
  hi: number;
  lo: number;
}

const seeds = randomBytes(8);
const SEED_HI = seeds.readInt32LE(0);
const SEED_LO = seeds.readInt32LE(4);

function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

function round(h: number, unit: number): number {
  let k = Math.imul(unit, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  h ^= Math.imul(k, 0x1b873593);
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

/**
 * source: a number unique to the source (DedupWindow numbers them); multiplying by an odd constant keeps
 * them distinct. The id is taken as calls.message_id keeps it, with U+FFFD for a lone surrogate (UTF-8
 * has none), since the window is rebuilt from that column at start.
 */
export function fingerprint(source: number, received: string, fp: Fingerprint): void {
  const id = received.toWellFormed();
  let hi = SEED_HI ^ Math.imul(source, 0x9e3779b1);
  let lo = SEED_LO ^ Math.imul(source, 0x85ebca6b);
  for (let i = 0; i < id.length; i++) {
    const unit = id.charCodeAt(i);
    hi = round(hi, unit);
    lo = round(lo, unit ^ 0x3c6ef372);
  }
  fp.hi = fmix(hi ^ id.length);
  // Never 0: a slot whose lo is 0 is empty.
  fp.lo = fmix(lo ^ id.length) | 1;
}

/**
 * Fingerprints with an arrival time each, in typed arrays: open addressing with linear probing,
 * kept at most half full, deletion by backward shift (no tombstones). Nothing here is a JS object
 * per entry, so the collector's hot path neither allocates for it nor gives the garbage collector
 * hundreds of thousands of strings and map entries to trace (issue 27).
 */
export class FingerprintTable {
  /** [hi, lo] per slot; lo === 0: empty. */
  private readonly keys: Int32Array;
  private readonly times: Float64Array;
  private readonly mask: number;
  count = 0;

  /** Room for `capacity` entries. */
  constructor(readonly capacity: number) {
    let slots = 16;
    while (slots < capacity * 2) slots *= 2;
    this.keys = new Int32Array(slots * 2);
    this.times = new Float64Array(slots);
    this.mask = slots - 1;
  }

  /** The time stored with the fingerprint, or undefined. */
  get(fp: Fingerprint): number | undefined {
    const slot = this.find(fp);
    return slot < 0 ? undefined : this.times[slot];
  }

  /** Stores or replaces; false when it was not there and the table is full. */
  set(fp: Fingerprint, at: number): boolean {
    const keys = this.keys;
    let slot = fp.hi & this.mask;
    for (;;) {
      const lo = keys[slot * 2 + 1];
      if (lo === 0) break;
      if (lo === fp.lo && keys[slot * 2] === fp.hi) {
        this.times[slot] = at;
        return true;
      }
      slot = (slot + 1) & this.mask;
    }
    if (this.count >= this.capacity) return false;
    keys[slot * 2] = fp.hi;
    keys[slot * 2 + 1] = fp.lo;
    this.times[slot] = at;
    this.count++;
    return true;
  }

  delete(fp: Fingerprint): boolean {
    let hole = this.find(fp);
    if (hole < 0) return false;
    const keys = this.keys;
    const mask = this.mask;
    // Backward shift: move later entries of the run into the hole when their home slot allows it.
    let slot = hole;
    for (;;) {
      slot = (slot + 1) & mask;
      const lo = keys[slot * 2 + 1];
      if (lo === 0) break;
      const home = keys[slot * 2] & mask;
      const between = hole <= slot ? home > hole && home <= slot : home > hole || home <= slot;
      if (between) continue;
      keys[hole * 2] = keys[slot * 2];
      keys[hole * 2 + 1] = lo;
      this.times[hole] = this.times[slot];
      hole = slot;
    }
    keys[hole * 2] = 0;
    keys[hole * 2 + 1] = 0;
    this.count--;
    return true;
  }

  clear(): void {
    if (this.count === 0) return;
    this.keys.fill(0);
    this.count = 0;
  }

  private find(fp: Fingerprint): number {
    const keys = this.keys;
    let slot = fp.hi & this.mask;
    for (;;) {
      const lo = keys[slot * 2 + 1];
      if (lo === 0) return -1;
      if (lo === fp.lo && keys[slot * 2] === fp.hi) return slot;
      slot = (slot + 1) & this.mask;
    }
  }
}
