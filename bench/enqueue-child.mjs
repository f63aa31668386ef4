// The batching client's enqueue rate and its flush to the collector, in a fresh process of its own:
//   node --expose-gc bench/enqueue-child.mjs N ENDPOINT WRITE_KEY
// A fresh process, so the figure is the client's and not the bench's: the bench process holds the
// load generator's and the receiver's bookkeeping (hundreds of thousands of entries), and a bigger
// heap makes every collection there dearer, for the naive baseline and the client alike.
// Prints one JSON line.
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';

const [nArg, endpoint, writeKey] = process.argv.slice(2);
const N = Number(nArg);
const require = createRequire(import.meta.url);
const { Analytics } = require('../out/main/client.js');
const gc = () => globalThis.gc?.();

const message = {
  userId: 'user-4c1f0a9e',
  event: 'Order Completed',
  properties: { orderId: 'ord-20261121-0042', revenue: 42.5, currency: 'USD', products: [{ sku: 'sku-1337', name: 'Lab Widget', price: 21.25, quantity: 2 }] },
  context: { ip: '203.0.113.7' },
};
const quiet = { send: async () => ({ status: 200, body: '{"success":true}' }) };
const options = { flushAt: 1_000_000_000, flushAfter: 3_600_000, maxQueueSize: N };

// Timed in 5 slices; the median slice rate is reported, so one GC pause or a neighbour's burst
// does not decide the figure (the whole loop's rate is printed next to it).
const SLICES = 5;
const sliced = (n, enqueueOne) => {
  const per = Math.floor(n / SLICES);
  const rates = [];
  for (let s = 0; s < SLICES; s++) {
    const t = performance.now();
    for (let i = 0; i < per; i++) enqueueOne();
    rates.push(per / ((performance.now() - t) / 1000));
  }
  return rates.sort((a, b) => a - b)[Math.floor(SLICES / 2)];
};
// Baseline: the least any client must do per call: stamp it, serialize it, queue it.
const bareQueue = [];
const bareOne = () => bareQueue.push(JSON.stringify({ ...message, type: 'track', messageId: randomUUID(), timestamp: new Date().toISOString() }));
sliced(N, bareOne); // warm-up (JIT)
bareQueue.length = 0;
gc();
const barePerSecond = sliced(N, bareOne);
bareQueue.length = 0;

const warm = new Analytics(writeKey, { ...options, transport: quiet });
for (let i = 0; i < N; i++) warm.track(message); // warm-up (JIT), as long as the measured loop
await warm.close();
gc();

const client = new Analytics(writeKey, { ...options, endpoint });
const t0 = performance.now();
const enqueuePerSecond = sliced(N, () => client.track(message));
const t1 = performance.now();
const result = await client.close();
const t2 = performance.now();
process.stdout.write(
  `${JSON.stringify({
    barePerSecond,
    enqueuePerSecond,
    enqueueWholePerSecond: N / ((t1 - t0) / 1000),
    flushPerSecond: N / ((t2 - t1) / 1000),
    e2ePerSecond: N / ((t2 - t0) / 1000),
    sent: result.sent,
    batches: result.batches.length,
    cpuSeconds: (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
  })}\n`,
);
