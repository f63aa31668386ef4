// `npm run bench`: the figures of issues 2, 3 and 4, each against a baseline measured in this run.
// The engine and the bare baseline server run as child processes so their RSS and CPU are their
// own; the load generators and the webhook receiver run here. See bench/README.md.
import { mkdtempSync, rmSync, statSync, existsSync, mkdirSync } from 'node:fs';
import { tmpdir, cpus, loadavg } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { spawnNode, exited, peakRss, currentRss, CpuMeter, machineCpuSeconds } from './lib/proc.mjs';
import { saturateInChild, constantRate, percentile } from './lib/load.mjs';
import { trackBody, batchBody, basicAuth } from './lib/bodies.mjs';
import { startReceiver } from './lib/receiver.mjs';
import { startEngine } from './lib/engine.mjs';
import { Report, fmt } from './lib/report.mjs';
import { measureInspector, INSPECTOR_CALLS } from './lib/inspector.mjs';
import { compareReceivers, addReceiverFigures } from './lib/receivers-compare.mjs';
import { measureSearch, SEARCH_CALLS, STEADY_THROUGH, FIELD_QUERIES, BODY_QUERIES } from './lib/search.mjs';
import { measureNeighbours, addNeighbourFigures } from './lib/neighbours.mjs';
import { measurePlans, addPlanFigures } from './lib/plans.mjs';
import { measureHostile, addHostileFigures } from './lib/hostile.mjs';
import { measureImports, addImportFigures } from './lib/imports.mjs';
import { measureChores } from './lib/chores.mjs';
import { addSliceFigures } from './lib/slices.mjs';
import { measureRestart } from './lib/restart.mjs';
import { measureSpace } from './lib/space.mjs';
import { measureExport, addExportFigures, EXPORT_CALLS } from './lib/export.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(ROOT, 'package.json'));
const env = process.env;
const num = (name, fallback) => (env[name] !== undefined ? Number(env[name]) : fallback);

const CONNECTIONS = num('BENCH_CONNECTIONS', 50);
const DURATION_S = num('BENCH_DURATION', 10);
const BATCH_SIZE = 100;
const BATCH_CONNECTIONS = num('BENCH_BATCH_CONNECTIONS', 10);
const LATENCY_RATE = 500;
const LATENCY_MS = num('BENCH_LATENCY_MS', 10_000);
const ENQUEUE_N = num('BENCH_ENQUEUE_N', 100_000);
const CLIENT_N = num('BENCH_CLIENT_N', 20_000);
const CLIENT_FLUSH_AT = num('BENCH_CLIENT_FLUSH_AT', 100);
const CLIENT_ROUNDS = num('BENCH_CLIENT_ROUNDS', 3);
const SECRET = 'bench-shared-secret';
const INSPECTOR_ROUNDS = num('BENCH_INSPECTOR_ROUNDS', 5);
const RECEIVERS_RATE = num('BENCH_RECEIVERS_RATE', 500);
const RECEIVERS_ROUNDS = num('BENCH_RECEIVERS_ROUNDS', 3);
const SEARCH_ROUNDS = num('BENCH_SEARCH_ROUNDS', 5);
const ENGINE_FLAGS = (env.BENCH_ENGINE_FLAGS ?? '').split(' ').filter(Boolean);
const NEIGHBOURS_S = num('BENCH_NEIGHBOURS_S', 30);
const HOSTILE_S = num('BENCH_HOSTILE_S', 10);
/**
 * BENCH_SKIP=search,plans,…: sections of the full run left out, with their rows (before/after pairs of
 * one area take minutes instead of most of an hour). Sections 1–5 always run: the rest read them.
 */
const SKIPPABLE = ['inspector', 'search', 'receivers', 'neighbours', 'plans', 'hostile', 'restart', 'export', 'imports', 'chores'];
const SKIP = new Set((env.BENCH_SKIP ?? '').split(',').map((s) => s.trim()).filter(Boolean));
for (const s of SKIP) if (!SKIPPABLE.includes(s)) throw new Error(`BENCH_SKIP: no section "${s}" (one of ${SKIPPABLE.join(', ')})`);
/** Runs a section unless BENCH_SKIP names it (then null: its rows are left out). */
const section = (name, fn) => (SKIP.has(name) ? (log(`\n(${name}: skipped, BENCH_SKIP)`), null) : fn());

const log = (line) => process.stdout.write(`${line}\n`);
const json = { 'content-type': 'application/json' };
const gc = () => globalThis.gc?.();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Peak VmRSS of a child within one phase (VmHWM only gives the peak of the whole run). */
function rssSampler(pid) {
  let peak = 0;
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, currentRss(pid));
    } catch {
      // exited
    }
  }, 100);
  return { stop: () => (clearInterval(timer), peak) };
}

/** The most CPU (in cores) other programs used during any phase: a busy machine skews every figure. */
let noisiest = 0;
/** The phase in which the engine's sampled RSS was highest. */
const rssPeak = { bytes: 0, phase: '' };

async function phase(name, pids, fn, { childCpu = () => 0 } = {}) {
  if (env.BENCH_WAIT_IDLE) await waitIdle(60);
  const meters = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, new CpuMeter(pid)]));
  const rss = pids.engine ? rssSampler(pids.engine) : null;
  gc();
  const machine0 = machineCpuSeconds();
  const t0 = performance.now();
  const out = await fn();
  const secs = (performance.now() - t0) / 1000;
  const cores = Object.fromEntries(Object.entries(meters).map(([k, m]) => [k, m.cores()]));
  // Child processes of the phase (the load generator): their own CPU seconds over the phase.
  for (const [k, seconds] of Object.entries(out.children ?? {})) cores[k] = seconds / secs;
  // Whatever the machine did beyond our processes (short-lived client children are added by the caller).
  const ours = Object.values(cores).reduce((a, b) => a + b, 0) + childCpu() / secs;
  const others = Math.max(0, (machineCpuSeconds() - machine0) / secs - ours);
  noisiest = Math.max(noisiest, others);
  const cpu = Object.entries(cores).map(([k, c]) => `${k} ${c.toFixed(2)}`).join(', ');
  let mem = '';
  if (rss) {
    const peak = rss.stop();
    if (peak > rssPeak.bytes) Object.assign(rssPeak, { bytes: peak, phase: name });
    mem = `; engine RSS peak ${fmt.mb(peak)}`;
  }
  log(`  ${name}: ${out.summary} [${secs.toFixed(1)} s; CPU cores: ${cpu}, other programs ${others.toFixed(2)}${mem}]`);
  out.others = others;
  return out;
}

function revision() {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: ROOT, encoding: 'utf8' }).trim() !== '';
    return `git ${head}${dirty ? ' + uncommitted changes in src/' : ''}`;
  } catch {
    return 'not a git checkout';
  }
}

/** BENCH_WAIT_IDLE=seconds: wait (up to that long) until other programs use under 0.2 cores for 3 s. */
async function waitIdle(maxSeconds) {
  const end = Date.now() + maxSeconds * 1000;
  for (;;) {
    const c0 = machineCpuSeconds();
    const me0 = new CpuMeter(process.pid);
    await sleep(3000);
    const busy = (machineCpuSeconds() - c0) / 3 - me0.cores();
    if (busy < 0.2 || Date.now() > end) return busy;
    log(`waiting for an idle machine: other programs use ${busy.toFixed(2)} cores`);
  }
}

async function main() {
  if (process.argv[2] === 'receivers') return receiversOnly();
  if (process.argv[2] === 'search') return searchOnly();
  if (process.argv[2] === 'inspector') return inspectorOnly();
  if (process.argv[2] === 'batches') return batchesOnly();
  if (process.argv[2] === 'e2e') return e2eOnly();
  if (process.argv[2] === 'singles') return singlesOnly();
  if (process.argv[2] === 'neighbours') return neighboursOnly();
  if (process.argv[2] === 'plans') return plansOnly();
  if (process.argv[2] === 'hostile') return hostileOnly();
  if (process.argv[2] === 'imports') return importsOnly();
  if (process.argv[2] === 'restart') return restartOnly(process.argv[3]);
  if (process.argv[2] === 'space') return spaceOnly();
  if (process.argv[2] === 'export') return exportOnly(process.argv[3]);
  if (env.BENCH_WAIT_IDLE) await waitIdle(Number(env.BENCH_WAIT_IDLE));
  const started = new Date();
  log(`Webhook Lab benchmark — ${started.toISOString()}`);
  log(`machine: ${cpus().length} cores (${cpus()[0]?.model?.trim()}), Node ${process.version}, ${process.platform}; load average at start ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  log(`engine: ${revision()}`);
  log(`load: ${CONNECTIONS} connections × ${DURATION_S} s (autocannon); batches of ${BATCH_SIZE} over ${BATCH_CONNECTIONS} connections; latency at ${LATENCY_RATE} calls/s offered`);
  const report = new Report();
  const self = process.pid;
  const tmp = mkdtempSync(join(tmpdir(), 'webhook-lab-bench-'));
  const dataDir = join(tmp, 'data');
  mkdirSync(dataDir);
  let engine;
  let bare;
  let receiver;
  try {
    // 1. Baseline: the bare http server, the same generators and bodies.
    log('\n1. baseline: bare Node http server (child process)');
    bare = await spawnNode([join(ROOT, 'bench/bare-server.mjs')], { wait: ['listening: '] });
    const bareUrl = bare.lines['listening: '];
    const barePids = { server: bare.child.pid, generator: self };
    const bareHeaders = { ...json, authorization: basicAuth('wk_collector') };
    const bareSingle = await phase('single calls', { server: bare.child.pid }, async () => {
      const r = await saturateInChild({ root: ROOT, url: `${bareUrl}/v1/track`, connections: CONNECTIONS, duration: DURATION_S, headers: bareHeaders, body: { kind: 'track', prefix: 's' } });
      r.children = { generator: r.cpuSeconds };
      return { ...r, summary: `${fmt.int(r.perSecond)} req/s, p99 ${r.latencyP99} ms, errors ${r.errors + r.non2xx}` };
    });
    const bareBatch = await phase('batches of 100', { server: bare.child.pid }, async () => {
      const r = await saturateInChild({ root: ROOT, url: `${bareUrl}/v1/batch`, connections: BATCH_CONNECTIONS, duration: Math.min(5, DURATION_S), headers: bareHeaders, body: { kind: 'batch', prefix: 'b', size: BATCH_SIZE } });
      r.children = { generator: r.cpuSeconds };
      return { ...r, summary: `${fmt.int(r.perSecond)} req/s = ${fmt.int(r.perSecond * BATCH_SIZE)} events/s` };
    });
    const bareLatency = await phase(`${LATENCY_RATE} req/s offered`, barePids, async () => {
      const r = await constantRate({ origin: bareUrl, path: '/v1/track', headers: bareHeaders, rate: LATENCY_RATE, durationMs: Math.min(5000, LATENCY_MS), makeBody: (n) => trackBody(`l-${n}`) });
      r.p50 = percentile(r.rtts, 50);
      r.p99 = percentile(r.rtts, 99);
      return { ...r, summary: `${fmt.int(r.offeredPerSecond)} req/s, round trip p50 ${fmt.ms(r.p50)}, p99 ${fmt.ms(r.p99)}` };
    });
    const bareRss = peakRss(bare.child.pid);
    log(`  peak RSS ${fmt.mb(bareRss)}`);
    bare.child.kill('SIGTERM');
    await exited(bare.child);
    bare = undefined;

    // 2. The engine, with a local signing-checked receiver for the Webhooks source.
    receiver = await startReceiver({ secret: SECRET });
    engine = await startEngine({
      root: ROOT,
      dataDir,
      nodeFlags: ENGINE_FLAGS,
      config: {
        sources: [
          { name: 'bench-collector', writeKey: 'wk_collector' },
          { name: 'bench-webhooks', writeKey: 'wk_webhooks', webhooks: { enabled: true, sharedSecret: SECRET, urls: [{ url: receiver.url, headers: {} }] } },
          { name: 'bench-client', writeKey: 'wk_client' },
          { name: 'bench-client-ours', writeKey: 'wk_ours' },
          { name: 'bench-client-segment', writeKey: 'wk_segment' },
        ],
        // Pruning would delete calls the durability checks look for.
        settings: { retentionCalls: 100_000_000 },
      },
    });
    const src = await engine.sources();
    const pids = { engine: engine.pid, generator: self };
    const collectorHeaders = { ...json, authorization: basicAuth('wk_collector') };

    log(`\n2. collector, single calls (POST /v1/track, ${trackBody('s-0').length}-byte body)`);
    const ackSingle = new Set();
    const single = await phase('single calls', { engine: engine.pid }, async () => {
      const r = await saturateInChild({ root: ROOT, url: `${engine.collector}/v1/track`, connections: CONNECTIONS, duration: DURATION_S, headers: collectorHeaders, body: { kind: 'track', prefix: 's' }, acks: true });
      for (const n of r.acks) ackSingle.add(n);
      r.children = { generator: r.cpuSeconds };
      r.stored = await engine.count(src['bench-collector'].id);
      r.dropped = await engine.count(src['bench-collector'].id, 'dropped');
      return { ...r, summary: `${fmt.int(r.perSecond)} calls/s accepted (${fmt.int(r.acked)} × 2xx, ${r.non2xx} non-2xx, ${r.errors} errors), p99 ${r.latencyP99} ms; stored ${fmt.int(r.stored)} (${r.dropped} dropped), sent ${fmt.int(r.built)}` };
    });

    const ackBatch = new Set();
    const { batch, floor } = await batchSection(engine, src['bench-collector'].id, collectorHeaders, tmp, { ackBatch, before: single });

    log('\n4. end to end: collector → dispatcher → local receiver, signed (HMAC-SHA1 checked on every arrival)');
    const hookId = src['bench-webhooks'].id;
    const hookHeaders = { ...json, authorization: basicAuth('wk_webhooks') };
    // The receiver (signature checks on every arrival) runs in this process.
    const e2e = await e2eSaturation(engine, receiver, hookId, hookHeaders, 'e');
    const latency = await phase(`latency at ${LATENCY_RATE} calls/s`, pids, async () => {
      const total = Math.floor((LATENCY_MS * LATENCY_RATE) / 1000);
      const respondedAt = new Float64Array(total).fill(NaN);
      receiver.record(true);
      const r = await constantRate({
        origin: engine.collector, path: '/v1/track', headers: hookHeaders, rate: LATENCY_RATE, durationMs: LATENCY_MS,
        makeBody: (n) => trackBody(`l-${n}`),
        onResponse: (n, status, at) => { if (status === 200) respondedAt[n] = at; },
      });
      for (let i = 0; i < 300 && receiver.arrivals.size < r.ok; i++) await sleep(100);
      receiver.record(false);
      const lat = [];
      for (let n = 0; n < total; n++) {
        const arrived = receiver.arrivals.get(`l-${n}`);
        if (arrived !== undefined && !Number.isNaN(respondedAt[n])) lat.push(arrived - respondedAt[n]);
      }
      r.missing = r.ok - lat.length;
      r.p50 = percentile(lat, 50);
      r.p99 = percentile(lat, 99);
      r.max = percentile(lat, 100);
      r.collectorP99 = percentile(r.rtts, 99);
      return { ...r, summary: `${fmt.int(r.offeredPerSecond)} calls/s offered, ${fmt.int(r.ok)} × 200; 200 → arrival p50 ${fmt.ms(r.p50)}, p99 ${fmt.ms(r.p99)}, max ${fmt.ms(r.max)}; collector round trip p99 ${fmt.ms(r.collectorP99)}; ${r.missing} not arrived` };
    });

    // The engine's own phases; the client phases below add load shaped by the clients (the official
    // one sends every full batch at once, with no concurrency limit).
    const engineRssOwn = peakRss(engine.pid);

    log('\n5. batching client (issue 3)');
    let enqueueChildCpu = 0;
    const clientResult = await phase('enqueue + flush (child process)', { engine: engine.pid }, () => clientEnqueue(engine, (cpu) => (enqueueChildCpu = cpu)), { childCpu: () => enqueueChildCpu });
    const clientCount = await engine.count(src['bench-client'].id);
    const sideBySide = { ours: [], segment: [] };
    const childCpu = () => [...sideBySide.ours, ...sideBySide.segment].reduce((a, r) => a + r.cpuSeconds, 0);
    const sideBySidePhase = await phase(`side by side, ${fmt.int(CLIENT_N)} track calls, flushAt ${CLIENT_FLUSH_AT}, ${CLIENT_ROUNDS} rounds each (child processes)`, { engine: engine.pid }, async () => {
      for (let round = 0; round < CLIENT_ROUNDS; round++) {
        for (const which of round % 2 === 0 ? ['ours', 'segment'] : ['segment', 'ours']) {
          const key = which === 'ours' ? 'wk_ours' : 'wk_segment';
          const { child, lines } = await spawnNode([join(ROOT, 'bench/client-child.mjs'), which, String(CLIENT_N), engine.collector, key, String(CLIENT_FLUSH_AT)], { wait: ['{'], timeoutMs: 180_000 });
          await exited(child);
          const r = JSON.parse(`{${lines['{']}`);
          sideBySide[which].push(r);
          log(`    ${which.padEnd(7)} ${fmt.int(r.perSecond)} msgs/s (enqueue ${fmt.ms(r.enqueueMs)}, total ${fmt.ms(r.totalMs)}), peak RSS ${fmt.mb(r.peakRss)}, errors ${r.errors}`);
        }
      }
      return { summary: 'done' };
    }, { childCpu });
    // Accepted calls (no Webhooks on these sources: "not forwarded"). A client that gives up waiting
    // and resends a batch has its repeats stored as dropped duplicates, counted apart.
    const oursStored = await engine.count(src['bench-client-ours'].id, 'not_forwarded');
    const segmentStored = await engine.count(src['bench-client-segment'].id, 'not_forwarded');
    const oursDuplicates = await engine.count(src['bench-client-ours'].id, 'dropped');
    const segmentDuplicates = await engine.count(src['bench-client-segment'].id, 'dropped');

    // Memory, then stop (the engine checkpoints the WAL on SIGTERM) and inspect the file.
    const engineRss = peakRss(engine.pid);
    const health = await engine.health();
    await engine.stop();
    engine = undefined;
    const disk = inspectDatabase(dataDir, { collectorId: src['bench-collector'].id, ackSingle, ackBatch, batchBuilt: batch.built });

    const inspector = await section('inspector', async () => {
      log(`\n6. inspector (issue 4): ${fmt.int(INSPECTOR_CALLS)} stored calls, web mode in Chromium; navigation → first rows in the DOM, ${INSPECTOR_ROUNDS} cold visits (fresh browser context) and reloads`);
      const r = await measureInspector({ root: ROOT, tmp, rounds: INSPECTOR_ROUNDS, log });
      if (r.skipped) log(`  skipped: ${r.skipped}`);
      return r;
    });

    const search = await section('search', () => searchSection(tmp));

    const receivers = await section('receivers', () => receiversSection(tmp));

    const neighbours = await section('neighbours', () => measureNeighbours({ root: ROOT, tmp, seconds: NEIGHBOURS_S, phase, log }));

    const plans = await section('plans', () => measurePlans({ root: ROOT, tmp, phase, log, connections: BATCH_CONNECTIONS, durationS: Math.min(5, DURATION_S), nodeFlags: ENGINE_FLAGS }));

    const hostile = await section('hostile', () => measureHostile({ root: ROOT, tmp, phase, log, seconds: HOSTILE_S, nodeFlags: ENGINE_FLAGS }));

    const restart = await section('restart', () => {
      log('\n12. restart with a 1,000-rule tracking plan (issue 27), the check workers compiling it (issue 38)');
      return measureRestart({ root: ROOT, dataDir: join(tmp, 'restart-data'), log, plannedOnly: true });
    });

    const exported = await section('export', () => {
      log(`\n13. export (issue 38): ${fmt.int(EXPORT_CALLS)} calls streamed as JSON Lines (GET /api/export/file), health asked every 50 ms`);
      return measureExport({ root: ROOT, dataDir: join(tmp, 'export-data'), log, nodeFlags: ENGINE_FLAGS });
    });

    const imports = await section('imports', () => measureImports({ root: ROOT, tmp, log, nodeFlags: ENGINE_FLAGS }));
    await section('chores', () => measureChores({ root: ROOT, tmp, log, nodeFlags: ENGINE_FLAGS }));

    // The table.
    const median = (rs, k) => rs.map((r) => r[k]).sort((a, b) => a - b)[Math.floor(rs.length / 2)];
    report.add({ figure: 'collector single calls/s', value: single.perSecond, baselineName: 'bare http req/s', baseline: bareSingle.perSecond, noise: [single, bareSingle], target: { text: 'ratio ≥ 0.7', pass: (_, r) => r >= 0.7 } });
    report.check({ figure: 'single calls durable', ok: disk.missingSingle === 0 && single.stored >= single.acked && single.dropped === 0, detail: `stored ${fmt.int(single.stored)} ≥ 2xx ${fmt.int(single.acked)}; ${disk.missingSingle} 2xx ids missing in DB` });
    report.add({ figure: 'collector batch events/s', value: batch.perSecond * BATCH_SIZE, baselineName: 'bare http, same batches', baseline: bareBatch.perSecond * BATCH_SIZE, noise: [batch, bareBatch], target: { text: '≥ 50,000/s', pass: (v) => v >= 50_000 } });
    addFloorFigure(report, batch, floor);
    report.check({ figure: 'batch events durable', ok: disk.missingBatch === 0 && batch.stored >= batch.events && batch.dropped === 0, detail: `stored ${fmt.int(batch.stored)} ≥ 2xx×100 ${fmt.int(batch.events)}; ${disk.missingBatch} events of 2xx batches missing in DB` });
    report.add({ figure: 'e2e deliveries/s while loaded', value: e2e.deliveriesPerSecond, baselineName: 'bare http req/s', baseline: bareSingle.perSecond, noise: [e2e, bareSingle], target: { text: '≥ 2,000/s', pass: (v) => v >= 2000 } });
    report.add({ figure: `e2e backlog drain/s (${fmt.int(e2e.backlog)} in ${fmt.s(e2e.drainSeconds)})`, value: e2e.drainPerSecond, baselineName: 'bare http req/s', baseline: bareSingle.perSecond, noise: [e2e, bareSingle] });
    report.check({ figure: 'e2e delivered, signatures valid', ok: e2e.delivered === e2e.stored && receiver.stats.badSignatures === 0, detail: `${fmt.int(e2e.delivered)}/${fmt.int(e2e.stored)} delivered, ${receiver.stats.badSignatures} bad signatures` });
    report.add({ figure: `200 → receiver p50 @${LATENCY_RATE}/s`, value: latency.p50, show: fmt.ms, baselineName: 'bare round trip p50', baseline: bareLatency.p50, noise: [latency, bareLatency] });
    report.add({ figure: `200 → receiver p99 @${LATENCY_RATE}/s`, value: latency.p99, show: fmt.ms, baselineName: 'bare round trip p99', baseline: bareLatency.p99, noise: [latency, bareLatency], target: { text: '< 50 ms', pass: (v) => v < 50 } });
    report.add({ figure: 'engine peak RSS, collector + e2e phases', value: engineRssOwn, show: fmt.mb, baselineName: 'bare server', baseline: bareRss, target: { text: '< 300 MB', pass: (v) => v < 300 * 1048576 } });
    report.add({ figure: `engine peak RSS, whole run (max in: ${rssPeak.phase.split(',')[0]})`, value: engineRss, show: fmt.mb, baselineName: 'bare server', baseline: bareRss, target: { text: '< 300 MB', pass: (v) => v < 300 * 1048576 } });
    report.add({ figure: `DB bytes per stored call (${fmt.int(disk.calls)} calls)`, value: disk.bytesPerCall, baselineName: 'call body bytes', baseline: trackBody('s-100000').length });
    report.add({ figure: 'client enqueue msgs/s', value: clientResult.enqueuePerSecond, baselineName: 'naive stamp+stringify+push', baseline: clientResult.barePerSecond, noise: [clientResult], target: { text: '≥ 200,000/s', pass: (v) => v >= 200_000 } });
    report.add({ figure: 'client → collector msgs/s', value: clientResult.e2ePerSecond, baselineName: 'collector batch events/s', baseline: batch.perSecond * BATCH_SIZE, noise: [clientResult, batch] });
    report.check({ figure: 'client messages durable', ok: clientResult.sent === ENQUEUE_N && clientCount === ENQUEUE_N, detail: `${fmt.int(clientResult.sent)} sent, ${fmt.int(clientCount)} stored of ${fmt.int(ENQUEUE_N)}` });
    report.add({ figure: `this client msgs/s (median of ${CLIENT_ROUNDS})`, value: median(sideBySide.ours, 'perSecond'), baselineName: '@segment/analytics-node', baseline: median(sideBySide.segment, 'perSecond'), noise: [sideBySidePhase], target: { text: 'ratio ≥ 1.0', pass: (_, r) => r >= 1 } });
    report.add({ figure: 'this client peak RSS (median)', value: median(sideBySide.ours, 'peakRss'), show: fmt.mb, baselineName: '@segment/analytics-node', baseline: median(sideBySide.segment, 'peakRss'), target: { text: 'ratio ≤ 1.0', pass: (_, r) => r <= 1 } });
    if (inspector) addInspectorFigures(report, inspector);
    if (search) addSearchFigures(report, search);
    if (receivers) addReceiverFigures(report, receivers, RECEIVERS_RATE);
    if (neighbours) addNeighbourFigures(report, neighbours, fmt);
    if (plans) addPlanFigures(report, plans);
    if (hostile) addHostileFigures(report, hostile, fmt);
    if (restart) addPlannedRestartFigure(report, restart);
    if (exported) addExportFigures(report, exported, fmt);
    if (imports) addImportFigures(report, imports, fmt);
    addSliceFigures(report);
    const want = CLIENT_N * CLIENT_ROUNDS;
    report.check({ figure: 'side-by-side calls durable', ok: oursStored === want && segmentStored === want, detail: `this client ${fmt.int(oursStored)}, official ${fmt.int(segmentStored)} accepted of ${fmt.int(want)} each; resent duplicates dropped: ${fmt.int(oursDuplicates)}, ${fmt.int(segmentDuplicates)}` });

    log(`\nengine at the end: ${fmt.int(health.calls)} calls stored, ${health.pendingDeliveries} deliveries pending; database ${fmt.mb(disk.fileBytes)}${disk.breakdown ? ` (${disk.breakdown})` : ''}`);
    log(`\nResults (${started.toISOString().slice(0, 10)}, ${cpus().length} cores, Node ${process.version}):\n`);
    log(report.table());
    log(`\nother programs used up to ${noisiest.toFixed(2)} CPU cores during a phase${noisiest > 0.25 ? ' — the machine was not idle: figures are lower than this machine can do; rerun on an idle machine' : ''}`);
    log(`\ntotal bench time ${((Date.now() - started.getTime()) / 1000).toFixed(0)} s`);
  } finally {
    receiver?.close();
    if (engine) engine.kill();
    if (bare) bare.child.kill('SIGKILL');
    if (!env.BENCH_KEEP) rmSync(tmp, { recursive: true, force: true });
    else log(`kept ${tmp}`);
  }
}

/** 4. Single calls to a source delivering to the bench's receiver, saturated: deliveries while loaded, then the backlog's drain. */
async function e2eSaturation(engine, receiver, hookId, hookHeaders, prefix, name = 'saturation') {
  return phase(name, { engine: engine.pid, receiver: process.pid }, async () => {
    const a0 = receiver.stats.arrivals;
    const s0 = await engine.count(hookId);
    const d0 = await engine.count(hookId, 'delivered');
    const t0 = performance.now();
    const r = await saturateInChild({ root: ROOT, url: `${engine.collector}/v1/track`, connections: CONNECTIONS, duration: DURATION_S, headers: hookHeaders, body: { kind: 'track', prefix } });
    r.children = { generator: r.cpuSeconds };
    const t1 = performance.now();
    r.duringLoad = receiver.stats.arrivals - a0;
    r.loadSeconds = r.seconds; // the generator's own run, without its process start
    r.deliveriesPerSecond = r.duringLoad / r.loadSeconds;
    r.stored = (await engine.count(hookId)) - s0;
    r.backlog = r.stored - r.duringLoad;
    const last = await receiver.waitFor(a0 + r.stored, 120_000);
    r.drainSeconds = last === null ? NaN : Math.max(0, (last - t1) / 1000);
    r.drainPerSecond = r.backlog / r.drainSeconds;
    r.overallPerSecond = r.stored / ((last - t0) / 1000);
    for (let i = 0; i < 100 && (await engine.health()).pendingDeliveries > 0; i++) await sleep(100);
    r.delivered = (await engine.count(hookId, 'delivered')) - d0;
    return { ...r, summary: `collector ${fmt.int(r.perSecond)} calls/s; receiver ${fmt.int(r.deliveriesPerSecond)} deliveries/s while loaded; backlog ${fmt.int(r.backlog)} drained in ${fmt.s(r.drainSeconds)} (${fmt.int(r.drainPerSecond)}/s); delivered ${fmt.int(r.delivered)}/${fmt.int(r.stored)}, bad signatures ${receiver.stats.badSignatures}` };
  });
}

/**
 * `node bench/run.mjs e2e`: section 4's saturation alone, BENCH_E2E_ROUNDS (3) rounds in one engine
 * after the bare server's single calls (the baseline), medians: for before/after pairs of the
 * dispatcher, a few minutes each.
 */
async function e2eOnly() {
  log(`Webhook Lab benchmark, end to end only — ${new Date().toISOString()}; ${cpus().length} cores, Node ${process.version}; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}; engine: ${revision()}`);
  const tmp = mkdtempSync(join(tmpdir(), 'webhook-lab-bench-'));
  const headers = { ...json, authorization: basicAuth('wk_webhooks') };
  let bare;
  let receiver;
  let engine;
  try {
    bare = await spawnNode([join(ROOT, 'bench/bare-server.mjs')], { wait: ['listening: '] });
    const bareUrl = bare.lines['listening: '];
    const bareSingle = await phase('bare http, single calls', { server: bare.child.pid }, async () => {
      const r = await saturateInChild({ root: ROOT, url: `${bareUrl}/v1/track`, connections: CONNECTIONS, duration: DURATION_S, headers, body: { kind: 'track', prefix: 's' } });
      r.children = { generator: r.cpuSeconds };
      return { ...r, summary: `${fmt.int(r.perSecond)} req/s` };
    });
    bare.child.kill('SIGTERM');
    await exited(bare.child);
    bare = undefined;
    receiver = await startReceiver({ secret: SECRET });
    const dataDir = join(tmp, 'data');
    mkdirSync(dataDir);
    engine = await startEngine({
      root: ROOT, dataDir, nodeFlags: ENGINE_FLAGS,
      config: { sources: [{ name: 'bench-webhooks', writeKey: 'wk_webhooks', webhooks: { enabled: true, sharedSecret: SECRET, urls: [{ url: receiver.url, headers: {} }] } }], settings: { retentionCalls: 100_000_000 } },
    });
    const hookId = (await engine.sources())['bench-webhooks'].id;
    const rounds = [];
    for (let n = 1; n <= Math.max(1, num('BENCH_E2E_ROUNDS', 3)); n++) rounds.push(await e2eSaturation(engine, receiver, hookId, headers, `e${n}-`, `saturation, round ${n}`));
    const median = (k) => rounds.map((r) => r[k]).sort((a, b) => a - b)[Math.floor(rounds.length / 2)];
    const report = new Report();
    report.add({ figure: `e2e deliveries/s while loaded (median of ${rounds.length})`, value: median('deliveriesPerSecond'), baselineName: 'bare http req/s', baseline: bareSingle.perSecond, noise: [...rounds, bareSingle], target: { text: '≥ 2,000/s', pass: (v) => v >= 2000 } });
    report.check({ figure: 'e2e delivered, signatures valid', ok: rounds.every((r) => r.delivered === r.stored) && receiver.stats.badSignatures === 0, detail: `${rounds.map((r) => `${fmt.int(r.delivered)}/${fmt.int(r.stored)}`).join(', ')} delivered, ${receiver.stats.badSignatures} bad signatures` });
    log(`\n${report.table()}`);
    log(`\nother programs used up to ${noisiest.toFixed(2)} CPU cores during a phase`);
  } finally {
    receiver?.close();
    if (engine) await engine.stop().catch(() => engine.kill());
    if (bare) bare.child.kill('SIGKILL');
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * 3. Batches through the collector, then (issue 16) the floor: the same bodies, as many as were
 * answered 2xx, parsed and stored without HTTP (bench/batch-floor-child.mjs). `before`: what the
 * source held before (stored, dropped), so the counts are this phase's own.
 */
async function batchSection(engine, collectorId, headers, tmp, { ackBatch, before = { stored: 0, dropped: 0 } }) {
  log(`\n3. collector, batches of ${BATCH_SIZE} (POST /v1/batch, ${batchBody('b-0', BATCH_SIZE).length}-byte body)`);
  const batch = await phase('batches', { engine: engine.pid }, async () => {
    const r = await saturateInChild({ root: ROOT, url: `${engine.collector}/v1/batch`, connections: BATCH_CONNECTIONS, duration: DURATION_S, headers, body: { kind: 'batch', prefix: 'b', size: BATCH_SIZE }, acks: true });
    for (const n of r.acks) ackBatch.add(n);
    r.children = { generator: r.cpuSeconds };
    r.stored = (await engine.count(collectorId)) - before.stored;
    r.dropped = (await engine.count(collectorId, 'dropped')) - before.dropped;
    r.events = r.acked * BATCH_SIZE;
    return { ...r, summary: `${fmt.int(r.perSecond * BATCH_SIZE)} events/s accepted (${fmt.int(r.acked)} × 2xx, ${r.non2xx} non-2xx, ${r.errors} errors), p99 ${r.latencyP99} ms; stored ${fmt.int(r.stored)} events (${r.dropped} dropped)` };
  });
  const dir = mkdtempSync(join(tmp, 'floor-'));
  // The engine is frozen while the floor runs: it is not idle after a flood (its body index catches
  // up on the calls just stored), and it took up to 0.7 of a core from the floor, flattering the ratio.
  const floor = await phase(`floor: the same ${fmt.int(batch.acked)} bodies, JSON.parse + better-sqlite3, one transaction per request, no HTTP (child process; the engine frozen meanwhile)`, { engine: engine.pid }, async () => {
    process.kill(engine.pid, 'SIGSTOP');
    let child;
    let lines;
    try {
      ({ child, lines } = await spawnNode([join(ROOT, 'bench/batch-floor-child.mjs'), String(batch.acked), String(BATCH_SIZE), dir], { wait: ['{'], nodeFlags: ['--expose-gc'], timeoutMs: 180_000 }));
      await exited(child);
    } finally {
      process.kill(engine.pid, 'SIGCONT');
    }
    const r = JSON.parse(`{${lines['{']}`);
    r.children = { floor: r.cpuSeconds };
    return { ...r, summary: `${fmt.int(r.perSecond)} events/s (${fmt.int(r.events)} events in ${fmt.s(r.timedSeconds)} timed, ${fmt.int(r.stored)} rows stored); collector at ${fmt.ratio((batch.perSecond * BATCH_SIZE) / r.perSecond)} of it (target 0.7×)` };
  });
  rmSync(dir, { recursive: true, force: true });
  return { batch, floor };
}

function addFloorFigure(report, batch, floor) {
  report.add({ figure: 'collector batch events/s vs floor', value: batch.perSecond * BATCH_SIZE, baselineName: 'same bodies: JSON.parse + SQLite, no HTTP', baseline: floor.perSecond, noise: [batch, floor], target: { text: 'ratio ≥ 0.7', pass: (_, r) => r >= 0.7 } });
}

/**
 * `node bench/run.mjs singles`: single calls through the collector against the bare server, both
 * started first (the one not measured is idle), in BENCH_SINGLES_ROUNDS rounds whose order alternates,
 * so each round's ratio is taken a few seconds apart on the same machine; prints every round and the median.
 */
async function singlesOnly() {
  const rounds = num('BENCH_SINGLES_ROUNDS', 3);
  log(`Webhook Lab benchmark, single calls only — ${new Date().toISOString()}; ${cpus().length} cores, Node ${process.version}; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}; engine: ${revision()}`);
  log(`load: ${CONNECTIONS} connections × ${DURATION_S} s (autocannon), POST /v1/track, ${trackBody('s-0').length}-byte body; ${rounds} rounds, bare and collector in alternating order`);
  const started = Date.now();
  const tmp = mkdtempSync(join(tmpdir(), 'webhook-lab-bench-'));
  const dataDir = join(tmp, 'data');
  mkdirSync(dataDir);
  const headers = { ...json, authorization: basicAuth('wk_collector') };
  let bare;
  let engine;
  try {
    bare = await spawnNode([join(ROOT, 'bench/bare-server.mjs')], { wait: ['listening: '] });
    const bareUrl = bare.lines['listening: '];
    engine = await startEngine({ root: ROOT, dataDir, nodeFlags: ENGINE_FLAGS, config: { sources: [{ name: 'bench-collector', writeKey: 'wk_collector' }], settings: { retentionCalls: 100_000_000 } } });
    const src = await engine.sources();
    const ratios = [];
    let acked = 0;
    for (let round = 0; round < rounds; round++) {
      const one = async (which) => {
        // The engine goes on after a round (its body index catching up on the calls just stored):
        // counted as other programs, it slowed the bare server's next round and flattered the ratio.
        await waitIdle(60);
        const pid = which === 'bare' ? bare.child.pid : engine.pid;
        const url = `${which === 'bare' ? bareUrl : engine.collector}/v1/track`;
        return phase(`round ${round + 1}, ${which.padEnd(9)}`, { server: pid }, async () => {
          const r = await saturateInChild({ root: ROOT, url, connections: CONNECTIONS, duration: DURATION_S, headers, body: { kind: 'track', prefix: `s${round}${which[0]}` } });
          r.children = { generator: r.cpuSeconds };
          return { ...r, summary: `${fmt.int(r.perSecond)} calls/s (${r.non2xx} non-2xx, ${r.errors} errors), p99 ${r.latencyP99} ms` };
        });
      };
      const order = round % 2 === 0 ? ['bare', 'collector'] : ['collector', 'bare'];
      const r = {};
      for (const which of order) r[which] = await one(which);
      acked += r.collector.acked;
      const ratio = r.collector.perSecond / r.bare.perSecond;
      ratios.push({ ratio, others: Math.max(r.bare.others, r.collector.others) });
      log(`  round ${round + 1}: ${fmt.ratio(ratio)} (other programs up to ${Math.max(r.bare.others, r.collector.others).toFixed(2)} cores)`);
    }
    const stored = (await engine.count(src['bench-collector'].id)) - (await engine.count(src['bench-collector'].id, 'dropped'));
    const sorted = ratios.map((r) => r.ratio).sort((a, b) => a - b);
    log(`\nsingle calls ÷ bare http: median ${fmt.ratio(sorted[Math.floor(sorted.length / 2)])}, range ${fmt.ratio(sorted[0])}–${fmt.ratio(sorted[sorted.length - 1])} over ${rounds} rounds (target 0.7×); stored (none dropped) ${fmt.int(stored)} ≥ 2xx ${fmt.int(acked)}: ${stored >= acked ? 'PASS' : 'MISS'}`);
    log(`other programs used up to ${noisiest.toFixed(2)} CPU cores during a phase; ${((Date.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    if (engine) await engine.stop().catch(() => engine.kill());
    if (bare) bare.child.kill('SIGKILL');
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** `node bench/run.mjs batches`: the bare server's batches, the collector's and the floor, alone. */
async function batchesOnly() {
  log(`Webhook Lab benchmark, batches only — ${new Date().toISOString()}; ${cpus().length} cores, Node ${process.version}; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}; engine: ${revision()}`);
  const started = Date.now();
  const tmp = mkdtempSync(join(tmpdir(), 'webhook-lab-bench-'));
  const dataDir = join(tmp, 'data');
  mkdirSync(dataDir);
  const headers = { ...json, authorization: basicAuth('wk_collector') };
  let bare;
  let engine;
  try {
    log('\n1. baseline: bare Node http server (child process)');
    bare = await spawnNode([join(ROOT, 'bench/bare-server.mjs')], { wait: ['listening: '] });
    const bareUrl = bare.lines['listening: '];
    const bareBatch = await phase('batches of 100', { server: bare.child.pid }, async () => {
      const r = await saturateInChild({ root: ROOT, url: `${bareUrl}/v1/batch`, connections: BATCH_CONNECTIONS, duration: Math.min(5, DURATION_S), headers, body: { kind: 'batch', prefix: 'b', size: BATCH_SIZE } });
      r.children = { generator: r.cpuSeconds };
      return { ...r, summary: `${fmt.int(r.perSecond)} req/s = ${fmt.int(r.perSecond * BATCH_SIZE)} events/s` };
    });
    bare.child.kill('SIGTERM');
    await exited(bare.child);
    bare = undefined;
    engine = await startEngine({ root: ROOT, dataDir, nodeFlags: ENGINE_FLAGS, config: { sources: [{ name: 'bench-collector', writeKey: 'wk_collector' }], settings: { retentionCalls: 100_000_000 } } });
    const src = await engine.sources();
    const { batch, floor } = await batchSection(engine, src['bench-collector'].id, headers, tmp, { ackBatch: new Set() });
    const report = new Report();
    report.add({ figure: 'collector batch events/s', value: batch.perSecond * BATCH_SIZE, baselineName: 'bare http, same batches', baseline: bareBatch.perSecond * BATCH_SIZE, noise: [batch, bareBatch], target: { text: '≥ 50,000/s', pass: (v) => v >= 50_000 } });
    addFloorFigure(report, batch, floor);
    log(`\n${report.table()}`);
    log(`\nother programs used up to ${noisiest.toFixed(2)} CPU cores during a phase; ${((Date.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    if (engine) await engine.stop().catch(() => engine.kill());
    if (bare) bare.child.kill('SIGKILL');
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * `node bench/run.mjs restart [dataDir]`: launch to the first answered page of 100 calls with 200,000
 * stored (issue 27), five starts; a dataDir given is kept (and filled only if empty) for before/after runs.
 */
async function restartOnly(keep) {
  log(`Webhook Lab benchmark, restart only — ${new Date().toISOString()}; ${cpus().length} cores, Node ${process.version}; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}; engine: ${revision()}`);
  const tmp = keep ? undefined : mkdtempSync(join(tmpdir(), 'webhook-lab-bench-'));
  try {
    const r = await measureRestart({ root: ROOT, dataDir: keep ?? join(tmp, 'data'), log });
    log(`\nlaunch to first page of 100, ${fmt.int(SEARCH_CALLS)} calls stored: median ${fmt.ms(r.median)} of ${r.samples} starts, slowest ${fmt.ms(r.max)} (target < 1 s: ${r.median < 1000 ? 'PASS' : 'MISS'})`);
    log(`against the floor (Node, better-sqlite3 and the same queries on the same file): ${fmt.ms(r.floor)} median, the lab ${(r.median / r.floor).toFixed(2)}× it (target ≤ 2×: ${r.median <= 2 * r.floor ? 'PASS' : 'MISS'})`);
    const k = r.killed;
    log(`after kill -9 mid-ingest (-wal ${(k.walMedian / 1024 / 1024).toFixed(1)} MB, median): median ${fmt.ms(k.median)} of ${k.samples} starts, slowest ${fmt.ms(k.max)}, ${(k.median / r.median).toFixed(2)}× a clean stop's (target < 1 s: ${k.median < 1000 ? 'PASS' : 'MISS'})`);
    const p = r.planned;
    log(`with a 1,000-rule tracking plan connected: median ${fmt.ms(p.median)} of ${p.samples} starts, slowest ${fmt.ms(p.max)}, ${(p.median / r.median).toFixed(2)}× without (target < 1 s: ${p.median < 1000 ? 'PASS' : 'MISS'}); the plan compiled in check workers ${p.compiles.join(', ')} times per start`);
  } finally {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * `node bench/run.mjs space`: BENCH_SPACE_THROUGH calls (1,000,000) through a lab keeping 200,000:
 * the file at its largest, when retention caught up, once its free pages were given back, and bytes
 * per retained call (issue 27).
 */
async function spaceOnly() {
  log(`Webhook Lab benchmark, space only — ${new Date().toISOString()}; ${cpus().length} cores, Node ${process.version}; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}; engine: ${revision()}`);
  const tmp = mkdtempSync(join(tmpdir(), 'webhook-lab-bench-'));
  try {
    const r = await measureSpace({ root: ROOT, tmp, through: num('BENCH_SPACE_THROUGH', 1_000_000), log });
    const mb = (b) => `${(b / 1024 / 1024).toFixed(1)} MB`;
    log(`\n${fmt.int(r.through)} calls through, ${fmt.int(r.retained)} kept (auto_vacuum ${['none', 'full', 'incremental'][r.autoVacuum]}):`);
    log(`  file + WAL at its largest ${mb(r.peak)}; when retention caught up ${mb(r.atRetention)} (${mb(r.freeAtRetention)} of it free pages); after giving them back ${mb(r.after)} (${(r.givenBackMs / 1000).toFixed(1)} s), ${(r.after / r.peak).toFixed(2)}× the largest; live data ${mb(r.live)}`);
    log(`  bytes per retained call: ${fmt.int(Math.round(r.perCall))} (file + WAL / calls kept)`);
    const report = new Report();
    addSliceFigures(report);
    log(`\n${report.table()}`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * `node bench/run.mjs export [dataDir]`: the export figure alone (bench/lib/export.mjs). BENCH_ENGINE_ROOT
 * runs another build (a checkout whose out/ is built) against the same filled dataDir: before/after.
 */
async function exportOnly(keep) {
  const engineRoot = env.BENCH_ENGINE_ROOT ?? ROOT;
  log(`Webhook Lab benchmark, export only — ${new Date().toISOString()}; ${cpus().length} cores, Node ${process.version}; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}; engine: ${engineRoot === ROOT ? revision() : engineRoot}`);
  const tmp = mkdtempSync(join(tmpdir(), 'webhook-lab-bench-'));
  try {
    const r = await measureExport({ root: ROOT, engineRoot, dataDir: keep ?? join(tmp, 'export-data'), log, calls: num('BENCH_EXPORT_CALLS', EXPORT_CALLS), nodeFlags: ENGINE_FLAGS });
    const report = new Report();
    addExportFigures(report, r, fmt);
    addSliceFigures(report);
    log(`\n${report.table()}`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** 7. Search (issues 14, 27): engines with 200,000 calls, fresh and in steady state; `node bench/run.mjs search` runs it alone. */
async function searchSection(tmp) {
  const bodies = Object.values(BODY_QUERIES).flat().length;
  log(`\n7. search (issues 14, 27): ${fmt.int(SEARCH_CALLS)} stored calls, fresh and after ${fmt.int(STEADY_THROUGH)} through the default retention; GET /api/messages?q=…&limit=100 through the control API, ${SEARCH_ROUNDS} rounds of ${FIELD_QUERIES.length} searches and ${bodies} with body=1 (rare, common, absent; a common term's second page too)`);
  // Not a phase(): the engines are started inside. measureSearch reports the other programs' CPU itself.
  const r = await measureSearch({ root: ROOT, tmp, rounds: SEARCH_ROUNDS, log, steady: env.BENCH_SEARCH_STEADY !== '0' });
  noisiest = Math.max(noisiest, r.others);
  for (const lab of r.labs) {
    const kinds = Object.entries(lab.body).map(([k, s]) => `${k} ${fmt.ms(s.median)} / ${fmt.ms(s.p95)} (${fmt.ratio(s.median / lab.field.median)} / ${fmt.ratio(s.p95 / lab.field.p95)} of fields)`);
    log(`  ${lab.name}: fields median ${fmt.ms(lab.field.median)}, p95 ${fmt.ms(lab.field.p95)}; bodies median / p95: ${kinds.join('; ')}; no search ${fmt.ms(lab.baseline)}`);
  }
  log(`  [other programs ${r.others.toFixed(2)} cores]`);
  return r;
}

function addSearchFigures(report, search) {
  const base = { show: fmt.ms, baselineName: 'same page, no search', baseline: search.baseline, noise: [search] };
  report.add({ ...base, figure: `search median (${search.samples.field} searches)`, value: search.fieldMedian, target: { text: '< 100 ms', pass: (v) => v < 100 } });
  report.add({ ...base, figure: 'search p95', value: search.fieldP95, target: { text: '< 250 ms', pass: (v) => v < 250 } });
  // Body search against field search in the same lab and run (issue 27: at field-search speed).
  for (const lab of search.labs) {
    for (const [kind, s] of Object.entries(lab.body)) {
      const vs = { show: fmt.ms, noise: [search] };
      report.add({ ...vs, figure: `${lab.name}: bodies, ${kind}, median (${s.n})`, value: s.median, baselineName: 'field search median', baseline: lab.field.median, target: { text: '< 100 ms', pass: (v) => v < 100 } });
      report.add({ ...vs, figure: `${lab.name}: bodies, ${kind}, p95`, value: s.p95, baselineName: 'field search p95', baseline: lab.field.p95, target: { text: '< 250 ms', pass: (v) => v < 250 } });
    }
  }
}

/** Section 6's rows: first rows within 300 ms; the app's clickable rows within 4× the static page, cold (issue 40). */
function addInspectorFigures(report, inspector) {
  if (inspector.skipped) return;
  const within300 = { text: '≤ 300 ms', pass: (v) => v <= 300 };
  report.add({ figure: `inspector first rows, cold visit (median of ${INSPECTOR_ROUNDS})`, value: inspector.cold, show: fmt.ms, baselineName: 'static 40-row page, cold', baseline: inspector.baselineCold, target: within300 });
  report.add({ figure: `inspector first rows, reload (median of ${INSPECTOR_ROUNDS})`, value: inspector.reload, show: fmt.ms, baselineName: 'static 40-row page, reload', baseline: inspector.baselineReload, target: within300 });
  report.add({ figure: `inspector app rows (clickable), cold (median of ${INSPECTOR_ROUNDS})`, value: inspector.appCold, show: fmt.ms, baselineName: 'static 40-row page, cold', baseline: inspector.baselineCold, target: { text: 'ratio ≤ 4', pass: (_, r) => r <= 4 } });
  report.add({ figure: `inspector app rows (clickable), reload (median of ${INSPECTOR_ROUNDS})`, value: inspector.appReload, show: fmt.ms, baselineName: 'static 40-row page, reload', baseline: inspector.baselineReload });
  report.check({ figure: 'inspector list virtualized', ok: inspector.rowsInDom > 0 && inspector.rowsInDom < 80, detail: `${inspector.rowsInDom} rows in the DOM for ${fmt.int(INSPECTOR_CALLS)} calls`, target: '< 80 rows' });
}

/** `node bench/run.mjs inspector`: section 6 alone (issue 40's first second), about a minute. */
async function inspectorOnly() {
  log(`Webhook Lab benchmark, inspector only — ${new Date().toISOString()}; ${cpus().length} cores, Node ${process.version}; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}; engine: ${revision()}`);
  const tmp = mkdtempSync(join(tmpdir(), 'webhook-lab-bench-'));
  try {
    const inspector = await measureInspector({ root: ROOT, tmp, rounds: INSPECTOR_ROUNDS, log });
    if (inspector.skipped) log(`  skipped: ${inspector.skipped}`);
    const report = new Report();
    addInspectorFigures(report, inspector);
    log(`\n${report.table()}`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

async function searchOnly() {
  log(`Webhook Lab benchmark, search only — ${new Date().toISOString()}; ${cpus().length} cores, Node ${process.version}; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}; engine: ${revision()}`);
  const tmp = mkdtempSync(join(tmpdir(), 'webhook-lab-bench-'));
  try {
    const report = new Report();
    addSearchFigures(report, await searchSection(tmp));
    log(`\n${report.table()}`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** 8. Mock receivers vs @mockoon/cli and mockttp (issue 15); `node bench/run.mjs receivers` runs it alone. */
async function receiversSection(tmp) {
  log(`\n8. mock receivers side by side (issue 15): the same fixed 200 from each server (each its own child process); ${RECEIVERS_ROUNDS} rounds, each server in turn: ${CONNECTIONS} connections × ${DURATION_S} s, then ${RECEIVERS_RATE} req/s for ${LATENCY_MS / 1000} s; medians`);
  return compareReceivers({ root: ROOT, tmp, phase, log, connections: CONNECTIONS, durationS: DURATION_S, rate: RECEIVERS_RATE, rateMs: LATENCY_MS, rounds: RECEIVERS_ROUNDS });
}

async function receiversOnly() {
  log(`Webhook Lab benchmark, mock receivers only — ${new Date().toISOString()}; ${cpus().length} cores, Node ${process.version}; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}; engine: ${revision()}`);
  const tmp = mkdtempSync(join(tmpdir(), 'webhook-lab-bench-'));
  try {
    const report = new Report();
    addReceiverFigures(report, await receiversSection(tmp), RECEIVERS_RATE);
    log(`\n${report.table()}`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** `node bench/run.mjs plans`: batch ingestion with a 50-rule tracking plan against none, alone (issue 24). */
async function plansOnly() {
  log(`Webhook Lab benchmark, tracking plans only — ${new Date().toISOString()}; ${cpus().length} cores, Node ${process.version}; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}; engine: ${revision()}`);
  const tmp = mkdtempSync(join(tmpdir(), 'webhook-lab-bench-'));
  try {
    const report = new Report();
    addPlanFigures(report, await measurePlans({ root: ROOT, tmp, phase, log, connections: BATCH_CONNECTIONS, durationS: Math.min(5, DURATION_S), nodeFlags: ENGINE_FLAGS }));
    log(`\n${report.table()}`);
    log(`\nother programs used up to ${noisiest.toFixed(2)} CPU cores during a phase`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** `node bench/run.mjs hostile`: the health answer beside hostile tracking plans, against a flood alone (issue 38). */
async function hostileOnly() {
  log(`Webhook Lab benchmark, hostile tracking plans only — ${new Date().toISOString()}; ${cpus().length} cores, Node ${process.version}; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}; engine: ${revision()}`);
  const tmp = mkdtempSync(join(tmpdir(), 'webhook-lab-bench-'));
  try {
    const report = new Report();
    addHostileFigures(report, await measureHostile({ root: ROOT, tmp, phase, log, seconds: HOSTILE_S, nodeFlags: ENGINE_FLAGS }), fmt);
    log(`\n${report.table()}`);
    log(`\nother programs used up to ${noisiest.toFixed(2)} CPU cores during a phase`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** `node bench/run.mjs imports`: a config of 10,000 sources and a 2,000-rule plan imported, health asked meanwhile (issue 38). */
async function importsOnly() {
  log(`Webhook Lab benchmark, imports only — ${new Date().toISOString()}; ${cpus().length} cores, Node ${process.version}; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}; engine: ${revision()}`);
  const tmp = mkdtempSync(join(tmpdir(), 'webhook-lab-bench-'));
  try {
    const report = new Report();
    addImportFigures(report, await measureImports({ root: ROOT, tmp, log, nodeFlags: ENGINE_FLAGS }), fmt);
    if (process.argv[3] !== 'only') await measureChores({ root: ROOT, tmp, log, nodeFlags: ENGINE_FLAGS });
    addSliceFigures(report);
    log(`\n${report.table()}`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** The 1,000-rule restart as a row: its median first page against the same starts without the plan, and the workers' compiles. */
function addPlannedRestartFigure(report, r) {
  const p = r.planned;
  report.add({
    figure: `first page of 100, 1,000-rule plan connected (${p.samples} starts; check-worker compiles per start ${p.compiles.join('/')})`, value: p.median, show: fmt.ms,
    baselineName: 'same starts, no plan', baseline: r.median, target: { text: '< 1 s', pass: (v) => v < 1000 },
  });
}

async function neighboursOnly() {
  log(`Webhook Lab benchmark, noisy neighbour only — ${new Date().toISOString()}; ${cpus().length} cores, Node ${process.version}; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}; engine: ${revision()}`);
  const tmp = mkdtempSync(join(tmpdir(), 'webhook-lab-bench-'));
  try {
    const report = new Report();
    addNeighbourFigures(report, await measureNeighbours({ root: ROOT, tmp, seconds: NEIGHBOURS_S, phase, log }), fmt);
    log(`\n${report.table()}`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Enqueue rate (flushAt huge: nothing is sent while enqueueing), then close() sends it all. */
/** Enqueue and flush through our client, in a child process of its own (bench/enqueue-child.mjs). */
async function clientEnqueue(engine, onChild) {
  const { child, lines } = await spawnNode([join(ROOT, 'bench/enqueue-child.mjs'), String(ENQUEUE_N), engine.collector, 'wk_client'], { wait: ['{'], nodeFlags: ['--expose-gc'], timeoutMs: 180_000 });
  await exited(child);
  const r = JSON.parse(`{${lines['{']}`);
  onChild(r.cpuSeconds);
  return { ...r, summary: `enqueue ${fmt.int(r.enqueuePerSecond)} msgs/s median of 5 slices, ${fmt.int(r.enqueueWholePerSecond)} over the whole loop (baseline ${fmt.int(r.barePerSecond)}); flush ${fmt.int(ENQUEUE_N)} in ${r.batches} batches at ${fmt.int(r.flushPerSecond)} msgs/s; end to end ${fmt.int(r.e2ePerSecond)} msgs/s, ${fmt.int(r.sent)} accepted` };
}

/** After the engine's shutdown checkpoint: file size, bytes per call, and every 2xx id present. */
function inspectDatabase(dataDir, { collectorId, ackSingle, ackBatch, batchBuilt }) {
  const file = join(dataDir, 'webhook-lab.db');
  const fileBytes = statSync(file).size + (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0);
  const Database = require('better-sqlite3');
  const db = new Database(file, { readonly: true });
  try {
    const calls = db.prepare('SELECT COUNT(*) AS n FROM calls').get().n;
    const foundSingle = new Set();
    const foundBatch = new Uint8Array(batchBuilt);
    for (const [id] of db.prepare("SELECT message_id FROM calls WHERE source_key = (SELECT key FROM source_keys WHERE source_id = ?) AND status = 'accepted'").raw().iterate(collectorId)) {
      if (id.startsWith('s-')) foundSingle.add(Number(id.slice(2)));
      else if (id.startsWith('b-')) foundBatch[Number(id.slice(2, id.indexOf('-', 2)))]++;
    }
    let missingSingle = 0;
    for (const n of ackSingle) if (!foundSingle.has(n)) missingSingle++;
    let missingBatch = 0;
    for (const n of ackBatch) missingBatch += BATCH_SIZE - foundBatch[n];
    let breakdown = null;
    try {
      const rows = db.prepare('SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC LIMIT 6').all();
      breakdown = rows.map((r) => `${r.name} ${fmt.mb(r.bytes)}`).join(', ');
    } catch {
      // dbstat not compiled in: the total is still right.
    }
    return { fileBytes, calls, bytesPerCall: fileBytes / calls, missingSingle, missingBatch, breakdown };
  } finally {
    db.close();
  }
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err.stack ?? err}\n`);
  process.exit(1);
});
