import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  Analytics,
  backoffDelay,
  classifyStatus,
  DeliveryError,
  LIBRARY_VERSION,
  MemoryPersistence,
  systemClock,
  type AnalyticsOptions,
  type Clock,
  type DropEvent,
  type RetryEvent,
  type Transport,
} from '../../src/main/engine/client';

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

type Answer = number | 'hang';

// A real HTTP server on loopback answering each request with the next scripted status.
async function startCollector(script: Answer[] | ((n: number) => Answer)) {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const n = received.length - 1;
      const answer = typeof script === 'function' ? script(n) : (script[n] ?? 200);
      if (answer === 'hang') return;
      res.writeHead(answer, { 'content-type': 'application/json' });
      res.end(answer < 300 ? '{"success":true}' : `{"success":false,"message":"scripted ${answer}"}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

// Backoff waits go through the injected clock; this one records each wait and skips it.
function fastClock() {
  const waits: number[] = [];
  const clock: Clock = { ...systemClock, setTimeout: (fn, ms) => (waits.push(ms), setTimeout(fn, 0)) };
  return { clock, waits };
}

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function setup(script: Answer[] | ((n: number) => Answer), options: AnalyticsOptions = {}) {
  const collector = await startCollector(script);
  closers.push(collector.close);
  const { clock, waits } = fastClock();
  const persistence = new MemoryPersistence();
  const lines: string[] = [];
  const a = new Analytics('wk_live', {
    endpoint: collector.endpoint,
    clock,
    persistence,
    flushAt: 100,
    env: {},
    logger: { log: (l) => lines.push(l) },
    ...options,
  });
  closers.push(() => a.close());
  const retries: RetryEvent[] = [];
  const drops: DropEvent[] = [];
  const errors: Error[] = [];
  a.on('retry', (e) => retries.push(e)).on('drop', (e) => drops.push(e)).on('error', (e) => errors.push(e));
  return { a, collector, persistence, waits, retries, drops, errors, lines };
}

describe('wire format (SPEC §5)', () => {
  it('POSTs {batch, context.library, messageId, sentAt} to /v1/batch with Basic auth', async () => {
    const { a, collector } = await setup([200]);
    a.identify({ userId: 'u1', traits: { plan: 'pro' } });
    a.track({ anonymousId: 'a1', event: 'Clicked', timestamp: '2015-12-28T23:40:25-0800' });
    a.page({ userId: 'u1', name: 'Home', properties: { path: '/' } });
    a.screen({ userId: 'u1', name: 'Main' });
    a.group({ userId: 'u1', groupId: 'g1' });
    a.alias({ userId: 'u1', previousId: 'a1' });
    const before = Date.now();
    await a.flush();
    expect(collector.received).toHaveLength(1);
    const [req] = collector.received;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/v1/batch');
    expect(req.headers.authorization).toBe(`Basic ${Buffer.from('wk_live:').toString('base64')}`);
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['user-agent']).toBe(`webhook-lab-client/${LIBRARY_VERSION} (node ${process.version})`);
    expect(Number(req.headers['content-length'])).toBe(Buffer.byteLength(req.body));
    const body = JSON.parse(req.body);
    expect(Object.keys(body)).toEqual(['batch', 'context', 'messageId', 'sentAt']);
    expect(body.context).toEqual({ library: { name: 'webhook-lab-client', version: LIBRARY_VERSION } });
    expect(body.messageId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Date.parse(body.sentAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(body.sentAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(body.batch.map((m: { type: string }) => m.type)).toEqual(['identify', 'track', 'page', 'screen', 'group', 'alias']);
    for (const m of body.batch) {
      expect(m.messageId).toMatch(/^[0-9a-f-]{36}$/);
      expect(m.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    expect(body.batch[1]).toMatchObject({ anonymousId: 'a1', event: 'Clicked', timestamp: '2015-12-29T07:40:25.000Z' });
    expect(body.batch[0].traits).toEqual({ plan: 'pro' });
  });

  it('keeps a path prefix of the endpoint', async () => {
    const { collector } = await setup([200]);
    const b = new Analytics('k', { endpoint: `${collector.endpoint}/lab/`, env: {} });
    closers.push(() => b.close());
    b.track({ userId: 'u', event: 'E' });
    await b.flush();
    expect(collector.received[0].url).toBe('/lab/v1/batch');
  });

  it('works over a fetch-based transport too', async () => {
    const { collector } = await setup([200]);
    const b = new Analytics('k', { endpoint: collector.endpoint, fetch: globalThis.fetch, env: {} });
    closers.push(() => b.close());
    b.track({ userId: 'u', event: 'E' });
    const r = await b.flush();
    expect(r.sent).toBe(1);
    expect(JSON.parse(collector.received[0].body).batch[0].event).toBe('E');
  });
});

describe('retries and drops', () => {
  it('retries a 500 once and delivers: same bytes, 100 ms backoff', async () => {
    const { a, collector, waits, retries, drops, persistence } = await setup([500, 200]);
    a.track({ userId: 'u1', event: 'E' });
    const result = await a.flush();
    expect(result).toMatchObject({ sent: 1, dropped: 0, errors: [] });
    expect(result.batches[0]).toMatchObject({ status: 200, ok: true, retries: 1, count: 1 });
    expect(collector.received).toHaveLength(2);
    expect(collector.received[1].body).toBe(collector.received[0].body);
    expect(retries).toEqual([expect.objectContaining({ retry: 1, maxRetries: 10, delayMs: 100, status: 500 })]);
    expect(retries[0].reason).toMatch(/^HTTP 500: .*scripted 500/);
    expect(waits).toContain(100);
    expect(drops).toEqual([]);
    expect(persistence.size).toBe(0);
    expect(a.stats()).toMatchObject({ retries: 1, drops: 0, batchesSent: 1 });
  });

  it('retries 429 and every 5xx', async () => {
    const { a, collector } = await setup([429, 502, 503, 504, 200]);
    a.track({ userId: 'u1', event: 'E' });
    expect((await a.flush()).batches[0]).toMatchObject({ ok: true, retries: 4 });
    expect(collector.received).toHaveLength(5);
  });

  it.each([400, 401, 403, 404, 413, 301])('drops on %i without retrying, with drop and error events', async (status) => {
    const { a, collector, retries, drops, errors, persistence } = await setup([status]);
    const id = a.track({ userId: 'u1', event: 'E' });
    const result = await a.flush();
    expect(collector.received).toHaveLength(1);
    expect(retries).toEqual([]);
    expect(result).toMatchObject({ sent: 0, dropped: 1 });
    expect(result.batches[0]).toMatchObject({ ok: false, status, retries: 0 });
    expect(drops).toEqual([expect.objectContaining({ count: 1, messageIds: [id], status })]);
    expect(drops[0].reason).toMatch(new RegExp(`^HTTP ${status}.*\\(not retried\\)$`));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(DeliveryError);
    expect(errors[0]).toMatchObject({ code: 'delivery_failed', status, count: 1 });
    expect(result.errors).toEqual(errors);
    expect(persistence.size).toBe(0);
    expect(a.stats()).toMatchObject({ drops: 1, batchesDropped: 1, batchesSent: 0, queued: 0 });
  });

  it('drops after maxRetries retries, backing off 100, 200, 400 ms', async () => {
    const { a, collector, retries, drops, persistence } = await setup(() => 503, { maxRetries: 3 });
    a.track({ userId: 'u1', event: 'E' });
    a.track({ userId: 'u1', event: 'F' });
    const result = await a.flush();
    expect(collector.received).toHaveLength(4);
    expect(retries.map((r) => r.delayMs)).toEqual([100, 200, 400]);
    expect(result).toMatchObject({ sent: 0, dropped: 2 });
    expect(drops[0].reason).toMatch(/HTTP 503.*\(gave up after 3 retries\)/);
    expect(persistence.size).toBe(0);
  });

  it('backoff doubles from 100 ms up to a 10 s cap', () => {
    expect(Array.from({ length: 10 }, (_, i) => backoffDelay(i + 1))).toEqual([100, 200, 400, 800, 1600, 3200, 6400, 10_000, 10_000, 10_000]);
  });

  it('classifies statuses', () => {
    expect([200, 201, 204].map(classifyStatus)).toEqual(['ok', 'ok', 'ok']);
    expect([429, 500, 503, 599].map(classifyStatus)).toEqual(['retry', 'retry', 'retry', 'retry']);
    expect([301, 400, 408, 413, 422].map(classifyStatus)).toEqual(['drop', 'drop', 'drop', 'drop', 'drop']);
  });

  it('retries connection errors, then drops with no status', async () => {
    const { collector } = await setup([200]);
    const dead = collector.endpoint;
    await collector.close();
    const { clock } = fastClock();
    const a = new Analytics('k', { endpoint: dead, clock, maxRetries: 2, env: {} });
    closers.push(() => a.close());
    const retries: RetryEvent[] = [];
    a.on('retry', (e) => retries.push(e));
    a.track({ userId: 'u1', event: 'E' });
    const result = await a.flush();
    expect(retries).toHaveLength(2);
    expect(retries[0]).toMatchObject({ status: null });
    expect(retries[0].reason).toMatch(/ECONNREFUSED/);
    expect(result.batches[0]).toMatchObject({ ok: false, status: null, retries: 2 });
  });

  it('times out a request after httpTimeout and retries it', async () => {
    const { a, collector, retries } = await setup(['hang', 200], { httpTimeout: 150 });
    a.track({ userId: 'u1', event: 'E' });
    const started = Date.now();
    const result = await a.flush();
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(retries[0].reason).toBe('ETIMEDOUT: request timed out after 150 ms');
    expect(result).toMatchObject({ sent: 1 });
    expect(collector.received).toHaveLength(2);
  });

  it('survives listeners that throw and errors nobody listens to', async () => {
    const { collector } = await setup([400, 200]);
    const lines: string[] = [];
    const a = new Analytics('k', { endpoint: collector.endpoint, env: {}, logger: { log: (l) => lines.push(l) } });
    closers.push(() => a.close());
    a.on('flush', () => {
      throw new Error('listener bug');
    });
    a.track({ userId: 'u1', event: 'E' });
    expect((await a.flush()).dropped).toBe(1);
    a.track({ userId: 'u1', event: 'F' });
    expect((await a.flush()).sent).toBe(1);
    expect(lines.filter((l) => l.includes('a listener of "flush" threw: Error: listener bug'))).toHaveLength(2);
  });
});

describe('DEBUG logging', () => {
  it('logs each flush, retry and drop when DEBUG includes analytics', async () => {
    const { a, lines } = await setup([500, 200, 400], { env: { DEBUG: 'express,analytics:*' } });
    a.track({ userId: 'u1', event: 'E' });
    a.track({ userId: 'u1', event: 'F' });
    await a.flush();
    a.track({ userId: 'u1', event: 'G' });
    await a.flush();
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^analytics: retry 1\/10 of 2 messages \(\d+ bytes\) in 100 ms after HTTP 500/);
    expect(lines[1]).toMatch(/^analytics: flush 2 messages, \d+ bytes → 200 in \d+ ms \(manual, 1 retries\)$/);
    expect(lines[2]).toMatch(/^analytics: flush 1 messages, \d+ bytes → 400 in \d+ ms \(manual\)$/);
    expect(lines[3]).toMatch(/^analytics: drop 1 messages: HTTP 400: .* \(not retried\)$/);
  });

  it('logs nothing when DEBUG does not include analytics, even with a logger', async () => {
    const { a, lines } = await setup([500, 200, 400], { env: { DEBUG: 'express' } });
    a.track({ userId: 'u1', event: 'E' });
    await a.flush();
    a.track({ userId: 'u1', event: 'G' });
    await a.flush();
    expect(a.stats()).toMatchObject({ retries: 1, drops: 1 });
    expect(lines).toEqual([]);
  });

  it('debug: true forces logging on, debug: false off', async () => {
    const on = await setup([200], { env: {}, debug: true });
    on.a.track({ userId: 'u1', event: 'E' });
    await on.a.flush();
    expect(on.lines).toHaveLength(1);
    const off = await setup([200], { env: { DEBUG: 'analytics' }, debug: false });
    off.a.track({ userId: 'u1', event: 'E' });
    await off.a.flush();
    expect(off.lines).toEqual([]);
  });

  it('writes to stderr by default', async () => {
    const { collector } = await setup([200]);
    const written: string[] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((line: string) => void written.push(line));
    try {
      const a = new Analytics('k', { endpoint: collector.endpoint, env: { DEBUG: 'analytics' } });
      closers.push(() => a.close());
      a.track({ userId: 'u1', event: 'E' });
      await a.flush();
    } finally {
      spy.mockRestore();
    }
    expect(written).toEqual([expect.stringMatching(/^analytics: flush 1 messages, \d+ bytes → 200 in \d+ ms \(manual\)$/)]);
  });
});

// Once the status line has come, the collector has decided: a body that stalls, runs on or breaks
// must neither turn an accepted batch into a retry (a duplicate) nor be read into memory whole.
describe('the answer after its status', () => {
  async function rawCollector(answer: (res: import('node:http').ServerResponse) => void) {
    let requests = 0;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        requests++;
        answer(res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(
      () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    );
    return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => requests };
  }

  const transports: [string, AnalyticsOptions][] = [
    ['undici', {}],
    ['fetch', { fetch: globalThis.fetch }],
  ];

  it.each(transports)('%s: a 200 whose body stalls is accepted, sent once', async (_name, options) => {
    const collector = await rawCollector((res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"succ');
    });
    const a = new Analytics('k', { endpoint: collector.endpoint, env: {}, httpTimeout: 2000, maxRetries: 2, clock: fastClock().clock, ...options });
    closers.push(() => a.close());
    a.track({ userId: 'u1', event: 'E' });
    const result = await a.flush();
    expect(result).toMatchObject({ sent: 1, dropped: 0 });
    expect(result.batches[0]).toMatchObject({ status: 200, ok: true, retries: 0 });
    expect(collector.requests()).toBe(1);
  });

  it.each(transports)('%s: an endless 500 body is read only as far as the error message needs', async (_name, options) => {
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const collector = await rawCollector((res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    const a = new Analytics('k', { endpoint: collector.endpoint, env: {}, httpTimeout: 5000, maxRetries: 0, ...options });
    closers.push(() => a.close());
    // Reading on until httpTimeout would keep the same message: a sentinel at httpTimeout, set before the
    // request's own timer, tells it apart.
    let sentinel: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'httpTimeout'>((r) => (sentinel = setTimeout(() => r('httpTimeout'), 5000)));
    a.track({ userId: 'u1', event: 'E' });
    const result = await Promise.race([a.flush(), timedOut]).finally(() => clearTimeout(sentinel));
    if (result === 'httpTimeout') expect.fail('the body was read until httpTimeout (5000 ms), not only as far as the message needs');
    expect(result.batches[0]).toMatchObject({ status: 500, ok: false });
    expect(result.batches[0].error).toMatch(/^HTTP 500: x{200}… \(gave up after 0 retries\)$/);
  });
});

describe('a transport that rejects with no error object', () => {
  it.each([null, undefined, 'socket gone'])('rejecting with %s is retried like any failed attempt, never stuck in flight', async (reason) => {
    let n = 0;
    const transport: Transport = {
      send: () => (n++ === 0 ? Promise.reject(reason) : Promise.resolve({ status: 200, body: '' })),
    };
    const a = new Analytics('k', { transport, env: {}, clock: fastClock().clock });
    closers.push(() => a.close());
    const retries: RetryEvent[] = [];
    a.on('retry', (e) => retries.push(e));
    a.track({ userId: 'u1', event: 'E' });
    const result = await a.flush();
    expect(result).toMatchObject({ sent: 1, dropped: 0, errors: [] });
    expect(retries).toEqual([expect.objectContaining({ retry: 1, status: null, reason: String(reason) })]);
    expect(a.stats()).toMatchObject({ queued: 0, inFlight: 0 });
  });
});
