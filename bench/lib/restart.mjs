// Issue 27's start-up figure: from launching `serve` on a data folder holding 200,000 calls (all
// received within the last 24 h, so each one is inside the duplicate window) to the first answered
// page of 100 calls, as the inspector asks for it. `node bench/run.mjs restart [dataDir]` runs it
// alone; with a dataDir it keeps the filled folder there (filled only if empty), for before/after runs.
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { basicAuth } from './bodies.mjs';
import { startEngine } from './engine.mjs';
import { percentile } from './load.mjs';
import { SEARCH_CALLS, searchItem } from './search.mjs';

const BATCH = 500;
const WRITE_KEY = 'wk_restart';

export async function measureRestart({ root, dataDir, rounds = 5, log }) {
  if (!existsSync(dataDir)) mkdirSync(dataDir, { recursive: true });
  const config = { sources: [{ name: 'restart', writeKey: WRITE_KEY }], settings: { retentionCalls: SEARCH_CALLS } };
  if (!readdirSync(dataDir).some((f) => f.endsWith('.db') || f.endsWith('.sqlite'))) {
    const engine = await startEngine({ root, dataDir, config });
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
    await engine.stop();
  }
  const times = [];
  for (let r = 0; r < rounds; r++) {
    const t = performance.now();
    const engine = await startEngine({ root, dataDir, config });
    try {
      const page = await engine.api('/messages?limit=100');
      if (page.items.length !== 100) throw new Error(`first page held ${page.items.length} calls`);
      times.push(performance.now() - t);
      log(`  start ${r + 1}: first page of 100 (of ${page.total.toLocaleString('en-US')}) after ${times.at(-1).toFixed(0)} ms`);
    } finally {
      await engine.stop();
    }
  }
  return { median: percentile(times, 50), max: Math.max(...times), samples: times.length };
}
