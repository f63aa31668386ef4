import { setFlagsFromString } from 'node:v8';

/**
 * V8 flags the engine's process runs with, set by tuneHeap(). V8 reads both at every collection,
 * so setting them at startup takes effect (tests/unit/heap-tuning.test.ts checks the second).
 */
export const HEAP_FLAGS: readonly string[] = [
  // The collector allocates a lot of short-lived garbage (parsed requests, normalized calls), and by
  // default V8 lets the old generation grow up to 4× its live size between full collections. 1.5×
  // keeps the engine's peak RSS under floods near its live size (the official Node SDK's 200
  // concurrent batches: 270 MB → 190 MB peak). It is not a heap limit.
  '--heap-growing-percent=50',
  // V8 allocates objects straight into the old generation from a code site whose objects it once saw
  // survive (allocation-site pretenuring). In about half the runs of bench `batches` it so judged
  // some of the engine's sites in its first second (--trace-pretenuring), when much of what it
  // allocates survives, and kept the judgement: short-lived request objects then filled the old
  // generation, full collections came every 250 ms instead of every 2 s and batch ingestion ran 20 %
  // slower (76,000–80,000 events/s against 95,000–103,000). With this flag off every run is the fast
  // one. The engine keeps little for long, so it has nothing to gain from the guess.
  '--no-allocation-site-pretenuring',
];

/** Called first by the process entries (headless CLI, Electron main), not by the engine library. */
export function tuneHeap(): void {
  for (const flag of HEAP_FLAGS) setFlagsFromString(flag);
}
