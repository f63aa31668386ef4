// Issue 14's search figure and issue 27's body search: GET /api/messages?q=…(&body=1) over 200,000
// stored calls, through the control API of a child engine, as the inspector asks (first page of 100
// and the total; the second page of a common term by its cursor). Two labs: fresh (200,000 calls
// stored, nothing removed) and in steady state (1,000,000 calls sent, the default retention having
// brought it back to 200,000). Baselines in the same run: the page without a search, and field search.
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { basicAuth } from './bodies.mjs';
import { startEngine } from './engine.mjs';
import { percentile } from './load.mjs';
import { CpuMeter, machineCpuSeconds } from './proc.mjs';

export const SEARCH_CALLS = 200_000;
/** Sent to the steady-state lab, whose retention (the default, 200,000) keeps SEARCH_CALLS of them. */
export const STEADY_THROUGH = 1_000_000;
const BATCH = 500; // under the collector's 500 KB batch limit
const WRITE_KEY = 'wk_search';

/** A realistic track or identify call; ids and properties vary so searches hit some calls, not all. */
export function searchItem(i) {
  const base = { userId: `User_${i % 20_000}`, anonymousId: `anon-${(i * 7919) % 1_000_000}`, messageId: `msg-${i}-${((i * 2654435761) % 4294967296).toString(16)}` };
  return i % 10 === 0
    ? { type: 'identify', ...base, traits: { email: `person${i % 50_000}@example.com`, plan: i % 3 ? 'free' : 'Pro' } }
    : { type: 'track', ...base, event: `Order Completed ${i % 40}`, properties: { orderId: `ord-${i}`, revenue: 42.5, currency: 'USD', products: [{ sku: `sku-${i % 997}`, name: 'Lab Widget' }] }, context: { ip: '203.0.113.7', library: { name: 'analytics-node', version: '3.1.0' } } };
}

/** Searches a user types: hits (many, few, one), misses, short and long terms; then body searches. */
export const FIELD_QUERIES = ['user_4', 'User_12345', 'order completed 7', 'msg-199999', 'anon-42', 'zzz-no-match', 'qq', 'e', 'Order Completed 39 (missing)', 'ID'];
/**
 * Body searches by kind. Rare: a few calls' values; common: in most calls' bodies (a key part, a
 * value every track call has); absent: nowhere. `pro` also asks its second page by the cursor.
 */
export const BODY_QUERIES = { rare: ['person4240@example', 'sku-996'], common: ['pro', 'lab widget'], absent: ['no-such-value-anywhere', 'zzq'] };
/** Terms under three characters: not in the trigram index, read from the bodies (timed once, shown apart). */
export const SHORT_BODY_QUERIES = ['qq', 'e'];

const median = (xs) => percentile(xs, 50);

/** The engine's data file, read-only beside it: how many stored calls the body index has not reached. */
function indexLag(dataDir, root) {
  const Database = createRequire(join(root, 'package.json'))('better-sqlite3');
  const db = new Database(join(dataDir, 'webhook-lab.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT COUNT(*) FROM calls WHERE id > (SELECT indexed_to FROM body_index_state)').pluck().get();
  } finally {
    db.close();
  }
}

async function fill(engine, from, count) {
  for (let start = from; start < from + count; start += BATCH) {
    const res = await fetch(`${engine.collector}/v1/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: basicAuth(WRITE_KEY) },
      body: JSON.stringify({ batch: Array.from({ length: BATCH }, (_, k) => searchItem(start + k)) }),
    });
    if (res.status !== 200) throw new Error(`filling: collector answered ${res.status}`);
  }
}

async function waitUntil(what, fn, timeoutMs) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await fn()) return;
    if (Date.now() > until) throw new Error(`search bench: ${what} not reached in ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** One lab: filled, retention and the index caught up, then `rounds` of every search. */
async function measureLab({ root, tmp, name, through, retentionCalls, rounds, log }) {
  const dataDir = join(tmp, `search-${name}`);
  mkdirSync(dataDir);
  const engine = await startEngine({ root, dataDir, config: { sources: [{ name: 'search', writeKey: WRITE_KEY }], settings: { retentionCalls } } });
  try {
    const t0 = performance.now();
    await fill(engine, 0, through);
    const filled = (performance.now() - t0) / 1000;
    const timed = async (query) => {
      const t = performance.now();
      const page = await engine.api(`/messages?${new URLSearchParams({ limit: '100', ...query })}`);
      return { ms: performance.now() - t, total: page.total, next: page.next, ids: page.items.map((c) => c.id) };
    };
    // While the index is behind (right after the fill): the same search reads the tail's bodies.
    const behind = indexLag(dataDir, root);
    const whileBehind = behind > 0 ? await timed({ q: 'pro', body: '1' }) : null;
    // Retention (every 30 s) brings a lab past its limit back to it; then the index catches up.
    await waitUntil(`retention to ${retentionCalls}`, async () => (await timed({})).total <= SEARCH_CALLS, 120_000);
    const t1 = performance.now();
    await waitUntil('the body index', () => indexLag(dataDir, root) === 0, 300_000);
    const caughtUp = (performance.now() - t1) / 1000;
    log(
      `  ${name}: ${through.toLocaleString('en-US')} calls sent in ${filled.toFixed(1)} s, ${(await timed({})).total.toLocaleString('en-US')} kept;` +
        ` index ${behind.toLocaleString('en-US')} behind after the fill${whileBehind ? ` (body search "pro" then ${whileBehind.ms.toFixed(0)} ms)` : ''}, caught up ${caughtUp.toFixed(1)} s after retention`,
    );
    await timed({}); // warm: the first read of the file
    const meters = [new CpuMeter(process.pid), new CpuMeter(engine.pid)];
    const machine0 = machineCpuSeconds();
    const q0 = performance.now();
    const baseline = [];
    const field = [];
    const body = { rare: [], common: [], absent: [] };
    const per = new Map();
    const note = (key, ms, total) => per.set(key, { ms: [...(per.get(key)?.ms ?? []), ms], total });
    let pagingOk = true;
    for (let r = 0; r < rounds; r++) {
      baseline.push((await timed({})).ms);
      for (const q of FIELD_QUERIES) {
        const { ms, total } = await timed({ q });
        field.push(ms);
        note(q, ms, total);
      }
      for (const [kind, terms] of Object.entries(BODY_QUERIES)) {
        for (const q of terms) {
          const first = await timed({ q, body: '1' });
          body[kind].push(first.ms);
          note(`body:${q}`, first.ms, first.total);
          if (q === 'pro' && first.next !== null) {
            // The next page by the cursor: neither skips nor repeats (ids strictly below, in order).
            const second = await timed({ q, body: '1', before: String(first.next) });
            body[kind].push(second.ms);
            note(`body:${q} page 2`, second.ms, second.total);
            pagingOk &&= second.ids.length === 100 && second.ids[0] < first.ids[first.ids.length - 1] && second.total === first.total;
          }
        }
      }
    }
    const secs = (performance.now() - q0) / 1000;
    const others = Math.max(0, (machineCpuSeconds() - machine0) / secs - meters.reduce((a, m) => a + m.cores(), 0));
    const short = [];
    for (const q of SHORT_BODY_QUERIES) {
      const { ms, total } = await timed({ q, body: '1' });
      short.push({ q, ms, total });
    }
    for (const [q, { ms, total }] of per) log(`    ${JSON.stringify(q).padEnd(36)} ${total.toLocaleString('en-US').padStart(7)} hits, median ${median(ms).toFixed(1)} ms`);
    for (const { q, ms, total } of short) log(`    ${JSON.stringify(`body:${q}`).padEnd(36)} ${total.toLocaleString('en-US').padStart(7)} hits, once ${ms.toFixed(1)} ms (under 3 characters: bodies read)`);
    if (!pagingOk) throw new Error(`search bench (${name}): the second page of "pro" skipped or repeated calls`);
    const stats = (xs) => ({ median: median(xs), p95: percentile(xs, 95), n: xs.length });
    return {
      name,
      baseline: median(baseline),
      field: stats(field),
      body: Object.fromEntries(Object.entries(body).map(([k, xs]) => [k, stats(xs)])),
      bodyAll: stats(Object.values(body).flat()),
      caughtUp,
      others,
    };
  } finally {
    await engine.stop().catch(() => engine.kill());
  }
}

/** Fresh and steady-state labs; `fieldMedian` etc. (the fresh lab's) keep the figures issue 14 reported. */
export async function measureSearch({ root, tmp, rounds = 5, log, steady = true }) {
  const fresh = await measureLab({ root, tmp, name: 'fresh', through: SEARCH_CALLS, retentionCalls: 100_000_000, rounds, log });
  const labs = [fresh];
  if (steady) labs.push(await measureLab({ root, tmp, name: 'steady', through: STEADY_THROUGH, retentionCalls: SEARCH_CALLS, rounds, log }));
  return {
    labs,
    baseline: fresh.baseline,
    fieldMedian: fresh.field.median,
    fieldP95: fresh.field.p95,
    bodyMedian: fresh.bodyAll.median,
    bodyP95: fresh.bodyAll.p95,
    samples: { field: fresh.field.n, body: fresh.bodyAll.n },
    others: Math.max(...labs.map((l) => l.others)),
  };
}
