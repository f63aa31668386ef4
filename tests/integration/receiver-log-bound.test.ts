import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Pool } from 'undici';
import { KEEP_REQUESTS, TRIM_EVERY } from '../../src/main/engine/simulation/receivers-service';
import { waitFor } from '../helpers/engine';
import { testLab } from '../helpers/test-lab';

// Finding 8 of issue 13: a mock receiver's request log keeps the newest 1,000 requests under any
// load. At saturation it grew to 81,501 rows, and the clean-up that came later stalled the engine for
// 609 ms. Here a receiver is saturated while the table is polled: the count must never pass the bound
// (plus the inserts between two trims), and the log must end with exactly the newest 1,000.
const BOUND = KEEP_REQUESTS + TRIM_EVERY;
const lab = testLab();

describe('receiver request log at saturation', () => {
  it(`never holds more than ${KEEP_REQUESTS} + ${TRIM_EVERY} rows, ends with the newest ${KEEP_REQUESTS}, and never stalls the loop for long`, { timeout: 120_000 }, async () => {
    const t = await lab.start();
    const r = await t.call('createReceiver', { name: 'flood', path: '/flood' });
    const db = new Database(join(t.dataDir, 'webhook-lab.db'), { readonly: true, fileMustExist: true });
    const count = db.prepare('SELECT COUNT(*) AS n FROM receiver_requests WHERE receiver_id = ?');
    const rows = () => (count.get(r.id) as { n: number }).n;

    const TOTAL = 8_000;
    const CONCURRENCY = 64;
    const url = new URL(r.url);
    const pool = new Pool(url.origin, { connections: CONCURRENCY, pipelining: 1 });
    let maxRows = 0;
    let polls = 0;
    const poller = setInterval(() => {
      maxRows = Math.max(maxRows, rows());
      polls++;
    }, 5);
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    const started = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < TOTAL) {
          const i = next++;
          const res = await pool.request({ method: 'POST', path: url.pathname, body: `{"i":${i}}`, headers: { 'content-type': 'application/json' } });
          await res.body.dump();
        }
      }),
    );
    const sendMs = Date.now() - started;
    // Every request recorded (the count the API reports), and its row written.
    await waitFor(async () => (await t.call('listReceivers', {}))[0].requestCount === TOTAL, 'every request counted');
    await waitFor(() => {
      maxRows = Math.max(maxRows, rows());
      return rows() === KEEP_REQUESTS;
    }, `${KEEP_REQUESTS} rows`).catch((err: Error) => {
      throw new Error(`${err.message}: ${rows()} rows`);
    });
    clearInterval(poller);
    delay.disable();
    await pool.close();

    const maxStallMs = delay.max / 1e6;
    console.log(
      `receiver log: ${TOTAL} requests in ${sendMs} ms (${Math.round(TOTAL / (sendMs / 1000))}/s), ${polls} polls, at most ${maxRows} rows; ` +
        `event-loop delay max ${maxStallMs.toFixed(1)} ms, p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms`,
    );
    expect(polls).toBeGreaterThan(10);
    expect(maxRows).toBeLessThanOrEqual(BOUND);
    // The newest are kept: the last request sent is in the log, the first is not.
    const list = await t.call('listReceiverRequests', { id: r.id, limit: 1000 });
    expect(list).toHaveLength(KEEP_REQUESTS);
    const seen = new Set(list.map((q) => (JSON.parse(q.body) as { i: number }).i));
    expect(seen.has(0)).toBe(false);
    expect(seen.has(TOTAL - 1)).toBe(true);
    // A sanity bound, far above what trimming costs (reported above), not a timing assertion.
    expect(maxStallMs).toBeLessThan(1_000);
    db.close();
  });

  it('a log left far over the bound (80,000 rows) is trimmed at start in small steps while the receiver answers', { timeout: 120_000 }, async () => {
    const dataDir = lab.dataDir();
    const first = await lab.start({ dataDir });
    const r = await first.call('createReceiver', { name: 'legacy', path: '/legacy' });
    await first.stop({ keepData: true });
    const LEFT = 80_000;
    const rw = new Database(join(dataDir, 'webhook-lab.db'));
    const insert = rw.prepare('INSERT INTO receiver_requests (id, receiver_id, at, record) VALUES (?, ?, ?, ?)');
    const record = JSON.stringify({ body: 'x'.repeat(1000) });
    rw.transaction(() => {
      for (let i = 0; i < LEFT; i++) insert.run(`old-${i}`, r.id, 1_700_000_000_000 + i, record);
    })();
    rw.close();

    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    const started = Date.now();
    const t = await lab.start({ dataDir });
    const db = new Database(join(dataDir, 'webhook-lab.db'), { readonly: true, fileMustExist: true });
    const rows = () => (db.prepare('SELECT COUNT(*) AS n FROM receiver_requests WHERE receiver_id = ?').get(r.id) as { n: number }).n;
    // The receiver keeps answering during the clean-up (its port is new at each test start).
    const url = (await t.call('listReceivers', {}))[0].url;
    let answered = 0;
    await waitFor(async () => {
      const res = await fetch(url, { method: 'POST', body: '{}' });
      if (res.status === 200) answered++;
      return rows() === KEEP_REQUESTS;
    }, `${KEEP_REQUESTS} rows`, 60_000).catch((err: Error) => {
      throw new Error(`${err.message}: ${rows()} rows`);
    });
    delay.disable();
    const maxStallMs = delay.max / 1e6;
    console.log(`receiver log clean-up: ${LEFT} rows to ${KEEP_REQUESTS} in ${Date.now() - started} ms (start included), ${answered} requests answered meanwhile; event-loop delay max ${maxStallMs.toFixed(1)} ms`);
    expect(answered).toBeGreaterThan(0);
    // The newest are kept: the ones received now, then the newest of the old rows.
    const list = await t.call('listReceiverRequests', { id: r.id, limit: 1000 });
    expect(list).toHaveLength(KEEP_REQUESTS);
    expect(maxStallMs).toBeLessThan(1_000);
    db.close();
  });
});
