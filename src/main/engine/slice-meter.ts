import type { BackgroundSlices } from '../../shared/api.contract';

// Background work's slices, measured (issue 38). The collector, the control API and the dispatcher
// share one event loop with the lab's background jobs (the body index, retention, space back, an
// export, a config import, ...); each does its work in slices with the loop's other work between.
// This keeps, per job, how many slices it ran and the longest, over the same 30-60 s as the loop's
// delay figures, so health says which job a stall came from (GET /api/health, eventLoop.slices).
// One per process: the jobs are spread over the store and the features, and every lab in a process
// shares the one loop anyway.

/** Two windows of this length, the current and the one before, as loop-delay.ts keeps. */
const WINDOW_MS = 30_000;

type Window = Map<string, { slices: number; longestMs: number }>;

export class SliceMeter {
  #previous: Window = new Map();
  #current: Window = new Map();
  #startedAt = performance.now();

  /** Runs one slice of `job`, timed. */
  time<T>(job: string, slice: () => T): T {
    const started = performance.now();
    try {
      return slice();
    } finally {
      this.record(job, performance.now() - started);
    }
  }

  record(job: string, ms: number): void {
    this.#roll();
    const seen = this.#current.get(job);
    if (seen) {
      seen.slices++;
      if (ms > seen.longestMs) seen.longestMs = ms;
    } else this.#current.set(job, { slices: 1, longestMs: ms });
  }

  /** Per job seen in the last 30-60 s: its slices and the longest (ms, one decimal). */
  figures(): BackgroundSlices {
    this.#roll();
    const out: BackgroundSlices = {};
    for (const w of [this.#previous, this.#current]) {
      for (const [job, f] of w) {
        const o = (out[job] ??= { slices: 0, longestMs: 0 });
        o.slices += f.slices;
        o.longestMs = Math.max(o.longestMs, Math.round(f.longestMs * 10) / 10);
      }
    }
    return out;
  }

  #roll(): void {
    const now = performance.now();
    if (now - this.#startedAt < WINDOW_MS) return;
    // A window that ended long ago leaves nothing in the one before.
    this.#previous = now - this.#startedAt < 2 * WINDOW_MS ? this.#current : new Map();
    this.#current = new Map();
    this.#startedAt = now;
  }
}

export const backgroundSlices = new SliceMeter();
