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

  it('a trigger Segment cannot read is refused with its field', async () => {
    const t = await lab.start({});
    const webhooks = { enabled: true, mode: 'actions', urls: [], mappings: [{ name: 'm', trigger: 'type = ', url: 'https://r.example/x', method: 'POST', headers: {} }] } as const;
    await expect(t.call('createSource', { name: 'bad', webhooks } as never)).rejects.toThrow(/webhooks\.mappings\[0\]\.trigger: not a trigger Segment can read: a value is missing after "="/);
  });
});
