// The local webhook receiver of the end-to-end figures. It lives in the bench process so its
// arrival times share one monotonic clock with the generator's response times.
import { createServer } from 'node:http';
import { createHmac, timingSafeEqual } from 'node:crypto';

export async function startReceiver({ secret }) {
  const stats = { arrivals: 0, badSignatures: 0, firstAt: null, lastAt: null };
  /** messageId → performance.now() of arrival, while recording is on. */
  const arrivals = new Map();
  let recording = false;

  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      stats.arrivals++;
      stats.firstAt ??= at;
      stats.lastAt = at;
      // Every delivery is checked, so "with signing" is proven, not assumed.
      const expected = createHmac('sha1', secret).update(body).digest();
      const got = Buffer.from(String(req.headers['x-signature'] ?? ''), 'hex');
      if (got.length !== expected.length || !timingSafeEqual(got, expected)) stats.badSignatures++;
      if (recording) {
        const id = JSON.parse(body.toString('utf8')).messageId;
        if (!arrivals.has(id)) arrivals.set(id, at);
      }
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 2 });
      res.end('ok');
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/hook`;

  return {
    url,
    stats,
    arrivals,
    record(on) {
      recording = on;
    },
    /** Resolves with the time the arrivals count reached `n`, or null after timeoutMs. */
    async waitFor(n, timeoutMs) {
      const end = performance.now() + timeoutMs;
      while (stats.arrivals < n) {
        if (performance.now() > end) return null;
        await new Promise((r) => setTimeout(r, 20));
      }
      return stats.lastAt;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
