import { performance } from 'node:perf_hooks';
import { expect, it } from 'vitest';
import { testLab } from '../helpers/test-lab';

// Issue 38: the event loop's delay is a figure of health. A stall of the loop (here, held on purpose)
// shows as the longest stall and as blocked time, though it is one sample among thousands for the
// p99. Lower bounds only: a stall lasts at least as long as it was held, however slow the machine.

const lab = testLab();

function hold(ms: number): void {
  const start = performance.now();
  while (performance.now() - start < ms) {
    // holding the loop
  }
}

it('GET /api/health says how long the loop was held: the longest stall and the blocked time, over the window it covers', async () => {
  const t = await lab.start();
  const before = (await t.call('health', {})).eventLoop;
  expect(before.windowS).toBeGreaterThanOrEqual(0);
  expect(before.windowS).toBeLessThanOrEqual(60);
  // A stall the health answer itself waited behind.
  await new Promise<void>((resolve) => setImmediate(resolve));
  hold(400);
  const after = (await t.call('health', {})).eventLoop;
  expect(after.delayMaxMs).toBeGreaterThanOrEqual(300);
  expect(after.blockedMs).toBeGreaterThanOrEqual(300);
  expect(after.delayP99Ms).toBeGreaterThanOrEqual(0);
  expect(after.delayMaxMs).toBeGreaterThanOrEqual(after.delayP99Ms);
});

it("GET /api/health names the background jobs that ran on the loop, each with its slices and the longest", async () => {
  const t = await lab.start();
  await t.call('importConfig', { sources: Array.from({ length: 300 }, (_, i) => ({ name: `s-${i}`, writeKey: `wk_s_${i}` })) });
  const { slices } = (await t.call('health', {})).eventLoop;
  expect(slices['config import']).toMatchObject({ slices: expect.any(Number), longestMs: expect.any(Number) });
  expect(slices['config import']!.slices).toBeGreaterThanOrEqual(1);
  expect(slices['config import (commit)']!.slices).toBeGreaterThanOrEqual(1);
  expect(slices['config import (commit)']!.longestMs).toBeGreaterThan(0);
});
