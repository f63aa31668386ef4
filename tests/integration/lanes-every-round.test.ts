import { describe, expect, it } from 'vitest';
import type { ServerResponse } from 'node:http';
import type { ProbeReport } from '../../src/shared/probe.contract';
import { waitFor, webhookSource, type TestEngine } from '../helpers/engine';
import { testLab } from '../helpers/test-lab';
import { LANE_REQUESTS } from '../../src/main/engine/dispatcher/lanes';

// Issue 41, item 1: a receiver's lane bounds every request sent to it, not only the scheduled ones.
// A bulk retry and a receiver check used to go out beside the lane (146 requests open to a receiver
// whose lane allows 128). Lanes are small in most cases here so the bound shows with fewer calls;
// attempts wait the longest timeout there is, so the only requests that end are those the receiver
// answers (the count the receiver keeps never lags a timeout the lab saw first).
const lab = testLab();
const LANES = { requests: 8, queue: 16 };
const LONG_WAIT = { preset: 'custom', delaysMs: [3_600_000], jitter: 0, windowMs: 4 * 3_600_000, timeoutMs: 60_000 };

/** A receiver that refuses (400), then holds every request open until it answers from then on; counts requests open at once. */
async function switchingReceiver() {
  let mode: 'refuse' | 'hold' | 'answer' = 'refuse';
  const open = new Set<ServerResponse>();
  let maxOpen = 0;
  const r = await lab.receiver((_req, res) => {
    if (mode === 'refuse') return res.writeHead(400).end('no');
    if (mode === 'answer') return res.writeHead(200).end('ok');
    open.add(res);
    maxOpen = Math.max(maxOpen, open.size);
    res.on('close', () => open.delete(res));
  });
  return {
    r,
    get open() {
      return open.size;
    },
    get maxOpen() {
      return maxOpen;
    },
    hold() {
      mode = 'hold';
    },
    answerFromNowOn() {
      mode = 'answer';
      for (const res of [...open]) {
        open.delete(res);
        if (!res.writableEnded) res.writeHead(200).end('ok');
      }
    },
  };
}

const batch = (n: number, prefix: string) => ({ batch: Array.from({ length: n }, (_, i) => ({ type: 'track', event: 'E', userId: 'u', messageId: `${prefix}-${i}` })) });

async function countState(t: TestEngine, status: 'failed' | 'delivered', sourceId: string): Promise<number> {
  return (await t.call('listMessages', { limit: 1, sourceId, status })).total;
}

async function sourceIds(t: TestEngine): Promise<Record<string, string>> {
  return Object.fromEntries((await t.call('listSources', {})).map((s) => [s.name, s.id]));
}

describe('every round goes through its receiver lane', () => {
  // Also at the lab's own lanes (128 requests), the bound README states: bulk retries go at most 16
  // rounds a lane at a time (manual-rounds.ts), so new calls enough to fill the lane go beside them.
  it.each([
    ['lanes of 8', LANES],
    [`the lab's own lanes of ${LANE_REQUESTS}`, undefined],
  ])('a bulk retry of 1,000 failed calls to a receiver that stopped answering, beside new calls to it, never holds more than its lane; a neighbour is delivered meanwhile (%s)', async (_name, lanes) => {
    const limit = lanes?.requests ?? LANE_REQUESTS;
    const hanging = await switchingReceiver();
    const neighbour = await lab.receiver();
    const t = await lab.start({
      lanes,
      config: {
        sources: [webhookSource('busy', 'wk_busy', [`${hanging.r.url}/hook`]), webhookSource('next', 'wk_next', [`${neighbour.url}/hook`])],
        settings: { retrySchedule: LONG_WAIT },
      },
    });
    const ids = await sourceIds(t);
    for (let k = 0; k < 10; k++) expect((await t.post('/v1/batch', batch(100, `f${k}`), { writeKey: 'wk_busy' })).status).toBe(200);
    await waitFor(async () => (await countState(t, 'failed', ids.busy!)) === 1000, '1,000 calls failed (400)', 60_000);

    hanging.hold();
    expect(await t.call('retryMatching', { sourceId: ids.busy })).toEqual({ matched: 1000, retried: 1000 });
    expect((await t.post('/v1/batch', batch(200, 'new'), { writeKey: 'wk_busy' })).status).toBe(200);
    await waitFor(() => hanging.open >= limit, `the lane's ${limit} requests open`);
    // The neighbour's calls are not held up by any of it.
    expect((await t.post('/v1/batch', batch(20, 'n'), { writeKey: 'wk_next' })).status).toBe(200);
    await waitFor(async () => (await countState(t, 'delivered', ids.next!)) === 20, "the neighbour's 20 calls delivered");
    expect(hanging.maxOpen).toBe(limit);

    // The receiver answers again: the retried and the new calls all go, never more than the lane at once.
    hanging.answerFromNowOn();
    await waitFor(async () => (await countState(t, 'delivered', ids.busy!)) === 1200, 'the 1,000 retried and 200 new calls delivered', 60_000);
    expect(hanging.maxOpen).toBe(limit);
    const retried = await t.call('listMessages', { sourceId: ids.busy, limit: 1, q: 'f3-7' });
    const detail = await t.call('getMessage', { id: retried.items[0]!.id });
    expect(detail.deliveries[0]!.attempts.map((a) => [a.trigger, a.responseStatus])).toEqual([['scheduled', 400], ['manual', 200]]);
  });

  it('bulk retries to a receiver that stopped answering, from sources sending it beside others, do not hold up a bulk retry to another receiver', async () => {
    // Found by fresh-eyes reviews: bulk retries shared one queue of 16 rounds, so a retry of a
    // receiver that hangs (each round waiting out its timeout) kept another source's retry waiting;
    // then, counted per set of URLs, four sets that all include the hanging one filled every slot.
    const hanging = await switchingReceiver();
    const beside = await switchingReceiver();
    const other = await switchingReceiver();
    const h = `${hanging.r.url}/hook`;
    const t = await lab.start({
      lanes: LANES,
      config: {
        sources: [
          webhookSource('s1', 'wk_s1', [h]),
          webhookSource('s2', 'wk_s2', [h, `${beside.r.url}/2`]),
          webhookSource('s3', 'wk_s3', [h, `${beside.r.url}/3`]),
          webhookSource('s4', 'wk_s4', [h, `${beside.r.url}/4`]),
          webhookSource('other', 'wk_other', [`${other.r.url}/hook`]),
        ],
        settings: { retrySchedule: LONG_WAIT },
      },
    });
    const ids = await sourceIds(t);
    const busy = ['s1', 's2', 's3', 's4'];
    for (const s of busy) expect((await t.post('/v1/batch', batch(20, s), { writeKey: `wk_${s}` })).status).toBe(200);
    expect((await t.post('/v1/batch', batch(1, 'o'), { writeKey: 'wk_other' })).status).toBe(200);
    const failed = async () => (await Promise.all([...busy, 'other'].map((s) => countState(t, 'failed', ids[s]!)))).reduce((a, b) => a + b, 0);
    await waitFor(async () => (await failed()) === 81, 'the calls failed (400)', 60_000);

    hanging.hold();
    beside.answerFromNowOn();
    for (const s of busy) expect(await t.call('retryMatching', { sourceId: ids[s] })).toEqual({ matched: 20, retried: 20 });
    await waitFor(() => hanging.open >= LANES.requests, `the lane's ${LANES.requests} requests open`);
    other.answerFromNowOn();
    expect(await t.call('retryMatching', { sourceId: ids.other })).toEqual({ matched: 1, retried: 1 });
    // Its receiver answers at once: the retry goes while the hanging one's rounds wait out their 60 s.
    await waitFor(async () => (await countState(t, 'delivered', ids.other!)) === 1, "the other source's retry delivered");
    expect(hanging.maxOpen).toBe(LANES.requests);
    hanging.answerFromNowOn();
    await waitFor(async () => (await Promise.all(busy.map((s) => countState(t, 'delivered', ids[s]!)))).every((n) => n === 20), 'the hanging receiver answers again: every retry delivered', 60_000);
  });

  it("a receiver check of a receiver a busy source sends to waits for the source's lane, says how long, and records its attempts as probe", async () => {
    const held = await switchingReceiver();
    held.hold();
    const t = await lab.start({ lanes: LANES, config: { sources: [webhookSource('busy', 'wk_busy', [`${held.r.url}/hook`])], settings: { retrySchedule: LONG_WAIT } } });
    expect((await t.post('/v1/batch', batch(30, 'b'), { writeKey: 'wk_busy' })).status).toBe(200);
    await waitFor(() => held.open === LANES.requests, `the lane's ${LANES.requests} requests open`);

    const started = await t.call('startProbe', { url: `${held.r.url}/hook` });
    // The check's first request (stored, then sent) waits behind the busy source's: nothing more reaches the receiver.
    await waitFor(async () => (await t.call('listMessages', { sourceId: started.sourceId!, probe: true, limit: 1 })).total > 0, "the check's first call stored");
    const seen = held.r.requests.length;
    held.answerFromNowOn();
    let report: ProbeReport = started;
    await waitFor(async () => (report = await t.call('getProbe', { id: started.id })).state === 'done', 'the check done', 60_000);
    expect(held.maxOpen).toBe(LANES.requests);
    expect(seen).toBe(LANES.requests);
    const evidence = report.checks.flatMap((c) => c.evidence);
    expect(evidence[0]!.waitedMs).toBeGreaterThan(0);
    // Its attempts are the check's own: trigger probe, never retried.
    const call = await t.call('getMessage', { id: evidence[0]!.callId! });
    expect(call.deliveries[0]!.attempts.map((a) => a.trigger)).toEqual(['probe']);
  });
});
