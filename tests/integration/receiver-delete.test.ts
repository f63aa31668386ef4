import { afterEach, describe, expect, it } from 'vitest';
import { startControlServer } from '../../src/main/server/control-server';
import { waitFor, type TestEngine } from '../helpers/engine';
import { testLab } from '../helpers/test-lab';
import type { ReceiverUse } from '../../src/shared/receiver-uses';

// Issue 26: deleting a mock receiver left its URL in the sources that sent to it, and their later
// calls failed with 404. DELETE /api/receivers/:id now refuses (409) naming the sources, unless
// asked to detach (?detach=1): then its URL is removed from them first, a source left with no URL
// stops sending that side (its unfinished deliveries canceled), and the answer lists them. Real
// sockets: the control API and the mock receivers.

const lab = testLab();
const TOKEN = 'receiver-delete-token';
let control: Awaited<ReturnType<typeof startControlServer>> | undefined;
afterEach(async () => {
  await control?.app.close();
  control = undefined;
});

async function start(): Promise<TestEngine> {
  const t = await lab.start();
  control = await startControlServer({ engine: t.engine, host: '127.0.0.1', port: 0, token: TOKEN });
  return t;
}

async function del(id: string, query = ''): Promise<{ status: number; json: { ok?: true; detached?: ReceiverUse[]; error?: string; code?: string } }> {
  const res = await fetch(`${control!.url}/api/receivers/${id}${query}`, { method: 'DELETE', headers: { authorization: `Bearer ${TOKEN}` } });
  return { status: res.status, json: (await res.json()) as never };
}

describe('deleting a mock receiver that sources send to', () => {
  it('is refused naming the sources; with detach=1 its URL leaves them, and what that did to each is answered', async () => {
    const t = await start();
    const hook = await t.call('createReceiver', { name: 'hook', path: '/hook', behavior: { status: 500 } });
    const other = await t.call('createReceiver', { name: 'other', path: '/other' });
    const only = await t.call('createSource', { name: 'only', writeKey: 'wk_only', webhooks: { enabled: true, urls: [{ url: hook.url }] } });
    const two = await t.call('createSource', { name: 'two', webhooks: { enabled: true, urls: [{ url: other.url }, { url: hook.url, headers: { 'X-A': '1' } }] } });
    const both = await t.call('createSource', {
      name: 'both',
      webhooks: { enabled: true, mode: 'both', urls: [{ url: hook.url }], mappings: [{ name: 'm', url: other.url }] },
    });
    await t.call('createSource', { name: 'elsewhere', webhooks: { enabled: true, urls: [{ url: other.url }] } });
    // A call of "only" left retrying at the receiver (it answers 500): detaching must not leave it retrying for hours.
    expect((await t.post('/v1/track', { userId: 'u', event: 'E' }, { writeKey: 'wk_only' })).status).toBe(200);
    const [call] = (await t.call('listMessages', { sourceId: only.id })).items;
    await waitFor(async () => (await t.call('getMessage', { id: call.id })).deliveries[0]?.state === 'retrying', 'the call to be retrying');

    const refused = await del(hook.id);
    expect([refused.status, refused.json.code]).toEqual([409, 'conflict']);
    expect(refused.json.error).toBe(
      'receiver "hook" is used by source "only": its only URL, so its Webhooks would be turned off; source "two"; source "both": its only URL, so it would send Actions only: ' +
        'their calls would fail with 404 once it is gone. Delete with detach=1 to remove its URL from them',
    );
    expect((await t.call('listReceivers', {})).map((r) => r.name).sort()).toEqual(['hook', 'other']);
    expect((await t.call('listSources', {})).find((s) => s.id === two.id)!.webhooks.urls).toHaveLength(2);

    const done = await del(hook.id, '?detach=1');
    expect(done.status).toBe(200);
    expect(done.json.detached).toEqual([
      { sourceId: only.id, sourceName: 'only', urls: [0], mappings: [], effect: 'webhooks_off' },
      { sourceId: two.id, sourceName: 'two', urls: [1], mappings: [], effect: 'url_removed' },
      { sourceId: both.id, sourceName: 'both', urls: [0], mappings: [], effect: 'actions_only' },
    ]);
    expect((await t.call('listReceivers', {})).map((r) => r.name)).toEqual(['other']);
    const sources = await t.call('listSources', {});
    const byName = (n: string) => sources.find((s) => s.name === n)!.webhooks;
    expect(byName('only')).toMatchObject({ enabled: false, urls: [] });
    expect(byName('two')).toMatchObject({ enabled: true, urls: [{ url: other.url, headers: {} }] });
    expect(byName('both')).toMatchObject({ enabled: true, mode: 'actions', urls: [], mappings: [{ name: 'm', url: other.url }] });
    expect(byName('elsewhere').urls).toEqual([{ url: other.url, headers: {} }]);
    const delivery = (await t.call('getMessage', { id: call.id })).deliveries[0];
    expect([delivery.state, delivery.lastError]).toEqual(['canceled', 'canceled: Webhooks was turned off for its source (mock receiver "hook" deleted)']);
  });

  it("a receiver that is an Actions mapping's URL is refused even with detach=1 (a mapping needs a URL); one nobody uses is deleted at once", async () => {
    const t = await start();
    const hook = await t.call('createReceiver', { name: 'hook', path: '/hook' });
    await t.call('createSource', { name: 'acts', webhooks: { enabled: true, mode: 'actions', mappings: [{ name: 'orders', url: hook.url }] } });
    const r = await del(hook.id, '?detach=1');
    expect(r.status).toBe(409);
    expect(r.json.error).toBe(
      'receiver "hook" is the URL of source "acts" (mapping "orders"): give that mapping another URL in Destinations first (a mapping needs a URL, so it cannot be detached)',
    );
    expect(await t.call('listReceivers', {})).toHaveLength(1);

    const unused = await t.call('createReceiver', { name: 'unused', path: '/unused' });
    expect(await del(unused.id)).toEqual({ status: 200, json: { ok: true, detached: [] } });
  });
});
