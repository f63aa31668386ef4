// Load generators: autocannon for saturation (same connections/duration for the baseline and the
// engine), and a constant-rate undici generator for latency at a fixed offered rate.
import { join } from 'node:path';
import autocannon from 'autocannon';
import { Pool } from 'undici';
import { exited, spawnNode } from './proc.mjs';

/**
 * Saturates `url` for `duration` seconds. Every request gets a fresh body from makeBody(n) (n = 0,
 * 1, ...); onAck(n) runs for each request answered 2xx. With pipelining 1, the context autocannon
 * hands to onResponse is the one of the request that was just answered, so acks map to exact n.
 */
export async function saturate({ url, connections, duration, headers, makeBody, onAck = () => {} }) {
  let built = 0;
  let acked = 0;
  const result = await autocannon({
    url,
    connections,
    duration,
    pipelining: 1,
    method: 'POST',
    headers,
    requests: [
      {
        setupRequest(req, context) {
          context.n = built++;
          return { ...req, body: makeBody(context.n) };
        },
        onResponse(status, _body, context) {
          if (status >= 200 && status < 300) {
            acked++;
            onAck(context.n);
          }
        },
      },
    ],
  });
  return {
    built,
    acked,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    seconds: result.duration,
    perSecond: acked / result.duration,
    latencyP50: result.latency.p50,
    latencyP99: result.latency.p99,
  };
}

/**
 * saturate() in a child process (bench/saturate-child.mjs), with the bodies named by `body`
 * ({kind: 'track' | 'batch', prefix, size}) rather than built by a function. Resolves to saturate's
 * result plus `acks` (the n of every 2xx, when `acks` is set) and the child's `cpuSeconds`.
 */
export async function saturateInChild({ root, url, connections, duration, headers, body, acks = false }) {
  const spec = JSON.stringify({ url, connections, duration, headers, body, acks });
  const { child, lines } = await spawnNode([join(root, 'bench/saturate-child.mjs'), spec], { wait: ['{'], timeoutMs: (duration + 60) * 1000 });
  await exited(child);
  return JSON.parse(`{${lines['{']}`);
}

/**
 * Offers exactly `rate` requests per second for `durationMs` (catching up on late ticks, never
 * bursting ahead), then waits for every response. onResponse(n, status, at) gets the
 * performance.now() at which the response was read.
 */
export async function constantRate({ origin, path, headers, rate, durationMs, makeBody, onResponse = () => {}, connections = 32 }) {
  const pool = new Pool(origin, { connections, keepAliveTimeout: 10_000 });
  const rtts = [];
  const inFlight = new Set();
  let sent = 0;
  let ok = 0;
  let failed = 0;
  const start = performance.now();
  const send = (n) => {
    const t0 = performance.now();
    const p = pool
      .request({ method: 'POST', path, headers, body: makeBody(n) })
      .then(async (res) => {
        await res.body.text();
        const t1 = performance.now();
        if (res.statusCode >= 200 && res.statusCode < 300) ok++;
        else failed++;
        rtts.push(t1 - t0);
        onResponse(n, res.statusCode, t1);
      })
      .catch(() => failed++)
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  };
  await new Promise((resolve) => {
    const tick = setInterval(() => {
      const elapsed = performance.now() - start;
      const due = Math.min(Math.floor((elapsed * rate) / 1000), Math.floor((durationMs * rate) / 1000));
      while (sent < due) send(sent++);
      if (elapsed >= durationMs) {
        clearInterval(tick);
        resolve();
      }
    }, 2);
  });
  const offeredSeconds = (performance.now() - start) / 1000;
  while (inFlight.size > 0) await Promise.all([...inFlight]);
  await pool.close();
  return { sent, ok, failed, offeredPerSecond: sent / offeredSeconds, rtts };
}

export function percentile(values, p) {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
