type Generation = Map<string, Map<string, number>>;

/**
 * Recently accepted messageIds per source, for de-duplication (SPEC §3: 24 h). Kept in memory rather
 * than as an index on `calls`: a B-tree of random messageIds made every insert several times dearer
 * (see the README's performance notes). Rebuilt from the table at start, so restarts keep the window.
 *
 * Bounded by generations, not by evicting one id per id added: ids go into the current generation;
 * once it holds `capacity` ids, or its first is older than the window, it becomes the previous one and
 * the previous one is dropped whole. So the newest `capacity` ids within the window are always
 * remembered (up to twice as many are), and an id costs one lookup and one insert. Evicting the
 * oldest id at each add, to keep exactly `capacity`, cost batches of 100 about 1.3 µs per event of
 * the collector's time: a delete in a Map of 200,000 entries and the rehashes its holes bring (issue 27).
 */
export class DedupWindow {
  // One map per source, keyed by the messageId string itself: no per-lookup key to build (a joined
  // key costs an allocation and a hash per event on the collector's hot path).
  private current: Generation = new Map();
  private previous: Generation = new Map();
  private currentCount = 0;
  private previousCount = 0;
  /** When the current generation's first id arrived. */
  private currentSince = 0;

  constructor(
    private readonly windowMs: number,
    private readonly capacity: number,
  ) {}

  has(sourceId: string, messageId: string, now: number): boolean {
    const at = this.arrival(sourceId, messageId);
    return at !== undefined && at >= now - this.windowMs;
  }

  add(sourceId: string, messageId: string, at: number): void {
    this.remember(sourceId, messageId, at);
  }

  /**
   * has() then add() in one: false for a duplicate (nothing changes), else remembers the id and
   * returns true. The collector's path.
   */
  admit(sourceId: string, messageId: string, now: number): boolean {
    const at = this.arrival(sourceId, messageId);
    if (at !== undefined && at >= now - this.windowMs) return false;
    this.remember(sourceId, messageId, now);
    return true;
  }

  /** Undo for a write that was rolled back, so the client's retry is not taken for a duplicate. */
  remove(sourceId: string, messageId: string): void {
    if (this.current.get(sourceId)?.delete(messageId)) this.currentCount--;
    if (this.previous.get(sourceId)?.delete(messageId)) this.previousCount--;
  }

  /** Ids held, at most twice the capacity (an id seen again since the last turn counts in both generations). */
  get size(): number {
    return this.currentCount + this.previousCount;
  }

  /** The newest arrival remembered for the id: the current generation's, else the previous one's. */
  private arrival(sourceId: string, messageId: string): number | undefined {
    return this.current.get(sourceId)?.get(messageId) ?? this.previous.get(sourceId)?.get(messageId);
  }

  private remember(sourceId: string, messageId: string, at: number): void {
    if (this.currentCount >= this.capacity || (this.currentCount > 0 && at - this.currentSince > this.windowMs)) this.turn();
    if (this.currentCount === 0) this.currentSince = at;
    let seen = this.current.get(sourceId);
    if (!seen) this.current.set(sourceId, (seen = new Map()));
    // Whether the id was new here shows in the size: no separate lookup.
    const before = seen.size;
    seen.set(messageId, at);
    if (seen.size !== before) this.currentCount++;
  }

  /**
   * The current generation becomes the previous one. The one dropped holds only ids older than the
   * current's first: past the window (a turn by time), or beyond the newest `capacity` (by count).
   */
  private turn(): void {
    this.previous = this.current;
    this.previousCount = this.currentCount;
    this.current = new Map();
    this.currentCount = 0;
  }
}
