import { describe, expect, it } from 'vitest';
import { testLab } from '../helpers/test-lab';

// After every call is cleared, SQLite gives the next request the id the cleared one had (INTEGER
// PRIMARY KEY without AUTOINCREMENT; calls get new ids since migration 19, requests do not). The
// store's parsed-body cache of one request must not answer for the new request of the same id: the
// call detail shows what the new call carried.

const lab = testLab();

describe('clearCalls, then a new call', () => {
  it('shows the new call as received, not the cleared call of the same id', async () => {
    const t = await lab.start({ config: { sources: [{ name: 's', writeKey: 'wk_reuse' }] } });
    await t.post('/v1/track', { userId: 'u', event: 'First', properties: { n: 1 } }, { writeKey: 'wk_reuse' });
    const [first] = (await t.call('listMessages', {})).items;
    // Read once: the store keeps this request's parsed body.
    expect((await t.call('getMessage', { id: first.id })).call.raw).toMatchObject({ event: 'First' });
    await t.call('clearCalls', {});

    await t.post('/v1/track', { userId: 'u', event: 'Second', properties: { n: 2 } }, { writeKey: 'wk_reuse' });
    const [second] = (await t.call('listMessages', {})).items;
    // A new call id (call-ids.test.ts), over the reused request id.
    expect(second.id).toBeGreaterThan(first.id);
    expect(second.label).toBe('Second');
    const detail = await t.call('getMessage', { id: second.id });
    expect(detail.call.raw).toEqual({ userId: 'u', event: 'Second', properties: { n: 2 } });
    expect(detail.call.normalized).toMatchObject({ event: 'Second', properties: { n: 2 } });
  });
});

describe('clearCalls, then the same call again', () => {
  it('is not a duplicate of a call no longer shown: clearing forgets the messageIds, as a restart would', async () => {
    const t = await lab.start({ config: { sources: [{ name: 's', writeKey: 'wk_again' }] } });
    const call = { userId: 'u', event: 'Again', messageId: 'again-1' };
    expect((await t.post('/v1/track', call, { writeKey: 'wk_again' })).status).toBe(200);
    // Before the clear, the repeat is a duplicate.
    await t.post('/v1/track', call, { writeKey: 'wk_again' });
    expect((await t.call('listMessages', {})).items.map((m) => m.status).sort()).toEqual(['accepted', 'dropped']);
    await t.call('clearCalls', {});

    expect((await t.post('/v1/track', call, { writeKey: 'wk_again' })).status).toBe(200);
    const { items } = await t.call('listMessages', {});
    expect(items.map((m) => [m.messageId, m.status])).toEqual([['again-1', 'accepted']]);
    // And it is remembered again from here on.
    await t.post('/v1/track', call, { writeKey: 'wk_again' });
    expect((await t.call('listMessages', {})).items.map((m) => m.status).sort()).toEqual(['accepted', 'dropped']);
  });
});
