import { fingerprint, FingerprintTable, type Fingerprint } from './fingerprint-table';

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
 *
 * A generation holds 63-bit fingerprints of (source, messageId) in typed arrays (fingerprint-table.ts),
 * not the strings in Maps: the Maps' hundreds of thousands of retained strings and entries cost
 * batch ingestion about a tenth of its throughput in garbage collection and cache misses (bench
 * `batches`, issue 27). Two different ids of a source are taken for one with odds of about 1 in
 * 9 × 10^18 per pair.
 */
export class DedupWindow {
  private current: FingerprintTable;
  private previous: FingerprintTable;
  /** When the current generation's first id arrived. */
  private currentSince = 0;
  /** Each source's number (1, 2, …, in order of first use), mixed into its ids' fingerprints. */
  private readonly sources = new Map<string, number>();
  /** The fingerprint of the id at hand (one object, reused: nothing allocated per call). */
  private readonly fp: Fingerprint = { hi: 0, lo: 0 };

  constructor(
    private readonly windowMs: number,
    capacity: number,
  ) {
    this.current = new FingerprintTable(capacity);
    this.previous = new FingerprintTable(capacity);
  }

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
    this.store(now);
    return true;
  }

  /** Undo for a write that was rolled back, so the client's retry is not taken for a duplicate. */
  remove(sourceId: string, messageId: string): void {
    this.fingerprint(sourceId, messageId);
    this.current.delete(this.fp);
    this.previous.delete(this.fp);
  }

  /** Forgets the id only where it was remembered as arrived at `at` (one call's own entry, not a later call's). */
  removeIfAt(sourceId: string, messageId: string, at: number): void {
    this.fingerprint(sourceId, messageId);
    if (this.current.get(this.fp) === at) this.current.delete(this.fp);
    if (this.previous.get(this.fp) === at) this.previous.delete(this.fp);
  }

  /** Ids held, at most twice the capacity (an id seen again since the last turn counts in both generations). */
  get size(): number {
    return this.current.count + this.previous.count;
  }

  /** The newest arrival remembered for the id: the current generation's, else the previous one's. */
  private arrival(sourceId: string, messageId: string): number | undefined {
    this.fingerprint(sourceId, messageId);
    return this.current.get(this.fp) ?? this.previous.get(this.fp);
  }

  private remember(sourceId: string, messageId: string, at: number): void {
    this.fingerprint(sourceId, messageId);
    this.store(at);
  }

  /** Remembers the fingerprint at hand (this.fp) as arrived at `at`. */
  private store(at: number): void {
    const current = this.current;
    if (current.count >= current.capacity || (current.count > 0 && at - this.currentSince > this.windowMs)) this.turn();
    if (this.current.count === 0) this.currentSince = at;
    this.current.set(this.fp, at);
  }

  private fingerprint(sourceId: string, messageId: string): void {
    let source = this.sources.get(sourceId);
    if (source === undefined) this.sources.set(sourceId, (source = this.sources.size + 1));
    fingerprint(source, messageId, this.fp);
  }

  /**
   * The current generation becomes the previous one. The one dropped holds only ids older than the
   * current's first: past the window (a turn by time), or beyond the newest `capacity` (by count).
   */
  private turn(): void {
    // The dropped generation's arrays are reused, emptied, rather than 8 MB allocated at each turn.
    const dropped = this.previous;
    this.previous = this.current;
    dropped.clear();
    this.current = dropped;
  }
}
