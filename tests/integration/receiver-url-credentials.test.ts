import { describe, expect, it } from 'vitest';
import { testLab } from '../helpers/test-lab';
import { waitFor } from '../helpers/engine';

// Issue 22, item 7: a receiver URL with `user:password@` sends them as HTTP Basic auth (as curl and
// Segment's request client do), and the password never leaves the lab in what it shows: call
// summaries, details, attempts, events, exports (JSON Lines and HAR).

const lab = testLab();
const PASSWORD = 'pa:ss@w0rd-7f3c';
const ENCODED = encodeURIComponent(PASSWORD);
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('a receiver URL with user:password@', () => {
  it('is sent as Basic auth (Classic and Actions); a static Authorization header wins; the password is masked everywhere it is shown', async () => {
    const r = await lab.receiver((req, res) => {
      const expected = req.url === '/explicit' ? 'Bearer static-token' : basic('bob', PASSWORD);
      res.writeHead(req.headers.authorization === expected ? 200 : 401).end();
    });
    const host = r.url.slice('http://'.length);
    const url = `http://bob:${ENCODED}@${host}/hook`;
    const masked = `http://bob:****@${host}/hook`;
    const t = await lab.start({
      config: {
        sources: [
          {
            name: 'creds',
            writeKey: 'wk_creds',
            webhooks: {
              enabled: true,
              mode: 'both',
              urls: [{ url, headers: {} }, { url: `http://eve:${ENCODED}@${host}/explicit`, headers: { Authorization: 'Bearer static-token' } }],
              mappings: [{ name: 'orders', url: `http://bob:${ENCODED}@${host}/actions`, method: 'PUT', headers: {} }],
            },
          },
        ],
      },
    });
    expect((await t.post('/v1/track', { userId: 'u1', event: 'Order Completed' }, { writeKey: 'wk_creds' })).status).toBe(200);
    await r.waitForRequests(3);
    const byPath = (p: string) => r.requests.find((q) => q.url === p)!;
    expect(byPath('/hook').headers.authorization).toBe(basic('bob', PASSWORD));
    expect(byPath('/actions').headers.authorization).toBe(basic('bob', PASSWORD));
    expect(byPath('/explicit').headers.authorization).toBe('Bearer static-token');
    for (const q of r.requests) expect(q.rawHeaders.filter((h) => h.toLowerCase() === 'authorization')).toHaveLength(1);

    const page = await waitFor(async () => {
      const p = await t.call('listMessages', { limit: 10 });
      return p.items[0]?.urls.length === 3 && p.items[0].urls.every((u) => u.state === 'delivered') ? p : null;
    }, 'the call delivered to every URL');
    expect(page.items[0].urls.map((u) => u.url)).toEqual([masked, `http://eve:****@${host}/explicit`, `http://bob:****@${host}/actions`]);

    const detail = await t.call('getMessage', { id: page.items[0].id });
    const shown = [
      JSON.stringify(page),
      JSON.stringify(detail),
      JSON.stringify(t.events),
      (await t.call('exportDeliveries', { format: 'jsonl' })).content,
      (await t.call('exportDeliveries', { format: 'har' })).content,
    ];
    for (const text of shown) {
      expect(text).not.toContain(ENCODED);
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain(Buffer.from(`bob:${PASSWORD}`).toString('base64'));
    }
    expect(detail.deliveries.flatMap((d) => d.urls.map((u) => u.url))).toContain(masked);
    expect(detail.deliveries.flatMap((d) => d.attempts.map((a) => a.url))).toContain(masked);
    const har = JSON.parse((await t.call('exportDeliveries', { format: 'har' })).content) as { log: { entries: { request: { url: string } }[] } };
    expect(har.log.entries.map((e) => e.request.url)).toContain(masked);

    // The source's settings keep the URL as given: it is what the Destinations form edits and a config export restores.
    const [source] = await t.call('listSources', {});
    expect(source.webhooks.urls[0].url).toBe(url);
  });

  it("a failed delivery's lastError masks the password too, in the detail and in the live events", async () => {
    const r = await lab.receiver((_req, res) => res.writeHead(400).end());
    const host = r.url.slice('http://'.length);
    const t = await lab.start({
      config: { sources: [{ name: 'creds', writeKey: 'wk_creds', webhooks: { enabled: true, urls: [{ url: `http://bob:${ENCODED}@${host}/hook`, headers: {} }] } }] },
    });
    await t.post('/v1/track', { userId: 'u1', event: 'Refused' }, { writeKey: 'wk_creds' });
    const detail = await waitFor(async () => {
      const c = (await t.call('listMessages', { limit: 1 })).items[0];
      const d = c && (await t.call('getMessage', { id: c.id }));
      return d?.deliveries[0]?.state === 'failed' ? d : null;
    }, 'the call failed');
    expect(detail.deliveries[0].lastError).toBe(`http://bob:****@${host}/hook: discarded: 4xx (HTTP 400)`);
    for (const text of [JSON.stringify(detail), JSON.stringify(t.events)]) {
      expect(text).not.toContain(ENCODED);
      expect(text).not.toContain(PASSWORD);
    }
  });
});
