/** Time as the client sees it; injected so tests (and the app's time-warp) control it. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Node timers keep the process alive; the flush timer must not (a script may simply end). */
export function unrefHandle(handle: unknown): void {
  if (typeof handle === 'object' && handle !== null && 'unref' in handle) {
    const unref = (handle as { unref?: unknown }).unref;
    if (typeof unref === 'function') unref.call(handle);
  }
}
