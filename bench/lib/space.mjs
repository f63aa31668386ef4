// Issue 27's space figures: a lab with the default retention (200,000 calls) sent `through` calls
// (1,000,000 by default): its file's size at its largest, once retention has caught up, and once the
// pages retention freed were given back (auto_vacuum incremental, in steps); bytes per retained call
// (database file + WAL / calls kept). `node bench/run.mjs space` runs it alone; BENCH_SPACE_THROUGH
// scales it down.
import { mkdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { basicAuth } from './bodies.mjs';
import { startEngine } from './engine.mjs';
import { SEARCH_CALLS, searchItem } from './search.mjs';

const BATCH = 500;
const WRITE_KEY = 'wk_space';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function measureSpace({ root, tmp, through = 1_000_000, keep = SEARCH_CALLS, log }) {
  const dataDir = join(tmp, 'space-data');
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, 'webhook-lab.db');
  const size = () => ['', '-wal'].reduce((n, s) => n + (statSync(file + s, { throwIfNoEntry: false })?.size ?? 0), 0);
  // A reader beside the engine (WAL: it never blocks it) for the free list; each read ends at once.
  const Database = createRequire(join(root, 'package.json'))('better-sqlite3');
  const engine = await startEngine({ root, dataDir, config: { sources: [{ name: 'space', writeKey: WRITE_KEY }], settings: { retentionCalls: keep } } });
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, size())), 200);
  try {
    const t0 = performance.now();
    for (let start = 0; start < through; start += BATCH) {
      const res = await fetch(`${engine.collector}/v1/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: basicAuth(WRITE_KEY) },
        body: JSON.stringify({ batch: Array.from({ length: Math.min(BATCH, through - start) }, (_, k) => searchItem(start + k)) }),
      });
      if (res.status !== 200) throw new Error(`filling: collector answered ${res.status}`);
    }
    log(`  sent ${through.toLocaleString('en-US')} calls in ${((performance.now() - t0) / 1000).toFixed(1)} s (retention keeps ${keep.toLocaleString('en-US')})`);
    const total = async () => (await engine.api('/messages?limit=1')).total;
    const t1 = performance.now();
    while ((await total()) > keep) {
      if (performance.now() - t1 > 120_000) throw new Error('retention did not catch up within 120 s');
      await sleep(250);
    }
    const atRetention = size();
    const db = new Database(file, { readonly: true, fileMustExist: true });
    const pragma = (p) => db.pragma(p, { simple: true });
    const pageSize = pragma('page_size');
    const freeAtRetention = pragma('freelist_count') * pageSize;
    const t2 = performance.now();
    while (pragma('freelist_count') > 0) {
      if (performance.now() - t2 > 120_000) throw new Error('free pages not given back within 120 s');
      await sleep(100);
    }
    const givenBackMs = performance.now() - t2;
    await sleep(500); // the last checkpoint
    const after = size();
    const live = (pragma('page_count') - pragma('freelist_count')) * pageSize;
    const autoVacuum = pragma('auto_vacuum');
    db.close();
    const retained = await total();
    clearInterval(sampler);
    return { through, retained, peak: Math.max(peak, atRetention), atRetention, freeAtRetention, after, live, givenBackMs, perCall: after / retained, autoVacuum };
  } finally {
    clearInterval(sampler);
    await engine.stop();
  }
}
