import { expect, it } from 'vitest';
import { testLab } from '../helpers/test-lab';
import { waitFor } from '../helpers/engine';
import { SLICE_CHUNK } from '../../src/main/engine/store/retention';

// Issue 38: retention runs beside the collector and the API on one event loop, a chunk of calls a
// turn: 100,000 calls over the limit (a limit lowered, a lab restarted after a burst) held the loop
// for seconds in one go. Counted in slices (health's eventLoop.slices), not timed.

const lab = testLab();

it('retention removes calls over the limit a chunk at a time, the loop turning between chunks', async () => {
  const dataDir = lab.dataDir();
  const config = { sources: [{ name: 'burst', writeKey: 'wk_burst' }], settings: { retentionCalls: 1_000 } };
  const first = await lab.start({ dataDir, config: { ...config, settings: { retentionCalls: 100_000 } } });
  for (let i = 0; i < 60; i++) {
    const batch = Array.from({ length: 100 }, (_, k) => ({ type: 'track', userId: 'u', event: 'E', messageId: `m-${i}-${k}` }));
    expect((await first.post('/v1/batch', { batch }, { writeKey: 'wk_burst' })).status).toBe(200);
  }
  await first.stop({ keepData: true });
  // Started again with a lower limit: 5,000 calls over it.
  const t = await lab.start({ dataDir, config });
  await waitFor(async () => ((await t.call('listMessages', { limit: 1 })).total === 1_000 ? true : undefined), 'retention down to the limit', 60_000);
  const { retention } = (await t.call('health', {})).eventLoop.slices;
  // 5,000 calls in chunks of SLICE_CHUNK, each its own turn of the loop.
  expect(retention!.slices).toBeGreaterThanOrEqual(5_000 / SLICE_CHUNK);
});
