import { describe, expect, it } from 'vitest';
import { waitFor, webhookSource } from '../helpers/engine';
import { testLab } from '../helpers/test-lab';

// Issue 26: a replay of a call that was never forwarded makes its delivery for that replay only. A
// failed one leaves nothing pending (it used to be sent, and retried, at the next start), and every
// replay of it sends the same webhook-id (it used to get a new one each time).
const lab = testLab();
const KEY = 'wk_replay';
const SW = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('replaying a call that was never forwarded', () => {
  it('a failed replay leaves nothing to send: not at the next start, not later', async () => {
    const down = await lab.receiver((_req, res) => void res.writeHead(500).end('no'));
    const dataDir = lab.dataDir();
    const urls = [{ url: `${down.url}/hook`, headers: {} }];
    const config = { sources: [{ ...webhookSource('app', KEY, []), webhooks: { enabled: false, urls } }] };
    let t = await lab.start({ dataDir, config });
    await t.post('/v1/track', { userId: 'u1', event: 'E' }, { writeKey: KEY });
    const [c] = (await waitFor(async () => ((await t.call('listMessages', { limit: 5 })).items.length ? await t.call('listMessages', { limit: 5 }) : null), 'the call')).items;
    const r = await t.call('replayMessage', { id: c.id });
    expect(r.attempts.map((a) => a.responseStatus)).toEqual([500]);
    const detail = await t.call('getMessage', { id: c.id });
    expect(detail.deliveries[0].state).toBe('failed');
    expect((await t.call('health', {})).pendingDeliveries).toBe(0);

    t = await lab.start({ dataDir, config });
    // Nothing is resumed: the receiver saw the replay only, and still does after the dispatcher's start.
    await t.call('health', {});
    expect(down.requests).toHaveLength(1);
    expect((await t.call('getMessage', { id: c.id })).deliveries[0].state).toBe('failed');
  });

  it('every replay of it sends the same webhook-id (Standard Webhooks), as a scheduled delivery does', async () => {
    const ok = await lab.receiver();
    const urls = [{ url: `${ok.url}/hook`, headers: {} }];
    const t = await lab.start({ config: { sources: [{ name: 'app', writeKey: KEY, webhooks: { enabled: false, urls, standardWebhooksSecret: SW } }] } });
    await t.post('/v1/track', { userId: 'u1', event: 'E' }, { writeKey: KEY });
    const [c] = (await waitFor(async () => ((await t.call('listMessages', { limit: 5 })).items.length ? await t.call('listMessages', { limit: 5 }) : null), 'the call')).items;
    await t.call('replayMessage', { id: c.id });
    await t.call('replayMessage', { id: c.id });
    const ids = ok.requests.map((q) => q.headers['webhook-id']);
    expect(ids).toHaveLength(2);
    expect(ids[0]).toMatch(/^msg_/);
    expect(ids[1]).toBe(ids[0]);
  });
});
