import { describe, expect, it } from 'vitest';
import { startControlServer } from '../../src/main/server/control-server';
import { sentBody } from '../../src/shared/attempt-body';
import type { CallDetail } from '../../src/shared/types';
import { waitFor, webhookSource } from '../helpers/engine';
import { testLab } from '../helpers/test-lab';

// Issue 27: a call's detail (GET /api/messages/:id) sends each delivery's request body once, on the
// delivery; an attempt carries a body only when it sent other bytes (a replay with an edited body).
// Measured over the control API's socket: 5 attempts of a 30 KB body.
const KEY = 'wk_body_once';
const TOKEN = 'body-once-token';
const lab = testLab();

describe('a call detail with many attempts of one body', () => {
  it('carries the body once, on the delivery, however many attempts sent it', async () => {
    const r = await lab.receiver();
    const t = await lab.start({ config: { sources: [webhookSource('app', KEY, [`${r.url}/hook`], 'sec')] } });
    const server = await startControlServer({ engine: t.engine, host: '127.0.0.1', port: 0, token: TOKEN });
    try {
      const answer = async (id: number) => {
        const res = await fetch(`${server.url}/api/messages/${id}`, { headers: { authorization: `Bearer ${TOKEN}` } });
        expect(res.status).toBe(200);
        const text = await res.text();
        return { text, bytes: Buffer.byteLength(text), detail: JSON.parse(text) as CallDetail };
      };
      const marker = `marker-${Date.now()}`;
      const blob = `${marker}:${'x'.repeat(30_000)}`;
      expect((await t.post('/v1/track', { userId: 'u', event: 'Big', properties: { blob } }, { writeKey: KEY })).status).toBe(200);
      const id = await waitFor(async () => (await t.call('listMessages', { limit: 1 })).items[0]?.id, 'the call stored');
      await waitFor(async () => (await t.call('getMessage', { id })).deliveries[0]?.state === 'delivered', 'delivered');

      const one = await answer(id);
      // Four replays of the same bytes: 5 attempts of one delivery.
      for (let i = 0; i < 4; i++) await t.call('replayMessage', { id });
      const five = await answer(id);
      const [d] = five.detail.deliveries;
      expect(d.attempts).toHaveLength(5);
      expect(Buffer.byteLength(d.body)).toBeGreaterThan(30_000);
      for (const a of d.attempts) expect(a).not.toHaveProperty('requestBody');
      // The call as received and normalized holds the blob too; the attempts add no copy of it.
      const copies = (text: string) => text.split(marker).length - 1;
      expect(copies(five.text)).toBe(copies(one.text));
      expect(five.bytes - one.bytes).toBeLessThan(8_000);
      console.log(`detail of a 30 KB body: 1 attempt ${one.bytes} B, 5 attempts ${five.bytes} B`);

      // Each attempt sent the delivery's body: the receiver got those bytes five times.
      await r.waitForRequests(5);
      for (const a of d.attempts) expect(sentBody(d, a)).toBe(d.body);
      expect(r.requests.map((q) => q.body.toString('utf8'))).toEqual(Array(5).fill(d.body));

      // An edited replay sent other bytes: that attempt, and only it, carries them.
      const edited = JSON.stringify({ type: 'track', event: 'Edited', userId: 'u' });
      const replay = await t.call('replayMessage', { id, body: edited });
      expect(replay.attempts[0].requestBody).toBe(edited);
      const after = (await answer(id)).detail.deliveries[0];
      expect(after.attempts.map((a) => a.requestBody)).toEqual([undefined, undefined, undefined, undefined, undefined, edited]);
      expect(sentBody(after, after.attempts[5])).toBe(edited);
      await r.waitForRequests(6);
      expect(r.requests[5].body.toString('utf8')).toBe(edited);
    } finally {
      await server.app.close();
    }
  });
});
