import { describe, expect, it } from 'vitest';
import { waitFor, webhookSource } from '../helpers/engine';
import { testLab } from '../helpers/test-lab';

// Each scheduled attempt keeps where it fell in the retry schedule's simulated time (issue 40): under
// a time warp the wall clock says little of it, so the inspector shows both.

const lab = testLab();

describe("a scheduled attempt's simulated offset", () => {
  it('is 0 for the first attempt and the schedule\'s delay for the retry, warped (a replay has none: secret-rotation.test.ts)', async () => {
    let fail = true;
    const r = await lab.receiver((_req, res) => void res.writeHead(fail ? 503 : 200).end());
    const t = await lab.start({
      config: {
        sources: [webhookSource('app', 'wk_app', [`${r.url}/hook`])],
        // 60 s between rounds, run 1,000 times faster: the retry comes about 60 ms later on the wall clock.
        settings: { timeScale: 1000, retrySchedule: { preset: 'custom', delaysMs: [60_000], jitter: 0, windowMs: 3_600_000 } },
      },
    });
    await t.post('/v1/track', { userId: 'u1', event: 'Warped' }, { writeKey: 'wk_app' });
    await r.waitForRequests(1);
    fail = false;
    const id = (await t.call('listMessages', { limit: 1 })).items[0]!.id;
    await waitFor(async () => (await t.call('getMessage', { id })).deliveries[0]?.state === 'delivered', 'delivered on the retry');
    const [first, retry] = (await t.call('getMessage', { id })).deliveries[0]!.attempts;
    expect(first!.simOffsetMs).toBe(0);
    // The schedule's 60 s, plus the first attempt's own (unwarped) duration, plus any wait for a lane (warped).
    expect(retry!.simOffsetMs).toBeGreaterThanOrEqual(60_000);
    expect(retry!.simOffsetMs).toBeLessThan(60_000 + 60_000);
  });
});
