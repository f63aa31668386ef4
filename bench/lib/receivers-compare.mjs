// Issue 15: the mock receivers side by side with what QA would otherwise pick, @mockoon/cli and
// mockttp, each serving the same fixed 200 to the same requests, in the same run. Each server runs
// alone in its own child process while it is measured (sequentially, so they never share the CPU).
// Figures only: requests/s at saturation (autocannon in a child) and p99 at a fixed offered rate.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { spawnNode, exited } from './proc.mjs';
import { saturateInChild, constantRate, percentile } from './load.mjs';
import { trackBody } from './bodies.mjs';
import { startEngine } from './engine.mjs';
import { fmt } from './report.mjs';

/** The one answer every server gives. */
export const RECEIVER_BODY = '{"ok":true}';
const json = { 'content-type': 'application/json' };

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function until200(url, timeoutMs = 20_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url, { method: 'POST', headers: json, body: trackBody('warm') });
      if (res.status === 200 && (await res.text()) === RECEIVER_BODY) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > end) throw new Error(`${url} never answered 200 ${RECEIVER_BODY}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Ours: the engine (`webhook-lab serve`) with one mock receiver; it records every request, as by default. */
async function startOurs({ root, tmp }) {
  const dataDir = join(tmp, 'receivers-data');
  mkdirSync(dataDir, { recursive: true });
  const engine = await startEngine({ root, dataDir, config: { mockReceivers: [{ name: 'bench', path: '/hook', behavior: { status: 200, body: RECEIVER_BODY } }] } });
  const [receiver] = await engine.api('/receivers');
  return { name: 'Webhook Lab mock receiver', url: receiver.url, pid: engine.pid, stop: () => engine.stop() };
}

/** @mockoon/cli: an environment of one route, POST /hook → 200; its defaults, except no log file in $HOME. */
async function startMockoon({ root, tmp }) {
  const require = createRequire(join(root, 'package.json'));
  const { BuildEnvironment, BuildHTTPRoute, BuildRouteResponse } = require('@mockoon/commons');
  const version = require('@mockoon/cli/package.json').version;
  const port = await freePort();
  const env = BuildEnvironment({ hasDefaultRoute: false });
  const route = BuildHTTPRoute(false);
  const response = BuildRouteResponse();
  Object.assign(response, { statusCode: 200, body: RECEIVER_BODY, headers: [{ key: 'Content-Type', value: 'application/json' }] });
  Object.assign(route, { method: 'post', endpoint: 'hook', responses: [response] });
  Object.assign(env, { name: 'bench', port, hostname: '127.0.0.1', routes: [route], rootChildren: [{ type: 'route', uuid: route.uuid }] });
  const file = join(tmp, 'mockoon-env.json');
  writeFileSync(file, JSON.stringify(env));
  const { child } = await spawnNode([require.resolve('@mockoon/cli/bin/run.js'), 'start', '--data', file, '--disable-log-to-file'], { wait: ['{'], timeoutMs: 30_000 });
  const url = `http://127.0.0.1:${port}/hook`;
  await until200(url);
  return { name: `@mockoon/cli ${version}`, url, pid: child.pid, stop: () => stopChild(child) };
}

async function startMockttp({ root }) {
  // Not a devDependency: its optional dependency tls-impersonate@^0.2.1 is missing from some npm
  // registries (this project's CI reaches one), and then `npm ci` cannot lock it and refuses to install.
  if (!existsSync(join(root, 'node_modules/mockttp/package.json'))) {
    throw new Error('mockttp is not installed; for this comparison run `npm install --no-save mockttp` first');
  }
  // mockttp's exports map does not include its package.json.
  const version = JSON.parse(readFileSync(join(root, 'node_modules/mockttp/package.json'), 'utf8')).version;
  const { child, lines } = await spawnNode([join(root, 'bench/mockttp-child.mjs'), RECEIVER_BODY], { wait: ['listening: '] });
  const url = `${lines['listening: '].replace('localhost', '127.0.0.1')}/hook`;
  await until200(url);
  return { name: `mockttp ${version}`, url, pid: child.pid, stop: () => stopChild(child) };
}

async function stopChild(child) {
  child.kill('SIGTERM');
  try {
    await exited(child, 10_000);
  } catch {
    child.kill('SIGKILL');
  }
}

const STARTERS = { ours: startOurs, mockoon: startMockoon, mockttp: startMockttp };

/**
 * Starts the three servers (idle ones cost nothing), then measures them in `rounds` rounds, each
 * server once per round in a rotating order, so a machine busier at one moment does not favour one
 * of them; medians are reported. `phase(name, pids, fn)` is run.mjs's (CPU per process, other
 * programs' CPU). Returns { [key]: { name, perSecond, p50, p99, others } }; a server that cannot
 * start is skipped with the reason printed.
 */
export async function compareReceivers({ root, tmp, phase, log, connections, durationS, rate, rateMs, rounds }) {
  const servers = [];
  try {
    for (const [key, start] of Object.entries(STARTERS)) {
      try {
        servers.push({ key, ...(await start({ root, tmp })), runs: [] });
      } catch (err) {
        log(`  ${key}: could not start (${err.message.split('\n')[0]}), skipped`);
      }
    }
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < servers.length; i++) {
        const server = servers[(i + round) % servers.length];
        const tag = `${server.name}, round ${round + 1}`;
        const sat = await phase(`${tag}, saturation`, { server: server.pid }, async () => {
          const r = await saturateInChild({ root, url: server.url, connections, duration: durationS, headers: json, body: { kind: 'track', prefix: `${server.key}-${round}` } });
          r.children = { generator: r.cpuSeconds };
          return { ...r, summary: `${fmt.int(r.perSecond)} req/s, p99 ${r.latencyP99} ms, errors ${r.errors + r.non2xx}` };
        });
        const u = new URL(server.url);
        const fixed = await phase(`${tag}, ${rate} req/s`, { server: server.pid, generator: process.pid }, async () => {
          const r = await constantRate({ origin: u.origin, path: u.pathname, headers: json, rate, durationMs: rateMs, makeBody: (n) => trackBody(`${server.key}-${round}-f-${n}`) });
          const p50 = percentile(r.rtts, 50);
          const p99 = percentile(r.rtts, 99);
          return { ...r, p50, p99, summary: `${fmt.int(r.ok)} of ${fmt.int(r.sent)} answered 2xx, p50 ${fmt.ms(p50)}, p99 ${fmt.ms(p99)}` };
        });
        server.runs.push({ perSecond: sat.perSecond, p50: fixed.p50, p99: fixed.p99, others: Math.max(sat.others, fixed.others) });
      }
    }
  } finally {
    for (const server of servers) await server.stop();
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const results = {};
  for (const { key, name, runs } of servers) {
    if (runs.length === 0) continue;
    results[key] = {
      name,
      perSecond: median(runs.map((r) => r.perSecond)),
      p50: median(runs.map((r) => r.p50)),
      p99: median(runs.map((r) => r.p99)),
      others: Math.max(...runs.map((r) => r.others)),
    };
    log(`  ${name}, median of ${runs.length}: ${fmt.int(results[key].perSecond)} req/s at saturation; at ${rate} req/s p50 ${fmt.ms(results[key].p50)}, p99 ${fmt.ms(results[key].p99)}`);
  }
  return results;
}

/** Rows for run.mjs's report: ours against each of the others (ratio = ours ÷ theirs), never asserted. */
export function addReceiverFigures(report, results, rate) {
  const ours = results.ours;
  if (!ours) return;
  for (const key of ['mockoon', 'mockttp']) {
    const other = results[key];
    if (!other) continue;
    report.add({ figure: `mock receiver req/s at saturation vs ${other.name}`, value: ours.perSecond, baselineName: other.name, baseline: other.perSecond, noise: [ours, other], target: { text: 'ratio ≥ 1 (issue 15)', pass: (_, r) => r >= 1 } });
    report.add({ figure: `mock receiver p99 at ${rate} req/s vs ${other.name}`, value: ours.p99, show: fmt.ms, baselineName: other.name, baseline: other.p99, noise: [ours, other], target: { text: 'ratio ≤ 1 (issue 15)', pass: (_, r) => r <= 1 } });
  }
  if (results.mockoon && results.mockttp) {
    report.add({ figure: 'req/s at saturation: mockttp vs mockoon', value: results.mockttp.perSecond, baselineName: results.mockoon.name, baseline: results.mockoon.perSecond, noise: [results.mockttp, results.mockoon] });
  }
}
