/**
 * HAR's entry order (oldest attempt first; retries of older calls interleave with newer calls) without
 * one sort of every attempt: the [startedAt, attemptId] pairs arrive a page of calls at a time, each
 * page is sorted as it arrives (a run), and the runs are merged as the entries are written, a few
 * hundred at a time. Sorting a million pairs at once held the loop about a second; as arrays of two
 * numbers they took ~80 bytes each, here 16 (two Float64Arrays).
 */
export class AttemptOrder {
  #time = new Float64Array(1024);
  #id = new Float64Array(1024);
  #length = 0;
  /** Where each run ends (runs are consecutive, the first starts at 0). */
  readonly #ends: number[] = [];
  /** The merge: each run's next position, and a min-heap of runs by their next pair. */
  #pos: Float64Array | null = null;
  #heap: number[] = [];

  get size(): number {
    return this.#length;
  }

  /** One page's pairs, in any order. Only before the first take(). */
  addRun(pairs: [number, number][]): void {
    if (this.#pos) throw new Error('AttemptOrder: addRun after take');
    if (pairs.length === 0) return;
    pairs.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    this.#reserve(this.#length + pairs.length);
    for (const [time, id] of pairs) {
      this.#time[this.#length] = time;
      this.#id[this.#length++] = id;
    }
    this.#ends.push(this.#length);
  }

  /** The next (up to) `n` attempt ids in order; [] once all were taken. */
  take(n: number): number[] {
    if (!this.#pos) this.#startMerge();
    const out: number[] = [];
    const heap = this.#heap;
    const pos = this.#pos!;
    while (out.length < n && heap.length > 0) {
      const run = heap[0]!;
      out.push(this.#id[pos[run]!]!);
      pos[run]!++;
      if (pos[run]! === this.#ends[run]) {
        const last = heap.pop()!;
        if (heap.length > 0) {
          heap[0] = last;
          this.#down(0);
        }
      } else {
        this.#down(0);
      }
    }
    return out;
  }

  #startMerge(): void {
    const runs = this.#ends.length;
    this.#pos = new Float64Array(runs);
    for (let r = 1; r < runs; r++) this.#pos[r] = this.#ends[r - 1]!;
    this.#heap = Array.from({ length: runs }, (_, r) => r);
    for (let i = (runs >> 1) - 1; i >= 0; i--) this.#down(i);
  }

  /** Run a's next pair comes before run b's: by time, then by id (attempt ids are unique). */
  #before(a: number, b: number): boolean {
    const pa = this.#pos![a]!;
    const pb = this.#pos![b]!;
    const ta = this.#time[pa]!;
    const tb = this.#time[pb]!;
    return ta < tb || (ta === tb && this.#id[pa]! < this.#id[pb]!);
  }

  #down(i: number): void {
    const heap = this.#heap;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= heap.length) return;
      const r = l + 1;
      const c = r < heap.length && this.#before(heap[r]!, heap[l]!) ? r : l;
      if (!this.#before(heap[c]!, heap[i]!)) return;
      [heap[i], heap[c]] = [heap[c]!, heap[i]!];
      i = c;
    }
  }

  #reserve(n: number): void {
    if (n <= this.#time.length) return;
    let size = this.#time.length;
    while (size < n) size *= 2;
    const time = new Float64Array(size);
    const id = new Float64Array(size);
    time.set(this.#time.subarray(0, this.#length));
    id.set(this.#id.subarray(0, this.#length));
    this.#time = time;
    this.#id = id;
  }
}
