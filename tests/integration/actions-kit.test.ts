import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/engine';
import { testLab } from '../helpers/test-lab';

// Issue 23 over real sockets: mappings built by Segment's mapping kit and triggers written in FQL,
// decided by Segment's subscription code, and data that is not an object failed as Segment fails it.

const lab = testLab();
const SECRET = 's3cret';
const hmac = (text: string) => createHmac('sha1', SECRET).update(text, 'utf8').digest('hex');

describe('Actions on Segment\'s libraries', () => {
  it('an FQL trigger on properties picks the calls; templates arrive raw, signed over the bytes sent; non-object data is failed unsent', async () => {
    const r = await lab.receiver();
    const mapping = (name: string, trigger: unknown, data: unknown) => ({ name, trigger, url: `${r.url}/${name}`, method: 'POST', headers: {}, data });
    const t = await lab.start({
      config: {
        sources: [
          {
            name: 'shop',
            writeKey: 'wk_kit',
            webhooks: {
              enabled: true,
              mode: 'actions',
              sharedSecret: SECRET,
              mappings: [
                mapping('pro', 'type = "track" and properties.plan = "pro"', { u: { '@template': '{{properties.url}}' }, up: { '@case': { operator: 'upper', value: { '@path': '$.properties.plan' } } } }),
                mapping('text', { type: 'track' }, { '@path': '$.properties.plan' }),
              ],
            },
          },
        ],
      },
    });
    const url = 'https://x.example/a?b=1&c=<d> "é"';
    for (const [id, plan] of [['m-pro', 'pro'], ['m-free', 'free']]) {
      expect((await t.post('/v1/track', { userId: 'u1', event: 'Order Completed', messageId: id, properties: { plan, url } }, { writeKey: 'wk_kit' })).status).toBe(200);
    }

    const [pro] = await r.waitForRequests(1);
    expect(pro.url).toBe('/pro');
    const body = pro.body.toString('utf8');
    expect(body).toBe(JSON.stringify({ u: url, up: 'PRO' }));
    expect(pro.headers['x-signature']).toBe(hmac(body));

    // 'text' matched both calls but its data is a string: Segment refuses it (400, nothing sent).
    const failed = await waitFor(async () => {
      const items = (await t.call('listMessages', { limit: 10 })).items;
      const details = await Promise.all(items.map((c) => t.call('getMessage', { id: c.id })));
      const text = details.flatMap((d) => d.deliveries.filter((x) => x.kind === 'actions' && x.mapping === 'text'));
      return text.length === 2 && text.every((x) => x.state === 'failed') ? text : undefined;
    }, 'the two unsent "text" deliveries');
    for (const d of failed) {
      expect(d.attempts).toHaveLength(0);
      expect(d.lastError).toMatch(/^not sent: the mapped data is a string \("(pro|free)"\), not an object: Segment's Webhooks \(Actions\) refuses it/);
    }
    expect(r.requests.map((x) => x.url)).toEqual(['/pro']);
  });

  it("headers go out as Segment's request client sends them, gzip answers are read, and the inspector records every header sent", async () => {
    const { gzipSync } = await import('node:zlib');
    const r = await lab.receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(gzipSync('{"ok":true}'));
    });
    const t = await lab.start({
      config: {
        sources: [
          {
            name: 'hdr',
            writeKey: 'wk_hdr',
            webhooks: {
              enabled: true,
              mode: 'actions',
              sharedSecret: SECRET,
              mappings: [{ name: 'm', trigger: {}, url: `${r.url}/h`, method: 'POST', headers: { 'X-Zed': 'z', 'X-Api-Key': 'k', 'User-Agent': 'mine/1' }, data: { e: { '@path': '$.event' } } }],
            },
          },
        ],
      },
    });
    expect((await t.post('/v1/track', { userId: 'u1', event: 'Hdr', messageId: 'm-hdr' }, { writeKey: 'wk_hdr' })).status).toBe(200);
    const [req] = await r.waitForRequests(1);
    const names = req.rawHeaders.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
    // Segment's order, but for the HTTP client's framing: undici writes host and connection first and
    // content-length last (Node's http client, under node-fetch, puts host and connection last).
    expect(names).toEqual(['host', 'connection', 'user-agent', 'x-signature', 'x-api-key', 'x-zed', 'content-type', 'accept', 'accept-encoding', 'content-length']);
    expect(req.headers).toMatchObject({ 'user-agent': 'mine/1', 'x-signature': hmac('{"e":"Hdr"}'), accept: '*/*', 'accept-encoding': 'gzip,deflate', connection: 'keep-alive' });

    const attempt = await waitFor(async () => {
      const c = (await t.call('listMessages', { limit: 5 })).items[0];
      const d = c && (await t.call('getMessage', { id: c.id }));
      return d?.deliveries[0]?.attempts[0];
    }, 'the attempt');
    const recorded = Object.fromEntries(Object.entries(attempt.requestHeaders).map(([k, v]) => [k.toLowerCase(), v]));
    const sent = Object.fromEntries(names.map((n) => [n, String(req.headers[n])]));
    expect(recorded).toEqual(sent);
    expect(attempt.responseBody).toBe('{"ok":true}');
  });

  it('a trigger Segment cannot read is refused with its field; one it reads otherwise than it looks is taken and warned about', async () => {
    const t = await lab.start({});
    const webhooks = (trigger: string) => ({ enabled: true, mode: 'actions', urls: [], mappings: [{ name: 'm', trigger, url: 'https://r.example/x', method: 'POST', headers: {} }] }) as const;
    await expect(t.call('createSource', { name: 'bad', webhooks: webhooks('(type = "track"') } as never)).rejects.toThrow(/webhooks\.mappings\[0\]\.trigger: not a trigger Segment can read/);
    await t.call('createSource', { name: 'odd', webhooks: webhooks('type = ') } as never);
    expect(await t.call('checkTrigger', { trigger: 'not (type = "track")' })).toMatchObject({ error: null, warning: expect.stringMatching(/"not" is dropped.*reads it as: type = "track"/) });
    // Empty FQL is refused here as in a config (found by a review: it answered "matches").
    expect(await t.call('checkTrigger', { trigger: ' ' })).toMatchObject({ error: expect.stringMatching(/^empty: Segment's parser refuses an empty trigger/), matches: null });
  });
});
