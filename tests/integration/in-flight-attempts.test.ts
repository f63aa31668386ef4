import { describe, expect, it } from 'vitest';
import { waitFor, webhookSource } from '../helpers/engine';
import { testLab } from '../helpers/test-lab';
import { sentBody } from '../../src/shared/attempt-body';

// Issue 26: in flight, a URL that already answered showed "delivered · HTTP 200" beside "0 attempts /
// No attempt yet": its attempt was recorded only when the whole round ended. The detail now carries
// each URL's attempt as soon as it answers, and counts it, while the other URL is still out.
const lab = testLab();

describe('a round with a fast and a slow URL', () => {
  it("shows the fast URL's attempt and counts it while the slow one is in flight; the round records both once", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const fast = await lab.receiver();
    const slow = await lab.receiver(async (_req, res) => {
      await held;
      res.writeHead(200).end('late');
    });
    const t = await lab.start({ config: { sources: [webhookSource('two', 'wk_two', [`${fast.url}/fast`, `${slow.url}/slow`])] } });
    try {
      await t.post('/v1/track', { userId: 'u1', event: 'Two URLs' }, { writeKey: 'wk_two' });
      await slow.waitForRequests(1);
      const id = (await t.call('listMessages', { limit: 1 })).items[0].id;
      const live = await waitFor(async () => {
        const d = await t.call('getMessage', { id });
        return d.deliveries[0]?.attempts.length ? d : null;
      }, "the fast URL's attempt while the slow one is out");
      expect(live.urls.map((u) => u.state)).toEqual(['delivered', 'in_flight']);
      // The list row counts it too.
      expect((await t.call('listMessages', { limit: 1 })).items[0]).toMatchObject({ id, deliveryState: 'in_flight', attemptCount: 1 });
      const [delivery] = live.deliveries;
      expect(delivery.attemptCount).toBe(1);
      expect(delivery.attempts).toHaveLength(1);
      expect(delivery.attempts[0]).toMatchObject({ urlIndex: 0, responseStatus: 200, outcome: 'success', round: 1 });
      expect(delivery.attempts[0].url).toBe(`${fast.url}/fast`);
      expect(delivery.attempts[0].requestHeaders['x-signature']).toBeUndefined();
      expect(JSON.parse(sentBody(delivery, delivery.attempts[0]))).toMatchObject({ event: 'Two URLs' });
    } finally {
      release();
    }
    const done = await waitFor(async () => {
      const d = await t.call('getMessage', { id: (await t.call('listMessages', { limit: 1 })).items[0].id });
      return d.urls.every((u) => u.state === 'delivered') && d.deliveries[0].state === 'delivered' ? d : null;
    }, 'the round recorded');
    const [delivery] = done.deliveries;
    expect(delivery.attemptCount).toBe(2);
    expect(delivery.attempts.map((a) => [a.urlIndex, a.responseStatus])).toEqual([
      [0, 200],
      [1, 200],
    ]);
    for (const a of delivery.attempts) expect(a.id).toBeGreaterThan(0);
  });
});
