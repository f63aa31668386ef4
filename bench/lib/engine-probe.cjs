// Preloaded into the engine under test (`node --expose-gc --require bench/lib/engine-probe.cjs
// out/main/cli.js serve`) by the export figure (bench/lib/export.mjs): what only the process itself
// can see, its V8 heap and its event loop's delay, over a window the bench opens and closes.
// SIGUSR2 ends the current window: its figures (peak heapUsed and RSS, the loop's p99 and longest
// delay in ms) are written to BENCH_PROBE_FILE as one JSON line, and a new window starts, after a
// full GC so its heap starts from what is live. Sampled every 5 ms: a peak inside a longer stall is
// seen only at its end (the loop cannot run the sampler before).
const { renameSync, writeFileSync } = require('node:fs');
const { monitorEventLoopDelay } = require('node:perf_hooks');

const file = process.env.BENCH_PROBE_FILE;
if (file) {
  let seq = 0;
  let peakHeap = 0;
  let peakRss = 0;
  const delay = monitorEventLoopDelay({ resolution: 5 });
  const sample = () => {
    const m = process.memoryUsage();
    if (m.heapUsed > peakHeap) peakHeap = m.heapUsed;
    if (m.rss > peakRss) peakRss = m.rss;
  };
  const start = () => {
    globalThis.gc?.();
    peakHeap = 0;
    peakRss = 0;
    sample();
    delay.reset();
    delay.enable();
  };
  setInterval(sample, 5).unref();
  process.on('SIGUSR2', () => {
    sample();
    // The monitor's own timer resolution is in every sample: taken off, as the engine's health does.
    const ms = (ns) => Math.max(0, Math.round((ns / 1e6 - 5) * 10) / 10);
    const maxDelayMs = delay.count > 0 ? ms(delay.max) : 0;
    const p99DelayMs = delay.count > 0 ? ms(delay.percentile(99)) : 0;
    const heapNow = process.memoryUsage().heapUsed;
    // Written whole, then renamed: the bench never reads half a line.
    writeFileSync(`${file}.tmp`, `${JSON.stringify({ pid: process.pid, seq: ++seq, peakHeap, peakRss, heapNow, maxDelayMs, p99DelayMs })}\n`);
    renameSync(`${file}.tmp`, file);
    start();
  });
  start();
}
