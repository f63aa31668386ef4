import { vi } from 'vitest';

/**
 * Retries `check` until it passes: assertions that stop throwing, or a predicate that stops
 * returning false (give it a boolean: `until(() => list.length === 3)`). Use it before a positive
 * assertion instead of a fixed sleep, which a busy machine outlasts. On timeout, the last failure
 * is the error.
 */
export function until<T>(check: () => T | Promise<T>, timeoutMs = 10_000): Promise<T> {
  return vi.waitFor(
    async () => {
      const v = await check();
      if (v === false) throw new Error('until: the condition is still false');
      return v;
    },
    { timeout: timeoutMs, interval: 10 },
  );
}
