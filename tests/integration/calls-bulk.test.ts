import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { waitFor, webhookSource, type TestEngine } from '../helpers/engine';
import { testLab } from '../helpers/test-lab';
import type { CallSummary } from '../../src/shared/types';
import { CLEAR_CHUNK } from '../../src/main/engine/store/clear-calls';

// Acting on what the inspector shows (issue 14): retryMatching sends the failed and expired calls
// matching the filters again; clearCalls deletes every call in small steps.

const lab = testLab();

/** Schedules as data: a first retry 30 min away (retrying calls cannot move under the test), or a window already over (expired at once). */
const retrying = { preset: 'custom', delaysMs: [1_800_000], jitter: 0, windowMs: 4 * 3_600_000 };
const expiring = { preset: 'custom', delaysMs: [1_800_000], jitter: 0, windowMs: 0 };

/** 400 on /bad (failed), 500 on /flaky (retried or expired), 200 elsewhere; `healthy` answers 200 everywhere. */
async function receiver() {
  const state = { healthy: false };
  const r = await lab.receiver((req, res) => {
    if (!state.healthy && req.url === '/bad') return void res.writeHead(400).end('no');
    if (!state.healthy && req.url === '/flaky') return void res.writeHead(500).end('down');
    res.writeHead(200).end('ok');
  });
  return Object.assign(r, { state, count: (path: string) => r.requests.filter((q) => q.url === path).length });
}

async function settled(t: TestEngine, n: number): Promise<CallSummary[]> {
  return waitFor(async () => {
    const page = await t.call('listMessages', { limit: 100 });
    const done = page.items.filter((c) => c.status === 'dropped' || ['delivered', 'failed', 'expired', 'retrying'].includes(c.deliveryState ?? ''));
    return page.items.length === n && done.length === n ? page.items : null;
  }, `${n} calls settled`);
}

const byLabel = (calls: CallSummary[], label: string) => calls.filter((c) => c.label === label);

describe('retryMatching', () => {
  it('sends only the failed and expired calls that match the filters, counts them, skips dropped and retrying ones', async () => {
    const r = await receiver();
    const t = await lab.start({
      config: {
        sources: [
          webhookSource('bad', 'wk_bad', [`${r.url}/bad`]),
          webhookSource('flaky', 'wk_flaky', [`${r.url}/flaky`]),
          webhookSource('ok', 'wk_ok', [`${r.url}/ok`]),
        ],
        settings: { retrySchedule: expiring },
      },
    });
    const sources = await t.call('listSources', {});
    const id = (name: string) => sources.find((s) => s.name === name)!.id;
    const track = (key: string, userId: string, event: string) => t.post('/v1/track', { userId, event }, { writeKey: key });
    await track('wk_bad', 'alice', 'Failed A'); // 400: failed
    await track('wk_bad', 'bob', 'Failed B');
    await track('wk_flaky', 'alice', 'Expired A'); // 500 with the window over: expired
    await track('wk_flaky', 'carol', 'Expired C');
    await track('wk_ok', 'alice', 'Delivered');
    await t.post('/v1/track', { event: 'No user' }, { writeKey: 'wk_bad' }); // dropped
    await settled(t, 6);
    await t.call('updateSettings', { retrySchedule: retrying });
    await track('wk_flaky', 'alice', 'Retrying'); // 500, first retry in 30 min
    const calls = await settled(t, 7);
    expect(byLabel(calls, 'Failed A')[0].deliveryState).toBe('failed');
    expect(byLabel(calls, 'Expired A')[0].deliveryState).toBe('expired');
    expect(byLabel(calls, 'Retrying')[0].deliveryState).toBe('retrying');
    expect(calls.filter((c) => c.status === 'dropped')).toHaveLength(1);

    // Counts for the confirm: every filter field of listMessages applies.
    expect(await t.call('retryMatching', { dryRun: true })).toEqual({ matched: 4, retried: 0 });
    expect(await t.call('retryMatching', { dryRun: true, sourceId: id('bad') })).toEqual({ matched: 2, retried: 0 });
    expect(await t.call('retryMatching', { dryRun: true, status: 'expired' })).toEqual({ matched: 2, retried: 0 });
    expect(await t.call('retryMatching', { dryRun: true, status: 'retrying' })).toEqual({ matched: 0, retried: 0 });
    expect(await t.call('retryMatching', { dryRun: true, status: 'dropped' })).toEqual({ matched: 0, retried: 0 });
    expect(await t.call('retryMatching', { dryRun: true, userId: 'alice' })).toEqual({ matched: 2, retried: 0 });
    expect(await t.call('retryMatching', { dryRun: true, q: 'carol' })).toEqual({ matched: 1, retried: 0 });
    expect(r.count('/bad') + r.count('/flaky')).toBe(5); // a dry run sends nothing

    // The receivers recover; retry what failed for one user.
    r.state.healthy = true;
    expect(await t.call('retryMatching', { userId: 'alice' })).toEqual({ matched: 2, retried: 2 });
    await waitFor(async () => {
      const page = await t.call('listMessages', { userId: 'alice', limit: 10 });
      return byLabel(page.items, 'Failed A')[0].deliveryState === 'delivered' && byLabel(page.items, 'Expired A')[0].deliveryState === 'delivered';
    }, "alice's failed and expired calls delivered");
    const failedA = await t.call('getMessage', { id: byLabel(calls, 'Failed A')[0].id });
    expect(failedA.deliveries[0].attempts.map((a) => [a.trigger, a.responseStatus])).toEqual([
      ['scheduled', 400],
      ['manual', 200],
    ]);
    // Nothing else was sent: Failed B and Expired C (other users), the retrying call, the delivered one, the dropped one.
    expect(r.count('/bad')).toBe(3);
    expect(r.count('/flaky')).toBe(4);
    expect(r.count('/ok')).toBe(1);
    const after = await t.call('listMessages', { limit: 100 });
    expect(byLabel(after.items, 'Failed B')[0]).toMatchObject({ deliveryState: 'failed', attemptCount: 1 });
    expect(byLabel(after.items, 'Retrying')[0]).toMatchObject({ deliveryState: 'retrying', attemptCount: 1 });

    // The rest, with no filter: only the two left failed or expired.
    expect(await t.call('retryMatching', {})).toEqual({ matched: 2, retried: 2 });
    await waitFor(async () => (await t.call('retryMatching', { dryRun: true })).matched === 0, 'nothing failed or expired left');
    expect(r.count('/bad')).toBe(4);
    expect(r.count('/flaky')).toBe(5);
    expect(byLabel((await t.call('listMessages', { limit: 100 })).items, 'Retrying')[0]).toMatchObject({ deliveryState: 'retrying', attemptCount: 1 });
  });
});

describe('clearCalls', () => {
  it('deletes every call, request, delivery and attempt in chunks, cancels the unfinished first, and the engine keeps working', async () => {
    const r = await receiver();
    const t = await lab.start({
      config: {
        sources: [
          webhookSource('flaky', 'wk_flaky', [`${r.url}/flaky`]),
          webhookSource('ok', 'wk_ok', [`${r.url}/ok`]),
          { name: 'quiet', writeKey: 'wk_quiet', webhooks: { enabled: false, urls: [] } },
        ],
        settings: { retrySchedule: retrying },
      },
    });
    await t.post('/v1/track', { userId: 'u', event: 'Retrying' }, { writeKey: 'wk_flaky' });
    await t.post('/v1/track', { userId: 'u', event: 'Delivered' }, { writeKey: 'wk_ok' });
    // More calls than one chunk, not forwarded (no delivery to wait for), in batches of 500.
    const extra = CLEAR_CHUNK * 2 + 300;
    for (let i = 0; i < extra; i += 500) {
      const batch = Array.from({ length: Math.min(500, extra - i) }, (_, k) => ({ type: 'track', userId: `q${i + k}`, event: 'Quiet' }));
      expect((await t.post('/v1/batch', { batch }, { writeKey: 'wk_quiet' })).status).toBe(200);
    }
    await waitFor(async () => {
      const total = async (status?: 'retrying' | 'delivered') => (await t.call('listMessages', { status, limit: 1 })).total;
      return (await total()) === extra + 2 && (await total('retrying')) === 1 && (await total('delivered')) === 1;
    }, 'every call stored and the two deliveries settled');

    const res = await t.call('clearCalls', {});
    expect(res).toEqual({ removed: extra + 2, canceled: 1 });
    // Lists showing them read again (events go out in batches).
    await waitFor(() => t.events.some((e) => e.type === 'calls.removed' && e.count === extra + 2), 'calls.removed');

    const ro = new Database(join(t.dataDir, 'webhook-lab.db'), { readonly: true, fileMustExist: true });
    try {
      const count = (table: string) => (ro.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
      expect({ calls: count('calls'), requests: count('requests'), deliveries: count('deliveries'), attempts: count('attempts') }).toEqual({
        calls: 0, requests: 0, deliveries: 0, attempts: 0,
      });
    } finally {
      ro.close();
    }
    expect((await t.call('listMessages', {})).total).toBe(0);
    expect((await t.call('health', {})).pendingDeliveries).toBe(0);

    // The engine goes on: a new call is stored, delivered and listed.
    expect((await t.post('/v1/track', { userId: 'u', event: 'After clear' }, { writeKey: 'wk_ok' })).status).toBe(200);
    const [after] = await waitFor(async () => {
      const page = await t.call('listMessages', {});
      return page.total === 1 && page.items[0].deliveryState === 'delivered' ? page.items : null;
    }, 'the new call delivered');
    expect(after.label).toBe('After clear');
    expect(r.count('/ok')).toBe(2);
    // The canceled retry is never sent again.
    expect(r.count('/flaky')).toBe(1);
  });
});
