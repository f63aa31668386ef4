// Issue 38 item 4: the engine's memory and event loop while it streams a large JSON Lines export
// (GET /api/export/file). A fresh engine (child process, bench/lib/engine-probe.cjs preloaded) holds
// EXPORT_CALLS calls, half of them delivered to a local receiver (so lines carry deliveries and
// attempts); the bench reads the export as fast as it comes and keeps nothing, while it asks
// GET /api/health every 50 ms. Figures: the engine's peak heap and RSS during the export against the
// same idle engine just before (after a full GC), and its event loop's longest delay during the
// export against the same idle window. `node bench/run.mjs export [dataDir]` runs it alone; with a
// dataDir it keeps the filled folder there (filled only if empty), for before/after runs of two
// builds (BENCH_ENGINE_ROOT: a checkout whose out/ holds the other build).
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { basicAuth, trackItem } from './bodies.mjs';
import { startEngine } from './engine.mjs';
import { currentRss } from './proc.mjs';
import { startReceiver } from './receiver.mjs';

export const EXPORT_CALLS = 60_000;
const BATCH = 500;
const SECRET = 'bench-export-secret';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function measureExport({ root, engineRoot = root, dataDir, log, calls = EXPORT_CALLS, nodeFlags = [] }) {
  if (!existsSync(dataDir)) mkdirSync(dataDir, { recursive: true });
  const fresh = !readdirSync(dataDir).some((f) => f.endsWith('.db'));
  const receiver = await startReceiver({ secret: SECRET });
  const probeFile = join(dataDir, '..', 'export-probe.json');
  const engine = await startEngine({
    root: engineRoot,
    dataDir,
    nodeFlags: ['--expose-gc', '--require', join(root, 'bench/lib/engine-probe.cjs'), ...nodeFlags],
    env: { BENCH_PROBE_FILE: probeFile },
    config: {
      sources: [
        { name: 'export-hooks', writeKey: 'wk_export_hooks', webhooks: { enabled: true, sharedSecret: SECRET, urls: [{ url: receiver.url, headers: {} }] } },
        { name: 'export-quiet', writeKey: 'wk_export_quiet' },
      ],
      settings: { retentionCalls: 100_000_000 },
    },
  });
  let seq = 0;
  /** Ends the probe's window (and starts the next): its figures. */
  async function probe() {
    process.kill(engine.pid, 'SIGUSR2');
    for (const end = Date.now() + 30_000; Date.now() < end; await sleep(20)) {
      if (!existsSync(probeFile)) continue;
      const r = JSON.parse(readFileSync(probeFile, 'utf8'));
      // A file left by an engine before this one has another pid.
      if (r.pid === engine.pid && r.seq > seq) {
        seq = r.seq;
        return r;
      }
    }
    throw new Error('the engine probe did not answer (is bench/lib/engine-probe.cjs loaded?)');
  }
  try {
    if (fresh) {
      const t0 = performance.now();
      for (let start = 0; start < calls; start += BATCH) {
        const key = (start / BATCH) % 2 === 0 ? 'wk_export_hooks' : 'wk_export_quiet';
        const items = Array.from({ length: Math.min(BATCH, calls - start) }, (_, k) => trackItem(`x-${start + k}`));
        const res = await fetch(`${engine.collector}/v1/batch`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: basicAuth(key) },
          body: `{"batch":[${items.join(',')}]}`,
        });
        if (res.status !== 200) throw new Error(`filling: collector answered ${res.status}`);
      }
      log(`  stored ${calls.toLocaleString('en-US')} calls in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    }
    // Every delivery finished, so the export reads a settled history.
    for (const end = Date.now() + 300_000; ; await sleep(500)) {
      const open = await Promise.all(['pending', 'in_flight', 'retrying'].map((s) => engine.api(`/messages?status=${s}&limit=1`)));
      if (open.every((p) => p.total === 0)) break;
      if (Date.now() > end) throw new Error('deliveries still unfinished after 5 minutes');
    }
    const stored = (await engine.health()).calls;

    // The idle engine: a window of the same kind, without the export.
    await probe();
    await sleep(2_000);
    const idle = await probe();

    // The export, read and dropped; health asked meanwhile.
    let exporting = true;
    let sampledRss = 0;
    const rssTimer = setInterval(() => {
      try {
        sampledRss = Math.max(sampledRss, currentRss(engine.pid));
      } catch {
        // exited
      }
    }, 20);
    const polls = [];
    let healthDelayMaxMs = 0;
    const poller = (async () => {
      while (exporting) {
        const t = performance.now();
        const h = await engine.health();
        polls.push(performance.now() - t);
        healthDelayMaxMs = Math.max(healthDelayMaxMs, h.eventLoop?.delayMaxMs ?? 0);
        await sleep(50);
      }
    })();
    const t0 = performance.now();
    const got = await readExport(`${engine.ui}/api/export/file?format=jsonl&limit=200000`, engine.token).finally(() => (exporting = false));
    const seconds = (performance.now() - t0) / 1000;
    await poller;
    clearInterval(rssTimer);
    const during = await probe();
    if (got.lines !== stored) throw new Error(`the export had ${got.lines} lines for ${stored} calls`);
    const r = {
      calls: stored,
      bytes: got.bytes,
      seconds,
      idleHeap: idle.peakHeap,
      peakHeap: during.peakHeap,
      idleRss: idle.peakRss,
      peakRss: Math.max(during.peakRss, sampledRss),
      idleDelayMs: idle.maxDelayMs,
      maxDelayMs: during.maxDelayMs,
      idleP99Ms: idle.p99DelayMs,
      p99DelayMs: during.p99DelayMs,
      healthPolls: polls.length,
      healthSlowestMs: Math.max(...polls),
      healthDelayMaxMs,
    };
    const mb = (b) => `${(b / 1048576).toFixed(1)} MB`;
    log(
      `  export of ${r.calls.toLocaleString('en-US')} calls: ${mb(r.bytes)} of JSON Lines in ${r.seconds.toFixed(1)} s; engine heap ${mb(r.idleHeap)} idle → peak ${mb(r.peakHeap)}, ` +
        `RSS ${mb(r.idleRss)} → ${mb(r.peakRss)}; loop delay p99 ${r.p99DelayMs} ms, longest ${r.maxDelayMs} ms (idle ${r.idleP99Ms}, ${r.idleDelayMs} ms); ` +
        `${r.healthPolls} health answers meanwhile, slowest ${r.healthSlowestMs.toFixed(0)} ms, its eventLoop.delayMaxMs up to ${r.healthDelayMaxMs} ms (a 30–60 s window: filling included)`,
    );
    return r;
  } finally {
    await engine.stop();
    await receiver.close();
  }
}

/** Reads a body to its end as it comes, keeping only its size and line count. */
function readExport(url, token) {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { authorization: `Bearer ${token}` } }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return reject(new Error(`GET ${url}: ${res.statusCode}`));
      }
      let bytes = 0;
      let lines = 0;
      res.on('data', (chunk) => {
        bytes += chunk.length;
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
      });
      res.on('end', () => resolve({ bytes, lines }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

export function addExportFigures(report, r, fmt) {
  const n = r.calls.toLocaleString('en-US');
  report.add({ figure: `export of ${n} calls: engine peak heap`, value: r.peakHeap, show: fmt.mb, baselineName: 'same engine idle, after GC', baseline: r.idleHeap });
  report.add({ figure: `export of ${n} calls: engine peak RSS`, value: r.peakRss, show: fmt.mb, baselineName: 'same engine idle', baseline: r.idleRss, target: { text: '< 300 MB', pass: (v) => v < 300 * 1048576 } });
  report.add({ figure: `export of ${n} calls: event loop delay p99`, value: r.p99DelayMs, show: fmt.ms, baselineName: 'same engine idle, 2 s', baseline: Math.max(r.idleP99Ms, 0.01) });
  report.add({ figure: `export of ${n} calls: event loop's longest delay`, value: r.maxDelayMs, show: fmt.ms, baselineName: 'same engine idle, 2 s', baseline: Math.max(r.idleDelayMs, 0.01), target: { text: '≤ 20 ms', pass: (v) => v <= 20 } });
}
