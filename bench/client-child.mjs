// One side of the client comparison, in its own process so its peak RSS is its own:
//   node bench/client-child.mjs ours|segment N ENDPOINT WRITE_KEY FLUSH_AT
// Sends N identical track calls, waits until the collector answered all of them, prints one JSON line.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';

const [which, nArg, endpoint, writeKey, flushAtArg] = process.argv.slice(2);
const n = Number(nArg);
const flushAt = Number(flushAtArg);
const require = createRequire(import.meta.url);

const message = {
  userId: 'user-4c1f0a9e',
  event: 'Order Completed',
  properties: { orderId: 'ord-20261121-0042', revenue: 42.5, currency: 'USD', products: [{ sku: 'sku-1337', name: 'Lab Widget', price: 21.25, quantity: 2 }] },
  context: { ip: '203.0.113.7' },
};

const peakRss = () => Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;

let errors = 0;
let sent = n;
let enqueueMs;
const t0 = performance.now();
if (which === 'ours') {
  const { Analytics } = require('../out/main/client.js');
  const client = new Analytics(writeKey, { endpoint, flushAt, flushAfter: 10_000, maxQueueSize: n });
  client.on('error', () => errors++);
  for (let i = 0; i < n; i++) client.track(message);
  enqueueMs = performance.now() - t0;
  const result = await client.close();
  sent = result.sent;
} else {
  const { Analytics } = require('@segment/analytics-node');
  const client = new Analytics({ writeKey, host: endpoint, flushAt, flushInterval: 10_000, maxRetries: 10 });
  client.on('error', () => errors++);
  for (let i = 0; i < n; i++) client.track(message);
  enqueueMs = performance.now() - t0;
  await client.closeAndFlush({ timeout: 120_000 });
  sent = n - errors;
}
const totalMs = performance.now() - t0;
process.stdout.write(`${JSON.stringify({ which, n, sent, errors, enqueueMs, totalMs, perSecond: n / (totalMs / 1000), peakRss: peakRss(), cpuSeconds: (process.cpuUsage().user + process.cpuUsage().system) / 1e6 })}\n`);
