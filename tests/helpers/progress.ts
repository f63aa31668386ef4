// For tests whose work grows with the machine's slowness (thousands of generated requests, hundreds
// of configs): no limit on how long the whole takes, which a machine three times slower and shared
// with other work cannot meet, only on how long it goes without a step forward (issue 44: the
// collector fuzz ran past a fixed 300 s on pinned runs beside other work, still advancing).

/** Vitest's timeout for such a test: a bound for a run gone wrong in ways the stall check cannot see, far past any slow machine. */
export const HANG_BOUND_MS = 40 * 60_000;

/**
 * Runs `work`, which calls `step()` each time it advances; fails with `what` when no step comes for
 * `stallMs`. Whatever `work` throws is thrown.
 */
export async function whileProgressing<T>(what: string, work: (step: () => void) => Promise<T>, stallMs = 120_000): Promise<T> {
  let last = Date.now();
  let steps = 0;
  const step = () => {
    last = Date.now();
    steps++;
  };
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setInterval(() => {
      if (Date.now() - last > stallMs) reject(new Error(`${what}: no progress for ${stallMs / 1000} s, after ${steps} steps`));
    }, Math.min(1_000, stallMs / 4));
  });
  try {
    return await Promise.race([work(step), stalled]);
  } finally {
    clearInterval(timer);
  }
}
