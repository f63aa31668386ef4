/**
 * Recently accepted messageIds per source, for de-duplication (SPEC §3: 24 h). Kept in memory rather
 * than as an index on `calls`: a B-tree of random messageIds made every insert several times dearer
 * (see the README's performance notes). Rebuilt from the table at start, so restarts keep the window.
 * Bounded: the newest `capacity` ids within the window are remembered.
 */
export class DedupWindow {
  // Insertion order is arrival order, so the oldest entries are first.
  private readonly seen = new Map<string, number>();
  // Eviction walks the map from the oldest entry with one long-lived iterator. Starting a new walk at
  // every add would step over every entry deleted since V8 last compacted the map: tens of thousands
  // per call once the window is full.
  private cursor: MapIterator<[string, number]> | null = null;
  private head: [string, number] | undefined;

  constructor(
    private readonly windowMs: number,
    private readonly capacity: number,
  ) {}

  has(sourceId: string, messageId: string, now: number): boolean {
    const at = this.seen.get(key(sourceId, messageId));
    return at !== undefined && at >= now - this.windowMs;
  }

  add(sourceId: string, messageId: string, at: number): void {
    const k = key(sourceId, messageId);
    this.seen.delete(k);
    this.seen.set(k, at);
    this.evict(at);
  }

  /** Undo for a write that was rolled back, so the client's retry is not taken for a duplicate. */
  remove(sourceId: string, messageId: string): void {
    this.seen.delete(key(sourceId, messageId));
  }

  get size(): number {
    return this.seen.size;
  }

  private evict(now: number): void {
    for (;;) {
      if (this.head === undefined) {
        this.cursor ??= this.seen.entries();
        const next = this.cursor.next();
        // A finished iterator stays finished: start a new walk next time.
        if (next.done) {
          this.cursor = null;
          return;
        }
        this.head = next.value;
      }
      const [k, at] = this.head;
      // Removed or re-added since it was read (a re-added id sits later in the order): not the oldest.
      if (this.seen.get(k) !== at) {
        this.head = undefined;
        continue;
      }
      if (this.seen.size <= this.capacity && at >= now - this.windowMs) return;
      this.seen.delete(k);
      this.head = undefined;
    }
  }
}

const key = (sourceId: string, messageId: string) => `${sourceId}\u0000${messageId}`;
