/**
 * Recently accepted messageIds per source, for de-duplication (SPEC §3: 24 h). Kept in memory rather
 * than as an index on `calls`: a B-tree of random messageIds made every insert several times dearer
 * (see the README's performance notes). Rebuilt from the table at start, so restarts keep the window.
 * Bounded: the newest `capacity` ids within the window are remembered.
 */
export class DedupWindow {
  // Insertion order is arrival order, so the oldest entries are first.
  private readonly seen = new Map<string, number>();

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
    for (const [k, at] of this.seen) {
      if (this.seen.size <= this.capacity && at >= now - this.windowMs) break;
      this.seen.delete(k);
    }
  }
}

const key = (sourceId: string, messageId: string) => `${sourceId}\u0000${messageId}`;
