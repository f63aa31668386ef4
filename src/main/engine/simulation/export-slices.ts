import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { CallFilter } from '../store/calls.repo';
import type { Store } from '../store/store';
import { backgroundSlices } from '../slice-meter';

// An export's work runs on the event loop the collector, the control API and the UI share (DESIGN
// §18): in slices of about SLICE_MS, the loop given back between two (setImmediate, so the requests
// and timers waiting run first). How much fits in a slice is measured, not guessed: each piece of
// work is sized from how long the last one took, so a slower or busier machine makes smaller pieces
// instead of longer stalls. One line (a call with a 30 MB Actions batch body) is never cut: its cost
// is bounded by the limits on what a call may carry.

/** What a slice aims at: half the team's 20 ms bound, the rest left for a line costlier than the last and for GC. */
export const SLICE_MS = 10;
/** What one id query aims at within a slice (a filter that matches little reads many rows per id found). */
const QUERY_MS = 2;

/** How an export is going, read live (tests and the bench print it). */
export interface ExportProgress {
  /** Lines (JSON Lines) or entries (HAR) written so far. */
  written: number;
  slices: number;
  /** The longest slice of the export's own work on the loop, in ms (wall clock). */
  longestSliceMs: number;
  /**
   * The most CPU time the process used in one slice (all its threads, the GC's helpers included).
   * Far below the longest slice, that slice waited for a core (a busy machine) more than it worked.
   */
  mostSliceCpuMs: number;
  /** The text ended (the whole file was produced). */
  done: boolean;
  /** The generator returned: finished, or its reader went away (a client that disconnected). */
  closed: boolean;
}

/** Thrown into an export when the engine stops under it: the file is cut short, and says so by failing. */
export class ExportStopped extends Error {
  constructor() {
    super('the engine stopped during the export');
  }
}

/** The clock of one export's slices. */
export class Slices {
  #start = performance.now();
  #cpu = process.cpuUsage();
  constructor(
    readonly progress: ExportProgress,
    private readonly stopped: () => boolean,
  ) {}

  /** Ends the current slice, gives the loop back, and starts the next one. */
  async next(): Promise<void> {
    this.end();
    await nextTurn();
    this.check();
    this.#start = performance.now();
    this.#cpu = process.cpuUsage();
  }

  /** Throws ExportStopped once the engine stops: nothing is read from a store about to close. */
  check(): void {
    if (this.stopped()) throw new ExportStopped();
  }

  elapsed(): number {
    return performance.now() - this.#start;
  }

  spent(): boolean {
    return this.elapsed() >= SLICE_MS;
  }

  /** Counts the current slice (next() does; the last one, when the text ends). */
  end(): void {
    const ms = this.elapsed();
    backgroundSlices.record('export', ms);
    this.progress.slices++;
    const cpu = process.cpuUsage(this.#cpu);
    const cpuMs = (cpu.user + cpu.system) / 1000;
    if (ms > this.progress.longestSliceMs) this.progress.longestSliceMs = Math.round(ms * 10) / 10;
    if (cpuMs > this.progress.mostSliceCpuMs) this.progress.mostSliceCpuMs = Math.round(cpuMs * 10) / 10;
  }
}

/**
 * How many things fit in a given time, learnt from what the last pieces cost: a costlier piece is
 * believed at once (the next one shrinks), a cheaper one only halfway (one quick piece, a page of
 * dropped calls, does not make the next one huge).
 */
export class Pace {
  #msEach: number;
  constructor(
    msEach: number,
    private readonly min: number,
    private readonly max: number,
  ) {
    this.#msEach = msEach;
  }

  took(n: number, ms: number): void {
    if (n <= 0) return;
    const each = ms / n;
    this.#msEach = each >= this.#msEach ? each : (this.#msEach + each) / 2;
  }

  /** As many as should take `ms`, within [min, max]. */
  fit(ms: number): number {
    const n = this.#msEach > 0 ? Math.floor(ms / this.#msEach) : this.max;
    return Math.max(this.min, Math.min(this.max, n));
  }
}

/**
 * Which calls an export covers, and their ids read page by page (keyset on the id, never OFFSET).
 *
 * Snapshot rule: the calls stored when the export was opened, no later ones: ids at most the newest id
 * then (ids only grow: a call that arrives during the export has a larger one). Of those, the newest
 * `limit` that match the filter, found once the writing starts. Whether a call matches is judged when
 * its page is read, in the same slice as what is written of it, so each line agrees with the filter
 * and with itself (a call that changed state in between is written, or left out, as it is then); a
 * call deleted meanwhile (retention, a purge) is left out; never more than `limit` calls.
 */
export class ExportCalls {
  /** Ids read from here on: after this one... */
  #after = 0;
  /** ...up to this one (the newest at the open). */
  readonly #upTo: number;
  #left: number;
  #bounded = false;
  /** The ids one query spans, sized to keep a query near QUERY_MS. */
  readonly #span = new Pace(QUERY_MS / 4096, 64, 1 << 22);

  constructor(
    private readonly store: Store,
    private readonly filter: Omit<CallFilter, 'limit' | 'before'>,
    limit: number,
  ) {
    this.#upTo = store.calls.idsInRange({}, 0, Number.MAX_SAFE_INTEGER, 1, 'desc')[0] ?? 0;
    this.#left = limit;
  }

  /**
   * Finds where the newest `limit` matching calls begin, walking down from the newest, in slices:
   * only a count and a position are kept, not the ids.
   */
  async bound(slices: Slices): Promise<void> {
    if (this.#bounded) return;
    this.#bounded = true;
    slices.check();
    const oldest = (this.store.calls.idsInRange({}, 0, this.#upTo, 1, 'asc')[0] ?? 1) - 1;
    let upTo = this.#upTo;
    let need = this.#left;
    while (upTo > oldest && need > 0) {
      if (slices.spent()) await slices.next();
      const from = Math.max(oldest, upTo - this.#span.fit(QUERY_MS));
      const t = performance.now();
      const ids = this.store.calls.idsInRange(this.filter, from, upTo, need, 'desc');
      this.#span.took(ids.length === need ? upTo - ids[ids.length - 1]! + 1 : upTo - from, performance.now() - t);
      need -= ids.length;
      // The `limit`-th newest: the export starts at it.
      if (need === 0) this.#after = ids[ids.length - 1]! - 1;
      upTo = from;
    }
    if (need > 0) this.#after = oldest;
  }

  /**
   * Up to `max` more ids, oldest first; [] once all were read. Reads id windows until it found some or
   * the slice is spent (a filter that matches little), so a call to it is bounded like a slice.
   */
  next(max: number, slices: Slices): number[] {
    while (this.#after < this.#upTo && this.#left > 0) {
      const upTo = Math.min(this.#upTo, this.#after + this.#span.fit(QUERY_MS));
      const want = Math.min(max, this.#left);
      const t = performance.now();
      const ids = this.store.calls.idsInRange(this.filter, this.#after, upTo, want);
      const reached = ids.length === want ? ids[ids.length - 1]! : upTo;
      this.#span.took(reached - this.#after, performance.now() - t);
      this.#after = reached;
      this.#left -= ids.length;
      if (ids.length > 0 || slices.spent()) return ids;
    }
    return [];
  }

  /** All ids were read. */
  get ended(): boolean {
    return this.#after >= this.#upTo || this.#left <= 0;
  }
}
