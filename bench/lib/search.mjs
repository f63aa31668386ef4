// Issue 14's search figure: GET /api/messages?q=… over 200,000 stored calls, through the control API
// of a child engine, as the inspector asks (first page of 100 and the total). Baseline: the same
// request without a search, in the same run.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { basicAuth } from './bodies.mjs';
import { startEngine } from './engine.mjs';
import { percentile } from './load.mjs';
import { CpuMeter, machineCpuSeconds } from './proc.mjs';

export const SEARCH_CALLS = 200_000;
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
export const BODY_QUERIES = ['person4240@example', 'sku-996', 'no-such-value-anywhere', 'pro'];

const median = (xs) => percentile(xs, 50);

export async function measureSearch({ root, tmp, rounds = 5, log }) {
  const dataDir = join(tmp, 'search-data');
  mkdirSync(dataDir);
  const engine = await startEngine({ root, dataDir, config: { sources: [{ name: 'search', writeKey: WRITE_KEY }], settings: { retentionCalls: 100_000_000 } } });
  try {
    const t0 = performance.now();
    for (let start = 0; start < SEARCH_CALLS; start += BATCH) {
      const res = await fetch(`${engine.collector}/v1/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: basicAuth(WRITE_KEY) },
        body: JSON.stringify({ batch: Array.from({ length: BATCH }, (_, k) => searchItem(start + k)) }),
      });
      if (res.status !== 200) throw new Error(`filling: collector answered ${res.status}`);
    }
    log(`  stored ${SEARCH_CALLS.toLocaleString('en-US')} calls in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const timed = async (query) => {
      const t = performance.now();
      const page = await engine.api(`/messages?${new URLSearchParams({ limit: '100', ...query })}`);
      return { ms: performance.now() - t, total: page.total };
    };
    await timed({}); // warm: the first read of the file
    // What else used the CPU while searching (this process and the engine are ours): see run.mjs.
    const meters = [new CpuMeter(process.pid), new CpuMeter(engine.pid)];
    const machine0 = machineCpuSeconds();
    const q0 = performance.now();
    const baseline = [];
    const field = [];
    const body = [];
    const per = new Map();
    for (let r = 0; r < rounds; r++) {
      baseline.push((await timed({})).ms);
      for (const q of FIELD_QUERIES) {
        const { ms, total } = await timed({ q });
        field.push(ms);
        per.set(q, { ms: [...(per.get(q)?.ms ?? []), ms], total });
      }
      for (const q of BODY_QUERIES) {
        const { ms, total } = await timed({ q, body: '1' });
        body.push(ms);
        per.set(`body:${q}`, { ms: [...(per.get(`body:${q}`)?.ms ?? []), ms], total });
      }
    }
    const secs = (performance.now() - q0) / 1000;
    const others = Math.max(0, (machineCpuSeconds() - machine0) / secs - meters.reduce((a, m) => a + m.cores(), 0));
    for (const [q, { ms, total }] of per) log(`    ${JSON.stringify(q).padEnd(34)} ${total.toLocaleString('en-US').padStart(7)} hits, median ${median(ms).toFixed(1)} ms`);
    return {
      baseline: median(baseline),
      fieldMedian: median(field),
      fieldP95: percentile(field, 95),
      bodyMedian: median(body),
      bodyP95: percentile(body, 95),
      samples: { field: field.length, body: body.length },
      others,
    };
  } finally {
    await engine.stop().catch(() => engine.kill());
  }
}
