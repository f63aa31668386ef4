import type { Clock } from './clock';

interface Timer {
  id: number;
  due: number;
  fn: () => void;
}

/**
 * A clock that moves only when told to: for tests of flushAfter and backoff without real waiting.
 * `advance(ms)` runs every timer that falls due, in due order, each at its own time.
 */
export class ManualClock implements Clock {
  private time: number;
  private nextId = 1;
  private timers: Timer[] = [];

  constructor(start = Date.UTC(2024, 0, 1)) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const timer = { id: this.nextId++, due: this.time + Math.max(0, ms), fn };
    this.timers.push(timer);
    return timer.id;
  }

  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }

  /** Timers waiting to fire. */
  get pendingTimers(): number {
    return this.timers.length;
  }

  /** Due time of the earliest timer, or null. */
  nextDue(): number | null {
    return this.timers.reduce<number | null>((min, t) => (min === null || t.due < min ? t.due : min), null);
  }

  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.due <= end).sort((a, b) => a.due - b.due || a.id - b.id)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.time = Math.max(this.time, due.due);
      due.fn();
    }
    this.time = end;
  }
}
