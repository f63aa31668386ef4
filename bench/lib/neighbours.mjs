// Noisy neighbour (issue 22): a healthy source at 1 call/s beside a source at 100 calls/s whose
// second URL never answers. Its delivery latency (call sent → its receiver has it) is compared with
// the same run where that URL answers at once, each run with an engine of its own; the engine's
// peak RSS is sampled during the hanging run.
import { createServer } from 'node:http';
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { startEngine } from './engine.mjs';
import { constantRate, percentile } from './load.mjs';
import { currentRss } from './proc.mjs';

const NOISY_RATE = 100;
const QUIET_RATE = 1;

/** A receiver that records when each messageId first arrived; `hang` paths are never answered. */
async function startRecorder() {
  const arrivals = new Map();
  const hung = new Set();
  let hangs = 0;
  const server = createServer((req, res) => {
    if (req.url.startsWith('/hang')) {
      hangs++;
      hung.add(res);
      res.on('close', () => hung.delete(res));
      req.resume();
      return;
    }
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      const id = JSON.parse(Buffer.concat(chunks).toString('utf8')).messageId;
      if (!arrivals.has(id)) arrivals.set(id, at);
      res.writeHead(200, { 'content-length': 2 }).end('ok');
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${server.address().port}`,
    arrivals,
    hangs: () => hangs,
    close: () => {
      for (const res of hung) res.destroy();
      server.closeAllConnections();
      server.close();
    },
  };
}

const source = (name, writeKey, urls) => ({ name, writeKey, webhooks: { enabled: true, urls: urls.map((url) => ({ url, headers: {} })) } });
const auth = (key) => ({ 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` });

async function run({ root, tmp, hang, seconds, phase }) {
  const rec = await startRecorder();
  const dir = join(tmp, `neighbours-${hang ? 'hang' : 'calm'}`);
  mkdirSync(dir, { recursive: true });
  const second = hang ? `${rec.base}/hang` : `${rec.base}/a2`;
  const engine = await startEngine({
    root,
    dataDir: join(dir, 'data'),
    config: { sources: [source('noisy', 'wk_noisy', [`${rec.base}/a1`, second]), source('quiet', 'wk_quiet', [`${rec.base}/b`])] },
  });
  let peak = 0;
  const sampler = setInterval(() => {
    try {
      peak = Math.max(peak, currentRss(engine.pid));
    } catch {
      // exited
    }
  }, 100);
  const sentAt = new Map();
  const durationMs = seconds * 1000;
  try {
    const out = await phase(`noisy neighbour, ${hang ? 'one URL hanging' : 'no hang'}`, { engine: engine.pid }, async () => {
      const origin = new URL(engine.collector).origin;
      const [noisy, quiet] = await Promise.all([
        constantRate({ origin, path: '/v1/track', headers: auth('wk_noisy'), rate: NOISY_RATE, durationMs, makeBody: (n) => JSON.stringify({ userId: 'n', event: 'Noisy', messageId: `n-${n}` }) }),
        constantRate({
          origin, path: '/v1/track', headers: auth('wk_quiet'), rate: QUIET_RATE, durationMs, connections: 2,
          makeBody: (n) => {
            sentAt.set(`q-${n}`, performance.now());
            return JSON.stringify({ userId: 'q', event: 'Quiet', messageId: `q-${n}` });
          },
        }),
      ]);
      // Every quiet call is given 3 s after the end to arrive.
      const until = performance.now() + 3000;
      while (performance.now() < until && [...sentAt.keys()].some((id) => !rec.arrivals.has(id))) await new Promise((r) => setTimeout(r, 50));
      const arrived = [...sentAt.keys()].filter((id) => rec.arrivals.has(id)).length;
      return { noisy, quiet, summary: `noisy ${noisy.ok} accepted, quiet ${arrived}/${sentAt.size} delivered` };
    });
    const latencies = [...sentAt].filter(([id]) => rec.arrivals.has(id)).map(([id, t0]) => rec.arrivals.get(id) - t0);
    return {
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      sent: sentAt.size,
      undelivered: sentAt.size - latencies.length,
      noisyAccepted: out.noisy.ok,
      hangs: rec.hangs(),
      peakRss: peak,
      others: out.others,
      health: await engine.health(),
    };
  } finally {
    clearInterval(sampler);
    await engine.stop().catch(() => engine.kill());
    rec.close();
  }
}

export async function measureNeighbours({ root, tmp, seconds, phase, log }) {
  log(`\n9. noisy neighbour (issue 22): source "quiet" at ${QUIET_RATE} call/s beside source "noisy" at ${NOISY_RATE} calls/s with two URLs, for ${seconds} s each run; latency = call sent → its receiver has it`);
  const calm = await run({ root, tmp, hang: false, seconds, phase });
  log(`  no hang: quiet p50 ${calm.p50.toFixed(2)} ms, p99 ${calm.p99.toFixed(2)} ms, ${calm.undelivered}/${calm.sent} undelivered 3 s after the end; peak RSS ${(calm.peakRss / 1048576).toFixed(1)} MB`);
  const hang = await run({ root, tmp, hang: true, seconds, phase });
  log(`  one URL of "noisy" hanging: quiet p50 ${hang.p50.toFixed(2)} ms, p99 ${hang.p99.toFixed(2)} ms, ${hang.undelivered}/${hang.sent} undelivered 3 s after the end; requests to the hanging URL ${hang.hangs}; peak RSS ${(hang.peakRss / 1048576).toFixed(1)} MB; at the end ${hang.health.pendingDeliveries} unfinished, ${hang.health.parkedDeliveries} parked`);
  return { calm, hang };
}

export function addNeighbourFigures(report, n, fmt) {
  report.add({
    figure: `quiet source p99 beside a hanging neighbour (${n.hang.sent} calls)`, value: n.hang.p99, show: fmt.ms,
    baselineName: 'same run, no hang', baseline: n.calm.p99, noise: [n.hang, n.calm],
    target: { text: 'ratio ≤ 2×, < 2 s', pass: (v, r) => r <= 2 && v < 2000 },
  });
  report.check({
    figure: 'quiet source delivered within 3 s (hanging neighbour)', ok: n.hang.undelivered === 0,
    detail: `${n.hang.sent - n.hang.undelivered}/${n.hang.sent} delivered`, target: 'all',
  });
  report.add({
    figure: 'engine peak RSS beside a hanging neighbour', value: n.hang.peakRss, show: fmt.mb,
    baselineName: 'same run, no hang', baseline: n.calm.peakRss,
    target: { text: '< 300 MB', pass: (v) => v < 300 * 1048576 },
  });
}
