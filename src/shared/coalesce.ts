// One coalescing primitive for every hop an engine event takes (DESIGN lesson 11; VS Code's
// Event.debounce/accumulate): the event hub, the SSE and IPC adapters and the renderer's live events
// each gather what arrives and hand it on as one batch, in arrival order, nothing dropped. Plain
// ECMAScript timers behind an injected scheduler: no Node, no DOM, and tests drive a fake clock.

/** The time a coalescer reads and the timers it sets. */
export interface CoalesceScheduler {
  now(): number;
  /** Runs `fn` once, `ms` from now; returns what `cancel` takes. */
  later(fn: () => void, ms: number): unknown;
  cancel(handle: unknown): void;
}

/** The host's own timers (a browser's, Node's), read when called so a test's fake timers apply too. */
export const timerScheduler: CoalesceScheduler = {
  now: () => Date.now(),
  later: (fn, ms) => setTimeout(fn, ms),
  cancel: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface CoalesceOptions<T> {
  /**
   * The longest an item waits: a batch goes out `maxWaitMs` after its first item (0: at the
   * scheduler's next turn). With `leading`, the batch goes out at once when the last one went out at
   * least `maxWaitMs` ago, and otherwise `maxWaitMs` after that one (a throttle: a quiet source's
   * first item is not held, a busy one's batches are `maxWaitMs` apart).
   */
  maxWaitMs: number;
  leading?: boolean;
  /**
   * Items with the same key are one: a later item takes the earlier one's place in the batch (where
   * the first arrived, as a Map's set does). Items whose key is undefined are all kept.
   */
  key?: (item: T) => unknown;
  /** Receives each batch, never empty. */
  flush: (items: T[]) => void;
  scheduler?: CoalesceScheduler;
}

export interface Coalescer<T> {
  push(item: T): void;
  pushAll(items: Iterable<T>): void;
  /** Items waiting for their batch. */
  readonly size: number;
  /** Drops what is waiting and its timer (the listener is gone). */
  dispose(): void;
}

export function coalesce<T>(o: CoalesceOptions<T>): Coalescer<T> {
  const scheduler = o.scheduler ?? timerScheduler;
  const key = o.key;
  const slots = key ? new Map<unknown, number>() : null;
  let items: T[] = [];
  let timer: unknown = null;
  let lastFlush = -Infinity;

  const run = () => {
    timer = null;
    if (items.length === 0) return;
    const batch = items;
    items = [];
    slots?.clear();
    lastFlush = scheduler.now();
    o.flush(batch);
  };

  const arm = () => {
    if (timer !== null || items.length === 0) return;
    if (!o.leading) {
      timer = scheduler.later(run, o.maxWaitMs);
      return;
    }
    const wait = lastFlush + o.maxWaitMs - scheduler.now();
    if (wait <= 0) run();
    else timer = scheduler.later(run, wait);
  };

  const add = (item: T) => {
    if (slots) {
      const k = key!(item);
      if (k !== undefined) {
        const at = slots.get(k);
        if (at !== undefined) {
          items[at] = item;
          return;
        }
        slots.set(k, items.length);
      }
    }
    items.push(item);
  };

  return {
    push(item) {
      add(item);
      arm();
    },
    pushAll(list) {
      for (const item of list) add(item);
      arm();
    },
    get size() {
      return items.length;
    },
    dispose() {
      if (timer !== null) scheduler.cancel(timer);
      timer = null;
      items = [];
      slots?.clear();
    },
  };
}
