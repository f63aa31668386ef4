import { describe, expect, it } from 'vitest';
import type { ServerResponse } from 'node:http';
import { waitFor, webhookSource, type TestEngine } from '../helpers/engine';
import { testLab } from '../helpers/test-lab';

// Issue 22, item 2: a receiver that never answers costs only its own lane (dispatcher/lanes.ts). Lanes
// are made small here (2 requests out, 4 waiting in memory) so the bounds show with a few calls.
const lab = testLab();
const LANES = { requests: 2, queue: 4 };

/** A receiver that holds every request open until released (then answers 200), or until the test ends. */
async function hangingReceiver() {
  const open: ServerResponse[] = [];
  let answering = false;
  const r = await lab.receiver((_req, res) => {
    if (answering) return res.writeHead(200).end('ok');
    open.push(res);
    res.on('close', () => open.splice(open.indexOf(res), 1));
  });
  return {
    r,
    answerFromNowOn() {
      answering = true;
      for (const res of open.splice(0)) if (!res.writableEnded) res.writeHead(200).end('ok');
    },
  };
}

const batch = (n: number, prefix: string) => ({ batch: Array.from({ length: n }, (_, i) => ({ type: 'track', event: 'E', userId: 'u', messageId: `${prefix}-${i}` })) });

async function countDelivered(t: TestEngine, sourceId?: string): Promise<number> {
  const page = await t.call('listMessages', { limit: 500, status: 'delivered', ...(sourceId ? { sourceId } : {}) });
  return page.items.length;
}

describe('receiver lanes', () => {
  it('a hanging URL takes its own lane only: its source and a neighbour source are delivered, the URLs that waited are not sent', async () => {
    const okA = await lab.receiver();
    const okB = await lab.receiver();
    const { r: hang } = await hangingReceiver();
    const t = await lab.start({
      lanes: LANES,
      config: { sources: [webhookSource('a', 'wk_a', [`${okA.url}/ok`, `${hang.url}/hang`]), webhookSource('b', 'wk_b', [`${okB.url}/ok`])] },
    });
    expect((await t.post('/v1/batch', batch(20, 'a'), { writeKey: 'wk_a' })).status).toBe(200);
    expect((await t.post('/v1/batch', batch(5, 'b'), { writeKey: 'wk_b' })).status).toBe(200);
    await waitFor(async () => (await countDelivered(t)) === 25, 'all 25 calls delivered');
    // Exactly the lane's two requests reached the hanging receiver; the other 18 were not sent,
    // because the healthy URL delivered their calls while they waited for a slot.
    await hang.waitForRequests(2);
    expect(hang.requests.length).toBe(2);
    const sources = await t.call('listSources', {});
    const a = sources.find((s) => s.name === 'a')!;
    const page = await t.call('listMessages', { sourceId: a.id, limit: 100 });
    const hangStates = page.items.map((c) => c.urls[1]?.state);
    expect(hangStates.filter((s) => s === 'not_attempted')).toHaveLength(18);
    expect(hangStates.filter((s) => s === 'in_flight' || s === 'failed')).toHaveLength(2);
    expect(okB.requests).toHaveLength(5);
  });

  it('deliveries waiting for a dead receiver wait as rows past the lane queue, and all go out, across a restart, once it answers', async () => {
    const dead = await hangingReceiver();
    const dataDir = lab.dataDir();
    const config = { sources: [webhookSource('only', 'wk_only', [`${dead.r.url}/hook`])] };
    let t = await lab.start({ lanes: LANES, dataDir, config });
    expect((await t.post('/v1/batch', batch(100, 'm'), { writeKey: 'wk_only' })).status).toBe(200);
    // 2 out, 4 waiting in memory, the other 94 parked as rows.
    await waitFor(async () => (await t.call('health', {})).parkedDeliveries === 94, '94 parked deliveries');
    await dead.r.waitForRequests(2);
    expect(dead.r.requests).toHaveLength(2);
    expect((await t.call('health', {})).pendingDeliveries).toBe(100);

    t = await lab.start({ lanes: LANES, dataDir, config });
    dead.answerFromNowOn();
    await waitFor(async () => (await countDelivered(t)) === 100, 'all 100 delivered after the restart', 30_000);
    const ids = new Set(dead.r.requests.map((q) => JSON.parse(q.body.toString()).messageId as string));
    expect(ids.size).toBe(100);
    const h = await t.call('health', {});
    expect(h.parkedDeliveries).toBe(0);
    expect(h.pendingDeliveries).toBe(0);
  });

  it('parked deliveries are claimed as the lane frees, oldest first, without a restart', async () => {
    const slow = await hangingReceiver();
    const t = await lab.start({ lanes: LANES, config: { sources: [webhookSource('s', 'wk_s', [`${slow.r.url}/hook`])] } });
    expect((await t.post('/v1/batch', batch(30, 'p'), { writeKey: 'wk_s' })).status).toBe(200);
    await waitFor(async () => (await t.call('health', {})).parkedDeliveries === 24, '24 parked deliveries');
    slow.answerFromNowOn();
    await waitFor(async () => (await countDelivered(t)) === 30, 'all 30 delivered');
    const order = slow.r.requests.map((q) => Number((JSON.parse(q.body.toString()).messageId as string).slice(2)));
    // The first two went out at once; the rest in arrival order (memory queue first, then the rows).
    expect(order.slice(2)).toEqual([...order.slice(2)].sort((x, y) => x - y));
    expect((await t.call('health', {})).parkedDeliveries).toBe(0);
  });
});
