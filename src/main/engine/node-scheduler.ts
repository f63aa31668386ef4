import type { CoalesceScheduler } from '../../shared/coalesce';

type Handle = { immediate: NodeJS.Immediate } | { timeout: NodeJS.Timeout };

/**
 * The coalescer's timers on Node's event loop (shared/coalesce.ts): 0 ms is the next turn
 * (setImmediate, after the turn's I/O, so one turn's events are one batch), a longer wait an
 * unref'd timer, which never keeps the process alive on its own.
 */
export const nodeScheduler: CoalesceScheduler = {
  now: () => Date.now(),
  later(fn, ms): Handle {
    if (ms <= 0) return { immediate: setImmediate(fn) };
    const timeout = setTimeout(fn, ms);
    timeout.unref();
    return { timeout };
  },
  cancel(handle) {
    const h = handle as Handle;
    if ('immediate' in h) clearImmediate(h.immediate);
    else clearTimeout(h.timeout);
  },
};
