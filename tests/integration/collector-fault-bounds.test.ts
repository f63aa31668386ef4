import { afterEach, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../helpers/engine';
import { until } from '../helpers/until';
import { MAX_DELAYED_BYTES, type CollectorFaults } from '../../src/shared/collector-faults';

// Collector faults and the engine's bounds (issue 22, item 7): requests held by a `delay` fault count
// against a byte limit (beyond it: 503 with Retry-After at once), and the app's own test call is not
// subject to the source's faults (README, Decisions, "Collector faults").

let t: TestEngine | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

const LONG_DELAY_MS = 60_000;

async function engineWith(faults: Record<string, CollectorFaults | null>): Promise<TestEngine> {
  t = await startTestEngine({ config: { sources: Object.entries(faults).map(([name, collectorFaults]) => ({ name, writeKey: `wk_${name}`, collectorFaults })) } });
  return t;
}

/** A batch request of about 450 KB (under the 500 KB limit), 100 calls. */
function bigBatch(tag: string): string {
  const batch = Array.from({ length: 100 }, (_, i) => ({ type: 'track', userId: `u${i}`, event: tag, properties: { pad: 'x'.repeat(4_450) } }));
  return JSON.stringify({ batch });
}

describe('delayed requests are bounded', () => {
  it('beyond MAX_DELAYED_BYTES of waiting bodies a delayed request is answered 503 with Retry-After at once; the others are kept and stored', { timeout: 50_000 }, async () => {
    const lab = await engineWith({ slow: { rate: 1, mode: 'delay', delayMs: LONG_DELAY_MS }, calm: null });
    const size = Buffer.byteLength(bigBatch('P0000'));
    expect(size).toBeGreaterThan(440 * 1024);
    const fits = Math.floor(MAX_DELAYED_BYTES / size);
    const sent = fits + 8;
    const answers = new Map<number, { status: number; retryAfter: string | null; json: { success: boolean; message?: string } }>();
    const requests = Array.from({ length: sent }, (_, i) =>
      fetch(`${lab.collectorUrl}/v1/batch`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from('wk_slow:').toString('base64')}`, 'content-type': 'application/json' },
        body: bigBatch(`P${String(i).padStart(4, '0')}`),
      }).then(async (r) => answers.set(i, { status: r.status, retryAfter: r.headers.get('retry-after'), json: (await r.json()) as { success: boolean } })),
    );
    // The refused ones are answered before the delay ends: while every kept one still waits on it (no
    // 200 yet; a refusal that had waited out the delay would come with them). The poll's deadline is
    // half the delay, generous for a handful of local requests.
    await until(() => answers.size === sent - fits, LONG_DELAY_MS / 2);
    const refused = [...answers.values()];
    expect(refused).toHaveLength(sent - fits);
    expect(refused.every((a) => a.status === 503)).toBe(true);
    for (const a of refused) {
      expect(Number(a.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(a.retryAfter)).toBeLessThanOrEqual(LONG_DELAY_MS / 1000);
      expect(a.json.success).toBe(false);
      expect(a.json.message).toMatch(/delay/);
    }
    // Meanwhile the collector answers other sources at once.
    expect(await lab.post('/v1/track', { userId: 'u', event: 'E' }, { writeKey: 'wk_calm' })).toEqual({ status: 200, json: { success: true } });
    // Stopping the collector ends the waits: the kept requests are handled (stored, answered 200) before it closes.
    await lab.engine.stop();
    await Promise.all(requests);
    expect([...answers.values()].filter((a) => a.status === 200).length).toBe(fits);
    const restarted = await startTestEngine({ dataDir: lab.dataDir });
    try {
      const slow = (await restarted.call('listSources', {})).find((s) => s.name === 'slow')!;
      expect((await restarted.call('listMessages', { sourceId: slow.id, limit: 1 })).total).toBe(fits * 100);
    } finally {
      await restarted.stop({ keepData: true });
    }
  });
});

describe('the test call', () => {
  const FAULTS: Record<string, CollectorFaults> = {
    status: { rate: 1, mode: 'status', status: 503, retryAfterS: 7 },
    delay: { rate: 1, mode: 'delay', delayMs: LONG_DELAY_MS },
    hang: { rate: 1, mode: 'hang' },
    reset: { rate: 1, mode: 'reset' },
  };

  it('is not subject to the source collector faults: answered at once, stored, and the fault sequence does not move', async () => {
    const lab = await engineWith(FAULTS);
    for (const s of await lab.call('listSources', {})) {
      // A sentinel at the delay fault's own LONG_DELAY_MS: only a test call held by `delay` (or `hang`) meets it.
      let sentinel: NodeJS.Timeout | undefined;
      const detail = await Promise.race([
        lab.call('sendTestCall', { id: s.id }),
        new Promise<never>((_, reject) => (sentinel = setTimeout(() => reject(new Error(`${s.name}: the test call is still waiting after the delay fault's ${LONG_DELAY_MS} ms`)), LONG_DELAY_MS))),
      ]).finally(() => clearTimeout(sentinel));
      expect(detail.call.sourceId).toBe(s.id);
      expect(detail.call.status).not.toBe('dropped');
    }
    // No draw was taken: nothing counted, so a client's requests meet the same seeded sequence.
    expect((await lab.call('getCollectorFaultCounts', {})).sources).toEqual({});
  });
});
