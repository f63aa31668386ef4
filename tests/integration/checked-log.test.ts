import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { testLab } from '../helpers/test-lab';
import { waitFor, webhookSource, type TestEngine } from '../helpers/engine';
import { openDbFile } from '../helpers/db-file';
import { mulberry32, randomSeed } from '../../src/main/engine/seeded-random';
import type { Store } from '../../src/main/engine/store/store';
import { trackingPlansOf } from '../../src/main/engine/tracking-plans/service';
import type { TrackingPlanRule } from '../../src/shared/tracking-plan.schema';

// Which requests a plan checked (checked_requests) is written about once a second, not with each
// commit (tracking-plans/checked-log.ts, issue 38); each checked call says so in its own row. What
// waits is counted by every reader, survives a rollback, is not counted once its calls are cleared,
// and a kill -9 (here: a copy of the database file and its WAL as they stand, which is what a kill
// leaves) loses none of the checked counts.

const lab = testLab();
const KEY = 'wk_checked';
const DB = 'webhook-lab.db';

const RULE: TrackingPlanRule = {
  type: 'TRACK',
  key: 'Order Completed',
  version: 1,
  jsonSchema: { type: 'object', properties: { properties: { type: 'object', properties: { total: { type: 'number' } }, required: ['total'] } }, required: ['properties'] },
};
const RULE_ID = { type: 'TRACK', key: 'Order Completed', version: 1 };

async function start(dataDir?: string): Promise<{ t: TestEngine; store: Store }> {
  let store!: Store;
  const receiver = await lab.receiver();
  const t = await lab.start({
    dataDir,
    onStore: (s) => (store = s),
    config: {
      sources: [{ ...webhookSource('checked', KEY, [`${receiver.url}/hook`]), trackingPlan: { name: 'plan' } }],
      trackingPlans: [{ name: 'plan', rules: [RULE] }],
    },
  });
  return { t, store };
}

/** A batch of `n` calls: clean orders, orders breaking the rule, and unplanned events (seeded). */
function batch(rand: () => number, n: number, tag: string) {
  const calls = Array.from({ length: n }, (_, i) => {
    const r = rand();
    if (r < 0.5) return { type: 'track', userId: 'u', event: 'Order Completed', messageId: `${tag}-${i}`, properties: { total: i } };
    if (r < 0.8) return { type: 'track', userId: 'u', event: 'Order Completed', messageId: `${tag}-${i}`, properties: { total: 'x' } };
    return { type: 'track', userId: 'u', event: 'Other', messageId: `${tag}-${i}` };
  });
  return { calls, orders: calls.filter((c) => c.event === 'Order Completed').length };
}

function sql(dataDir: string, q: string): number {
  const db = openDbFile(dataDir);
  try {
    return db.prepare(q).pluck().get() as number;
  } finally {
    db.close();
  }
}

async function figures(t: TestEngine) {
  const plan = (await t.call('listTrackingPlans', {}))[0]!;
  const stats = await t.call('getTrackingPlanStats', { id: plan.id });
  const matched = stats.find((s) => s.key === RULE_ID.key)?.matched ?? 0;
  const { checked, withViolations } = await t.call('getViolations', {});
  return { checked, withViolations, matched };
}

describe('checked requests written once a second', () => {
  it('what waits is counted and kept; a copy of the file as a kill -9 leaves it rebuilds the counts at the start', async () => {
    const seed = randomSeed();
    console.log(`checked-log seed ${seed}`);
    const rand = mulberry32(seed);
    const { t, store } = await start();
    const log = trackingPlansOf(store).checkedLog;
    log.configure({ flushMs: 3_600_000, flushCalls: 1_000_000 });
    let calls = 0;
    let orders = 0;
    let firstOrders = 0;
    for (let i = 0; i < 6; i++) {
      const b = batch(rand, 1 + Math.floor(rand() * 20), `a${i}`);
      expect((await t.post('/v1/batch', { batch: b.calls }, { writeKey: KEY })).status).toBe(200);
      calls += b.calls.length;
      orders += b.orders;
      if (i === 0) firstOrders = b.orders;
    }
    // One row written, the one that opened the second; five wait, and every reader counts them.
    expect(sql(t.dataDir, 'SELECT COUNT(*) FROM checked_requests')).toBe(1);
    expect(sql(t.dataDir, 'SELECT COUNT(*) FROM checked_requests WHERE open = 1')).toBe(1);
    expect(log.waitingRequests).toBe(5);
    const live = await figures(t);
    expect(live).toMatchObject({ checked: calls, matched: orders });
    // A clean call that waits says it was checked, in the list and in its detail.
    const clean = (await t.call('listMessages', { violations: false, limit: 500 })).items;
    expect(clean.length).toBe(live.checked - live.withViolations);
    expect((await t.call('getMessage', { id: clean[0]!.id })).planCheck).toMatchObject({ planName: 'plan', blocked: null });

    // The file as a kill -9 would leave it now.
    const image = lab.dataDir();
    for (const f of [DB, `${DB}-wal`]) if (existsSync(join(t.dataDir, f))) copyFileSync(join(t.dataDir, f), join(image, f));

    // Written together: the same figures, the rules' counts kept.
    await log.flush();
    expect(log.waitingRequests).toBe(0);
    expect(sql(t.dataDir, 'SELECT COUNT(*) FROM checked_requests')).toBe(6);
    expect(sql(t.dataDir, 'SELECT COUNT(*) FROM checked_requests WHERE open IS NOT NULL')).toBe(0);
    expect(await figures(t)).toEqual(live);

    // Started on the copy: the five rows rebuilt from the calls, counts whole; which rule each call
    // matched was not in its row, so "matched" has the first request's only.
    const again = await start(image);
    expect(sql(image, 'SELECT COUNT(*) FROM checked_requests')).toBe(6);
    expect(sql(image, 'SELECT COUNT(*) FROM checked_requests WHERE open IS NOT NULL')).toBe(0);
    expect(sql(image, 'SELECT SUM(checked) FROM checked_requests')).toBe(calls);
    expect(await figures(again.t)).toEqual({ checked: calls, withViolations: live.withViolations, matched: firstOrders });
    expect((await again.t.call('getMessage', { id: clean[0]!.id })).planCheck).toMatchObject({ planName: 'plan', blocked: null });
  });

  it('past flushCalls checked calls, what waits is written without waiting for the second', async () => {
    const rand = mulberry32(7);
    const { t, store } = await start();
    trackingPlansOf(store).checkedLog.configure({ flushMs: 3_600_000, flushCalls: 30 });
    let calls = 0;
    for (let i = 0; i < 8; i++) {
      const b = batch(rand, 10, `b${i}`);
      expect((await t.post('/v1/batch', { batch: b.calls }, { writeKey: KEY })).status).toBe(200);
      calls += b.calls.length;
    }
    // A request opens a row, the three after it reach 30 waiting calls and are written with it closing:
    // twice over the eight requests, with no second waited for.
    await waitFor(() => sql(t.dataDir, 'SELECT COUNT(*) FROM checked_requests WHERE open IS NULL') === 8 || undefined, 'the rows written');
    expect((await figures(t)).checked).toBe(calls);
  });

  it('clearing the calls while rows wait: they are not counted, nor written, and the next request opens a row again', async () => {
    const rand = mulberry32(11);
    const { t, store } = await start();
    const log = trackingPlansOf(store).checkedLog;
    log.configure({ flushMs: 3_600_000, flushCalls: 1_000_000 });
    for (let i = 0; i < 3; i++) expect((await t.post('/v1/batch', { batch: batch(rand, 5, `c${i}`).calls }, { writeKey: KEY })).status).toBe(200);
    expect(log.waitingRequests).toBe(2);
    await t.call('clearCalls', {});
    expect((await figures(t)).checked).toBe(0);
    expect(log.waitingRequests).toBe(0);
    let calls = 0;
    for (let i = 0; i < 2; i++) {
      const b = batch(rand, 4, `d${i}`);
      expect((await t.post('/v1/batch', { batch: b.calls }, { writeKey: KEY })).status).toBe(200);
      calls += b.calls.length;
    }
    expect(sql(t.dataDir, 'SELECT COUNT(*) FROM checked_requests WHERE open = 1')).toBe(1);
    await log.flush();
    expect(sql(t.dataDir, 'SELECT COUNT(*) FROM checked_requests')).toBe(2);
    expect(sql(t.dataDir, 'SELECT SUM(checked) FROM checked_requests')).toBe(calls);
    expect((await figures(t)).checked).toBe(calls);
  });

  it('a write that rolls back (a full disk) leaves what waits as the table and the calls have it', async () => {
    const rand = mulberry32(13);
    const { t, store } = await start();
    const log = trackingPlansOf(store).checkedLog;
    log.configure({ flushMs: 3_600_000, flushCalls: 1_000_000 });
    let calls = 0;
    let orders = 0;
    const send = async (tag: string) => {
      const b = batch(rand, 6, tag);
      const r = await t.post('/v1/batch', { batch: b.calls }, { writeKey: KEY });
      if (r.status === 200) {
        calls += b.calls.length;
        orders += b.orders;
      }
      return r.status;
    };
    for (let i = 0; i < 3; i++) expect(await send(`e${i}`)).toBe(200);
    store.capSize(0);
    // Big enough to need new pages under the cap.
    const big = { type: 'track', userId: 'u', event: 'Order Completed', messageId: 'big', properties: { total: 1, pad: 'x'.repeat(200_000) } };
    expect((await t.post('/v1/batch', { batch: [big] }, { writeKey: KEY })).status).toBe(503);
    store.capSize(null);
    await waitFor(async () => (await t.call('health', {})).storage.ok, 'storage ok again');
    expect(await send('f')).toBe(200);
    expect(await figures(t)).toMatchObject({ checked: calls, matched: orders });
    await log.flush();
    expect(sql(t.dataDir, 'SELECT SUM(checked) FROM checked_requests')).toBe(calls);
    expect(sql(t.dataDir, 'SELECT COUNT(*) FROM calls WHERE check_plan IS NOT NULL')).toBe(calls);
    expect(await figures(t)).toMatchObject({ checked: calls, matched: orders });
  });

  it('migration 29: a lab from before it keeps its clean calls checked, and its new calls carry their plan', async () => {
    const dataDir = lab.dataDir();
    const rand = mulberry32(17);
    const first = await start(dataDir);
    const old = batch(rand, 8, 'old');
    expect((await first.t.post('/v1/batch', { batch: old.calls }, { writeKey: KEY })).status).toBe(200);
    const before = await figures(first.t);
    const cleanBefore = (await first.t.call('listMessages', { violations: false, limit: 100 })).items.map((c) => c.id);
    expect(cleanBefore.length).toBeGreaterThan(0);
    await first.t.stop({ keepData: true });
    // As schema 28 left it: no check_plan on the calls, no plan keys, no open row.
    const db = openDbFile(dataDir, { write: true });
    db.exec(
      'ALTER TABLE calls DROP COLUMN check_plan; DROP TABLE plan_keys; ALTER TABLE checked_requests DROP COLUMN first_call; ALTER TABLE checked_requests DROP COLUMN open',
    );
    db.pragma('user_version = 28');
    db.close();

    const { t } = await start(dataDir);
    expect(await figures(t)).toEqual(before);
    expect((await t.call('listMessages', { violations: false, limit: 100 })).items.map((c) => c.id)).toEqual(cleanBefore);
    expect((await t.call('getMessage', { id: cleanBefore[0]! })).planCheck).toMatchObject({ planName: 'plan' });
    const more = batch(rand, 5, 'new');
    expect((await t.post('/v1/batch', { batch: more.calls }, { writeKey: KEY })).status).toBe(200);
    expect((await figures(t)).checked).toBe(before.checked + more.calls.length);
    expect(sql(dataDir, 'SELECT COUNT(*) FROM calls WHERE check_plan IS NOT NULL')).toBe(more.calls.length);
  });
});
