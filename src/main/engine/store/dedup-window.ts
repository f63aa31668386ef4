/**
 * Recently accepted messageIds per source, for de-duplication (SPEC §3: 24 h). Kept in memory rather
 * than as an index on `calls`: a B-tree of random messageIds made every insert several times dearer
 * (see the README's performance notes). Rebuilt from the table at start, so restarts keep the window.
 * Bounded: the newest `capacity` ids within the window are remembered.
 */
export class DedupWindow {
  // One map per source, keyed by the messageId string itself: no per-lookup key to build (a joined
  // key costs an allocation and a hash per event on the collector's hot path).
  private readonly bySource = new Map<string, Map<string, number>>();
  // Arrival order across sources, oldest first, for eviction: parallel arrays read from `head`.
  private sources: string[] = [];
  private ids: string[] = [];
  private times: number[] = [];
  private head = 0;
  private count = 0;

  constructor(
    private readonly windowMs: number,
    private readonly capacity: number,
  ) {}

  has(sourceId: string, messageId: string, now: number): boolean {
    const at = this.bySource.get(sourceId)?.get(messageId);
    return at !== undefined && at >= now - this.windowMs;
  }

  add(sourceId: string, messageId: string, at: number): void {
    let seen = this.bySource.get(sourceId);
    if (!seen) this.bySource.set(sourceId, (seen = new Map()));
    this.remember(seen, sourceId, messageId, at);
  }

  /**
   * has() then add() in one: false for a duplicate (nothing changes), else remembers the id and
   * returns true. The collector's path: one lookup fewer per event in a map of up to `capacity` ids.
   */
  admit(sourceId: string, messageId: string, now: number): boolean {
    let seen = this.bySource.get(sourceId);
    if (!seen) this.bySource.set(sourceId, (seen = new Map()));
    const at = seen.get(messageId);
    if (at !== undefined && at >= now - this.windowMs) return false;
    this.remember(seen, sourceId, messageId, now);
    return true;
  }

  private remember(seen: Map<string, number>, sourceId: string, messageId: string, at: number): void {
    // Whether the id was new shows in the size: no separate lookup.
    const before = seen.size;
    // A re-added id moves to the newest end: its older entry in the order is skipped when reached.
    seen.set(messageId, at);
    if (seen.size !== before) this.count++;
    this.sources.push(sourceId);
    this.ids.push(messageId);
    this.times.push(at);
    this.evict(at);
  }

  /** Undo for a write that was rolled back, so the client's retry is not taken for a duplicate. */
  remove(sourceId: string, messageId: string): void {
    if (this.bySource.get(sourceId)?.delete(messageId)) this.count--;
  }

  get size(): number {
    return this.count;
  }

  private evict(now: number): void {
    while (this.head < this.ids.length) {
      const i = this.head;
      const seen = this.bySource.get(this.sources[i]);
      const live = seen !== undefined && seen.get(this.ids[i]) === this.times[i];
      if (live && this.count <= this.capacity && this.times[i] >= now - this.windowMs) break;
      if (live) {
        seen.delete(this.ids[i]);
        this.count--;
      }
      this.head++;
    }
    // Drop the consumed front now and then, so the order arrays stay about as long as the window.
    if (this.head > 1024 && this.head * 2 > this.ids.length) {
      this.sources = this.sources.slice(this.head);
      this.ids = this.ids.slice(this.head);
      this.times = this.times.slice(this.head);
      this.head = 0;
    }
  }
}
