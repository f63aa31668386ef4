import { describe, expect, it } from 'vitest';
import { testLab } from '../helpers/test-lab';
import { pointsAt, retargeted } from '../../src/shared/receiver-uses';

// A mock receiver's URL is its path on the HTTP or HTTPS listener: editing the path or TLS gives it a
// new URL. The sources sending to the old one follow it (they would get 404 from then on).

const lab = testLab();

describe('editing a mock receiver’s path or TLS', () => {
  it('moves the sources’ Classic URLs and mappings to its new URL; calls sent after reach it', async () => {
    const t = await lab.start();
    const hook = await t.call('createReceiver', { name: 'hook', path: '/before' });
    const other = await t.call('createReceiver', { name: 'other', path: '/other' });
    const shop = await t.call('createSource', { name: 'shop', writeKey: 'wk_move' });
    await t.call('updateSource', {
      id: shop.id,
      webhooks: {
        enabled: true,
        sharedSecret: '',
        mode: 'both',
        urls: [
          { url: hook.url, headers: { 'X-Kept': 'yes' } },
          { url: other.url, headers: {} },
        ],
        mappings: [{ name: 'all', trigger: 'type = "track"', url: hook.url, method: 'POST', headers: {} }],
      },
    });

    const moved = await t.call('updateReceiver', { id: hook.id, path: '/after' });
    expect(moved.url).not.toBe(hook.url);
    const source = (await t.call('listSources', {})).find((s) => s.id === shop.id)!;
    expect(source.webhooks.urls).toEqual([
      { url: moved.url, headers: { 'X-Kept': 'yes' } },
      { url: other.url, headers: {} },
    ]);
    expect(source.webhooks.mappings?.map((m) => m.url)).toEqual([moved.url]);

    // TLS on: the HTTPS listener's URL, followed the same way.
    const tls = await t.call('updateReceiver', { id: hook.id, tls: true });
    expect(tls.url.startsWith('https://')).toBe(true);
    const after = (await t.call('listSources', {})).find((s) => s.id === shop.id)!;
    expect(after.webhooks.urls[0].url).toBe(tls.url);
    await t.call('updateReceiver', { id: hook.id, tls: false });

    expect((await t.post('/v1/track', { userId: 'u', event: 'Moved' }, { writeKey: 'wk_move' })).status).toBe(200);
    await expect
      .poll(async () => (await t.call('listReceiverRequests', { id: hook.id, limit: 10 })).map((r) => r.path))
      .toEqual(expect.arrayContaining(['/after']));
  });

  it('a URL with a query string or credentials points at the receiver too (it routes on the path): it follows, keeping them; deleting is refused for it', async () => {
    const t = await lab.start();
    const hook = await t.call('createReceiver', { name: 'hook', path: '/before' });
    const withQuery = `${hook.url}?tenant=a`;
    const withUser = hook.url.replace('http://', 'http://u:p@');
    const shop = await t.call('createSource', { name: 'shop', writeKey: 'wk_q', webhooks: { enabled: true, urls: [{ url: withQuery }, { url: withUser }] } });
    await expect(t.call('deleteReceiver', { id: hook.id })).rejects.toThrow(/source "shop"/);

    const moved = await t.call('updateReceiver', { id: hook.id, path: '/after' });
    const source = (await t.call('listSources', {})).find((s) => s.id === shop.id)!;
    expect(source.webhooks.urls.map((u) => u.url)).toEqual([`${moved.url}?tenant=a`, moved.url.replace('http://', 'http://u:p@')]);
    expect((await t.post('/v1/track', { userId: 'u', event: 'Moved' }, { writeKey: 'wk_q' })).status).toBe(200);
    await expect.poll(async () => (await t.call('listReceiverRequests', { id: hook.id, limit: 10 })).map((r) => r.path)).toContain('/after?tenant=a');
  });

  it('points at: same scheme, host, port and path; not another spelling of the host, nor another path or port', () => {
    const r = 'http://127.0.0.1:8789/hook';
    expect(pointsAt('http://127.0.0.1:8789/hook?x=1#f', r)).toBe(true);
    expect(pointsAt('http://a:b@127.0.0.1:8789/hook', r)).toBe(true);
    expect(pointsAt('http://localhost:8789/hook', r)).toBe(false);
    expect(pointsAt('http://127.0.0.1:8789/hook/', r)).toBe(false);
    expect(pointsAt('http://127.0.0.1:8789/hooks', r)).toBe(false);
    expect(pointsAt('https://127.0.0.1:8789/hook', r)).toBe(false);
    expect(pointsAt('http://127.0.0.1:8790/hook', r)).toBe(false);
    const w = { enabled: true, sharedSecret: '', urls: [{ url: `${r}?x=1`, headers: {} }, { url: 'http://127.0.0.1:9/b', headers: {} }] };
    expect(retargeted(w, r, 'http://127.0.0.1:9/b').urls.map((u) => u.url)).toEqual(['http://127.0.0.1:9/b?x=1', 'http://127.0.0.1:9/b']);
  });

  it('a source that already had the new URL keeps it once', () => {
    const w = { enabled: true, sharedSecret: '', urls: [{ url: 'http://l/a', headers: {} }, { url: 'http://l/b', headers: {} }] };
    expect(retargeted(w, 'http://l/a', 'http://l/b').urls).toEqual([{ url: 'http://l/b', headers: {} }]);
    expect(retargeted(w, 'http://l/x', 'http://l/y')).toEqual(w);
  });
});
