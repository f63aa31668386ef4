import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { EventLoopFigures } from '../../shared/api.contract';
import { backgroundSlices } from './slice-meter';

// The event loop's delay as a figure of health (issue 38): the collector, the control API, the UI's
// events and the dispatcher share one loop, so a stall anywhere is a wait everywhere. A long stall is
// one sample among thousands (a 22 s one leaves the p99 near zero), so beside the p99 come the
// longest single stall and the time lost in ticks over 50 ms.

/** Node samples the loop this often; its own timer adds up to this much to every sample. */
const RESOLUTION_MS = 10;
/** The stall clock's tick: 20 wakeups a second (an idle desktop app pays for each). */
const TICK_MS = 50;
/** A stall longer than this counts as blocked time. */
export const BLOCKED_TICK_MS = 50;
/** The figures cover the last 30–60 s: two windows of this length, the current and the one before. */
const WINDOW_MS = 30_000;

interface Window {
  /** The monitor's p99 and max when the window ended (ns); the current window reads the monitor. */
  p99Ns: number;
  maxNs: number;
  blockedMs: number;
  maxTickMs: number;
  startedAt: number;
}

export class LoopDelay {
  readonly #monitor = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  #previous: Window | null = null;
  #current: Window;
  #lastTick = performance.now();
  readonly #ticker: NodeJS.Timeout;

  constructor() {
    this.#monitor.enable();
    this.#current = { p99Ns: 0, maxNs: 0, blockedMs: 0, maxTickMs: 0, startedAt: performance.now() };
    // One tick per TICK_MS: a gap between two, past TICK_MS, is the time the loop could not run it.
    this.#ticker = setInterval(() => this.#tick(), TICK_MS);
    this.#ticker.unref();
  }

  #tick(): void {
    const now = performance.now();
    const gap = now - this.#lastTick;
    this.#lastTick = now;
    const stall = gap - TICK_MS;
    const w = this.#current;
    if (stall > w.maxTickMs) w.maxTickMs = stall;
    if (stall > BLOCKED_TICK_MS) w.blockedMs += stall;
    if (now - w.startedAt >= WINDOW_MS) this.#roll(now);
  }

  /** The window that ends keeps the monitor's figures; a new one starts. */
  #roll(now: number): void {
    const m = this.#monitor;
    this.#current.p99Ns = m.count > 0 ? m.percentile(99) : 0;
    this.#current.maxNs = m.count > 0 ? m.max : 0;
    m.reset();
    this.#previous = this.#current;
    this.#current = { p99Ns: 0, maxNs: 0, blockedMs: 0, maxTickMs: 0, startedAt: now };
  }

  figures(): EventLoopFigures {
    const now = performance.now();
    const m = this.#monitor;
    const windows = this.#previous ? [this.#previous, this.#current] : [this.#current];
    // Less the sampling timer's own resolution, which every sample carries.
    const ms = (ns: number) => Math.max(0, Math.round((ns / 1e6 - RESOLUTION_MS) * 10) / 10);
    // p99 of the worse of the two windows (the monitor holds the current one's samples).
    const p99 = Math.max(this.#previous?.p99Ns ?? 0, m.count > 0 ? m.percentile(99) : 0);
    const maxSample = Math.max(this.#previous?.maxNs ?? 0, m.count > 0 ? m.max : 0);
    // A stall still under way (the loop answers this only after it) counts as well.
    const ongoing = Math.max(0, now - this.#lastTick - TICK_MS);
    return {
      delayP99Ms: ms(p99),
      delayMaxMs: Math.round(Math.max(...windows.map((w) => w.maxTickMs), ongoing, ms(maxSample)) * 10) / 10,
      blockedMs: Math.round(windows.reduce((n, w) => n + w.blockedMs, 0) + (ongoing > BLOCKED_TICK_MS ? ongoing : 0)),
      windowS: Math.round((now - windows[0]!.startedAt) / 100) / 10,
      slices: backgroundSlices.figures(),
    };
  }

  stop(): void {
    clearInterval(this.#ticker);
    this.#monitor.disable();
  }
}
