import { afterEach, describe, expect, it, vi } from 'vitest';
import { whileProgressing } from '../helpers/progress';

// The tests whose work grows with the machine's slowness fail on a stall, never on the time the
// whole takes (issue 44). Timed with Vitest's fake clock: what is judged is the rule, not the machine.

afterEach(() => vi.useRealTimers());

describe('whileProgressing', () => {
  it('lets work run far past the stall limit while it keeps stepping, and gives its result', async () => {
    vi.useFakeTimers();
    const got = whileProgressing('slow work', async (step) => {
      for (let i = 0; i < 100; i++) {
        await new Promise((r) => setTimeout(r, 500));
        step();
      }
      return 'done';
    }, 2_000);
    await vi.advanceTimersByTimeAsync(60_000);
    await expect(got).resolves.toBe('done');
  });

  it('fails, naming the work and its steps, when no step comes for the limit', async () => {
    vi.useFakeTimers();
    const got = whileProgressing('stuck work', async (step) => {
      step();
      step();
      await new Promise(() => undefined);
    }, 2_000);
    const seen = expect(got).rejects.toThrow('stuck work: no progress for 2 s, after 2 steps');
    await vi.advanceTimersByTimeAsync(3_000);
    await seen;
  });

  it("throws what the work throws", async () => {
    await expect(whileProgressing('failing work', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
  });
});
