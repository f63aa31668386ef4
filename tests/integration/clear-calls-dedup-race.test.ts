import { describe, expect, it } from 'vitest';
import { testLab } from '../helpers/test-lab';
import { CLEAR_CHUNK } from '../../src/main/engine/store/clear-calls';
import type { Store } from '../../src/main/engine/store/store';

// *Clear all calls* forgets the cleared calls' messageIds, chunk by chunk, while calls go on arriving.
// Found by review: a messageId accepted during the clear (after its first call's chunk was cleared)
// was forgotten again when a later chunk cleared a dropped repeat of the first call, so a third copy
// was accepted too. Only what the window remembered for that very call may be forgotten. The chunks
// are run here as clearCalls runs them (calls-bulk.ts), with calls sent between them.

const lab = testLab();
const KEY = 'wk_clear_race';

describe('clearing calls while the same messageId arrives', () => {
  it('forgets only the cleared calls’ own entries', async () => {
    let store!: Store;
    const t = await lab.start({ onStore: (s) => (store = s), config: { sources: [{ name: 's', writeKey: KEY }] } });
    const x = { userId: 'u', event: 'X', messageId: 'race-x' };
    const statusOfLast = async () => (await t.call('listMessages', { q: 'race-x', limit: 1 })).items[0]!.status;

    expect((await t.post('/v1/track', x, { writeKey: KEY })).status).toBe(200);
    expect(await statusOfLast()).toBe('accepted');
    // Fill the rest of the first chunk, then a dropped repeat of X in the second.
    const fillers = Array.from({ length: CLEAR_CHUNK - 1 }, (_, i) => ({ type: 'track', userId: 'f', event: 'Filler', messageId: `filler-${i}` }));
    expect((await t.post('/v1/batch', { batch: fillers }, { writeKey: KEY })).status).toBe(200);
    await t.post('/v1/track', x, { writeKey: KEY });
    expect(await statusOfLast()).toBe('dropped');

    const cutoff = store.clearer.cutoff();
    const chunk = async () => {
      const c = await store.writes.run((tx) => store.clearer.deleteCallsChunk(tx, cutoff));
      store.calls.forgetMessageIds(c.messageIds);
      return c.removed;
    };
    expect(await chunk()).toBe(CLEAR_CHUNK);
    // The first X is cleared: X starts over, and this one is kept (it came after the cutoff).
    await t.post('/v1/track', x, { writeKey: KEY });
    expect(await statusOfLast()).toBe('accepted');
    expect(await chunk()).toBe(1);
    // The dropped repeat's chunk must not forget the X accepted meanwhile.
    await t.post('/v1/track', x, { writeKey: KEY });
    expect(await statusOfLast()).toBe('dropped');
  });
});
