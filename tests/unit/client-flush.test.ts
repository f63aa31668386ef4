import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Analytics, ManualClock, MemoryPersistence, systemClock, type AnalyticsOptions, type Clock } from '../../src/main/engine/client';
import type { ClientState } from '../../src/shared/api.contract';

// A real collector stand-in on loopback: records every request; `hold` keeps answers back until released.
interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  json: { batch: Record<string, unknown>[]; [k: string]: unknown };
}

/** `statusOf`: the status to answer a request's body with (default 200). */
async function startCollector(statusOf: (json: Received['json']) => number = () => 200) {
  const received: Received[] = [];
  let held: (() => void)[] | null = null;
  let inFlight = 0;
  let maxInFlight = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const json = JSON.parse(body) as Received['json'];
      received.push({ headers: req.headers, body, json });
      const answer = () => {
        inFlight--;
        const status = statusOf(json);
        res.writeHead(status, { 'content-type': 'application/json' }).end(status === 200 ? '{"success":true}' : '{"success":false}');
      };
      if (held) held.push(answer);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    received,
    get maxInFlight() {
      return maxInFlight;
    },
    hold() {
      held = [];
    },
    release() {
      const answers = held ?? [];
      held = null;
      for (const a of answers) a();
    },
    async waitForRequests(n: number) {
      for (let i = 0; i < 500 && received.length < n; i++) await new Promise((r) => setTimeout(r, 10));
      expect(received.length).toBe(n);
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

type Collector = Awaited<ReturnType<typeof startCollector>>;
let collector: Collector;
const clients: Analytics[] = [];

function client(options: AnalyticsOptions = {}) {
  const a = new Analytics('wk_flush', { endpoint: collector.endpoint, env: {}, ...options });
  clients.push(a);
  return a;
}

// Only before a NEGATIVE check ("nothing was sent"): no event marks a request that is never made,
// so a short real-time wait gives a wrongly started one time to reach the collector. A positive
// check waits for its event instead (waitForRequests, the 'flush' event).
const settle = () => new Promise((r) => setTimeout(r, 50));
const events = (r: Received) => r.json.batch.map((m) => m.event);

afterEach(async () => {
  collector?.release();
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await collector?.close();
});

describe('flush triggers', () => {
  it('flushes in the background when flushAt messages are queued', async () => {
    collector = await startCollector();
    const clock = new ManualClock();
    const a = client({ flushAt: 3, clock });
    const flushed = new Promise((resolve) => a.once('flush', resolve));
    a.track({ userId: 'u1', event: 'E0' });
    a.track({ userId: 'u1', event: 'E1' });
    await settle();
    expect(collector.received).toHaveLength(0);
    a.track({ userId: 'u1', event: 'E2' });
    await expect(flushed).resolves.toMatchObject({ count: 3, status: 200, ok: true, trigger: 'count' });
    expect(events(collector.received[0])).toEqual(['E0', 'E1', 'E2']);
    expect(a.stats()).toMatchObject({ queued: 0, queuedBytes: 0, batchesSent: 1, messagesSent: 3, nextFlushAt: null });
  });

  it('flushes when flushAfter ms have passed since the last flush (injected clock)', async () => {
    collector = await startCollector();
    const clock = new ManualClock(Date.UTC(2024, 0, 1));
    const a = client({ flushAt: 100, flushAfter: 5000, clock });
    a.track({ userId: 'u1', event: 'E0' });
    expect(a.stats().nextFlushAt).toBe('2024-01-01T00:00:05.000Z');
    clock.advance(4999);
    await settle();
    expect(collector.received).toHaveLength(0);
    const flushed = new Promise((resolve) => a.once('flush', resolve));
    clock.advance(1);
    await expect(flushed).resolves.toMatchObject({ count: 1, trigger: 'timer' });
    expect(a.stats().lastFlushAt).toBe('2024-01-01T00:00:05.000Z');

    // The next interval counts from that flush: a message at +7 s is due at +10 s.
    clock.advance(2000);
    a.track({ userId: 'u1', event: 'E1' });
    expect(a.stats().nextFlushAt).toBe('2024-01-01T00:00:10.000Z');
    clock.advance(2999);
    await settle();
    expect(collector.received).toHaveLength(1);
    clock.advance(1);
    await collector.waitForRequests(2);
    expect(events(collector.received[1])).toEqual(['E1']);
  });

  it('does not arm a timer while nothing is queued', async () => {
    collector = await startCollector();
    const clock = new ManualClock();
    const a = client({ clock });
    expect(clock.pendingTimers).toBe(0);
    a.track({ userId: 'u1', event: 'E0' });
    expect(clock.pendingTimers).toBe(1);
    await a.flush();
    expect(clock.pendingTimers).toBe(0);
    expect(a.stats().nextFlushAt).toBeNull();
  });

  it('never lets the flush timer keep the process alive', async () => {
    collector = await startCollector();
    const handles: NodeJS.Timeout[] = [];
    const recording: Clock = { ...systemClock, setTimeout: (fn, ms) => handles[handles.push(setTimeout(fn, ms)) - 1] };
    const a = client({ clock: recording, flushAfter: 60_000 });
    a.track({ userId: 'u1', event: 'E0' });
    expect(handles).toHaveLength(1);
    expect(handles[0].hasRef()).toBe(false);
  });

  it('flush() sends everything now and resolves with the batch results', async () => {
    collector = await startCollector();
    const a = client({ flushAt: 2, clock: new ManualClock(), concurrency: 1 });
    const empty = await a.flush();
    expect(empty).toEqual({ sent: 0, dropped: 0, batches: [], errors: [] });
    // flushAt is also the batch size (Go v2 semantics): 2 are sent at once, 3 wait for flush().
    for (let i = 0; i < 5; i++) a.track({ userId: 'u1', event: `E${i}` });
    const result = await a.flush();
    expect(result.sent).toBe(5);
    expect(result.dropped).toBe(0);
    expect(result.errors).toEqual([]);
    expect(result.batches.map((b) => [b.count, b.status, b.ok])).toEqual([[2, 200, true], [2, 200, true], [1, 200, true]]);
    expect(collector.received.map(events)).toEqual([['E0', 'E1'], ['E2', 'E3'], ['E4']]);
    // E2 and E3 made a flush of their own (flushAt), so the last flush to finish is flush()'s: E4.
    expect(a.stats().lastFlushResult).toBe('1 sent in 1 batch (HTTP 200)');
  });

  it('close() flushes everything, then refuses new calls', async () => {
    collector = await startCollector();
    const a = client({ flushAt: 50, clock: new ManualClock() });
    for (let i = 0; i < 7; i++) a.track({ userId: 'u1', event: `E${i}` });
    const closing = a.close();
    expect(a.close()).toBe(closing);
    expect(() => a.track({ userId: 'u1', event: 'late' })).toThrow(/closed/);
    const result = await closing;
    expect(result.sent).toBe(7);
    expect(collector.received.flatMap(events)).toEqual(['E0', 'E1', 'E2', 'E3', 'E4', 'E5', 'E6']);
    expect(a.stats()).toMatchObject({ queued: 0, closed: true });
  });
});

/**
 * One request held out, then `queued` more, flushed while answers are held: at most `atOnce` of them
 * reach the collector together, and all are sent once released.
 */
async function expectAtOnce(b: Analytics, queued: number, atOnce: number): Promise<void> {
  collector.hold();
  b.track({ userId: 'u1', event: 'first' });
  await collector.waitForRequests(1);
  for (let i = 0; i < queued; i++) b.track({ userId: 'u1', event: `E${i}` });
  const done = b.flush();
  collector.release();
  collector.hold();
  await collector.waitForRequests(1 + atOnce);
  expect(collector.maxInFlight).toBe(atOnce);
  collector.release();
  expect((await done).sent).toBe(1 + queued);
}

describe('flushes share `concurrency` request slots', () => {
  it('a flush started while another is out waits for a slot, in order, and flush() covers both', async () => {
    collector = await startCollector();
    const a = client({ flushAt: 2, clock: new ManualClock(), concurrency: 1 });
    collector.hold();
    a.track({ userId: 'u1', event: 'E0' });
    a.track({ userId: 'u1', event: 'E1' });
    await collector.waitForRequests(1);
    a.track({ userId: 'u1', event: 'E2' });
    a.track({ userId: 'u1', event: 'E3' });
    a.track({ userId: 'u1', event: 'E4' });
    // E2, E3 were taken by a count flush of their own (in flight, waiting for the one slot); E4 waits to be flushed.
    expect(a.stats()).toMatchObject({ queued: 5, inFlight: 4 });
    const flushing = a.flush();
    await settle();
    expect(collector.received).toHaveLength(1);
    collector.release();
    const result = await flushing;
    expect(result.sent).toBe(5);
    expect(result.batches.map((b) => b.count)).toEqual([2, 2, 1]);
    expect(collector.received.map(events)).toEqual([['E0', 'E1'], ['E2', 'E3'], ['E4']]);
    expect(collector.maxInFlight).toBe(1);
  });

  it('starts the next count-triggered flush as soon as the previous one settles', async () => {
    collector = await startCollector();
    const a = client({ flushAt: 2, clock: new ManualClock(), concurrency: 1 });
    collector.hold();
    for (let i = 0; i < 4; i++) a.track({ userId: 'u1', event: `E${i}` });
    await collector.waitForRequests(1);
    await settle();
    expect(collector.received).toHaveLength(1);
    collector.release();
    await collector.waitForRequests(2);
    expect(collector.received.map(events)).toEqual([['E0', 'E1'], ['E2', 'E3']]);
  });

  it('a batch being retried does not hold back the flushes after it (Go v2 sends each batch on its own goroutine)', async () => {
    // Found by review: one flush at a time made every later message wait out the failing batch's
    // retries (up to ~43 s with the defaults). A ManualClock keeps 'bad' in its backoff meanwhile.
    collector = await startCollector((json) => (json.batch.some((m) => m.event === 'bad') ? 500 : 200));
    const clock = new ManualClock();
    const a = client({ flushAt: 1, clock, concurrency: 4, maxRetries: 1 });
    a.track({ userId: 'u1', event: 'bad' });
    await collector.waitForRequests(1);
    for (let i = 0; i < 3; i++) a.track({ userId: 'u1', event: `E${i}` });
    await collector.waitForRequests(4);
    expect(collector.received.map(events)).toEqual([['bad'], ['E0'], ['E1'], ['E2']]);
    await vi.waitFor(() => expect(a.stats()).toMatchObject({ messagesSent: 3, inFlight: 1 }), { timeout: 5000 });
    const dropped = new Promise((resolve) => a.once('drop', resolve));
    clock.advance(60_000);
    await expect(dropped).resolves.toMatchObject({ count: 1, status: 500 });
  });

  it('sends the batches of one flush with up to `concurrency` requests at once', async () => {
    collector = await startCollector();
    const b = client({ flushAt: 1, flushAfter: 60_000, clock: new ManualClock(), concurrency: 3 });
    await expectAtOnce(b, 6, 3);
  });
});

describe('concurrency raised by configure()', () => {
  // The default transport's sockets must follow: a request waiting for one ran down its httpTimeout
  // there, then was retried (a duplicate when it had been sent) or dropped as timed out.
  it('sends that many requests at once, none waiting for a socket', async () => {
    collector = await startCollector();
    const b = client({ flushAt: 1, flushAfter: 60_000, clock: new ManualClock(), httpTimeout: 5000 });
    b.configure({ concurrency: 8 });
    await expectAtOnce(b, 8, 8);
  });
});

describe('persistence seam', () => {
  it('adds at enqueue, sends loaded messages first, and removes them once accepted', async () => {
    collector = await startCollector();
    const persistence = new MemoryPersistence();
    // A first run queues three messages and "crashes" before any flush.
    const first = new Analytics('wk_flush', { endpoint: collector.endpoint, clock: new ManualClock(), persistence, flushAt: 100 });
    for (let i = 0; i < 3; i++) first.track({ userId: 'u1', event: `old${i}` });
    expect(persistence.size).toBe(3);

    const second = client({ persistence, flushAt: 100, clock: new ManualClock() });
    expect(second.stats().queued).toBe(3);
    second.track({ userId: 'u1', event: 'new' });
    expect(persistence.size).toBe(4);
    const flushed = new Promise((resolve) => second.once('flush', resolve));
    await expect(flushed).resolves.toMatchObject({ trigger: 'load', count: 4, ok: true });
    expect(events(collector.received[0])).toEqual(['old0', 'old1', 'old2', 'new']);
    expect(persistence.size).toBe(0);
    expect(second.stats().queued).toBe(0);
  });

  it('a loaded record that is not a JSON object, or is over 32 KB, is not sent: it would sink its whole batch', async () => {
    collector = await startCollector();
    const persistence = new MemoryPersistence();
    const first = new Analytics('wk_flush', { endpoint: collector.endpoint, clock: new ManualClock(), persistence, flushAt: 100 });
    first.track({ userId: 'u1', event: 'good' });
    const record = (id: string, json: string) => ({ id, messageId: id, type: 'track', json, bytes: Buffer.byteLength(json), enqueuedAt: 0 });
    const huge = JSON.stringify({ type: 'track', userId: 'u1', event: 'huge', messageId: 'huge', properties: { s: 'x'.repeat(40_000) } });
    persistence.add([record('torn', '{"type":"track","userId":"u1","ev'), record('array', '[1]'), record('huge', huge)]);

    const second = client({ persistence, flushAt: 100, clock: new ManualClock() });
    const errors: Error[] = [];
    second.on('error', (e) => errors.push(e));
    expect(second.stats().queued).toBe(1);
    const flushed = new Promise((resolve) => second.once('flush', resolve));
    await expect(flushed).resolves.toMatchObject({ trigger: 'load', count: 1, ok: true });
    expect(events(collector.received[0])).toEqual(['good']);
    expect(persistence.size).toBe(0);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'persistence_failed' });
    expect(errors[0].message).toMatch(/3 restored messages .*torn.*array.*huge/);
  });
});

describe('live settings and state', () => {
  it('configure() moves queued messages to a new endpoint, write key and flushAt', async () => {
    collector = await startCollector();
    const other = await startCollector();
    try {
      const clock = new ManualClock();
      const a = client({ flushAt: 10, clock });
      a.track({ userId: 'u1', event: 'E0' });
      a.track({ userId: 'u1', event: 'E1' });
      a.configure({ endpoint: other.endpoint, writeKey: 'wk_other', flushAt: 2, flushAfter: undefined });
      expect(a.options).toMatchObject({ endpoint: other.endpoint, flushAt: 2, flushAfter: 5000 });
      await other.waitForRequests(1);
      expect(events(other.received[0])).toEqual(['E0', 'E1']);
      expect(other.received[0].headers.authorization).toBe(`Basic ${Buffer.from('wk_other:').toString('base64')}`);
      expect(collector.received).toHaveLength(0);
      expect(() => a.configure({ flushAt: 0 })).toThrow(/flushAt/);
    } finally {
      await Promise.all(clients.splice(0).map((c) => c.close()));
      await other.close();
    }
  });

  it('stats() has what the app shows (ClientState without settings and log)', async () => {
    collector = await startCollector();
    const clock = new ManualClock(Date.UTC(2024, 0, 1));
    const a = client({ flushAt: 100, clock });
    a.track({ userId: 'u1', event: 'E0' });
    const before: Omit<ClientState, 'settings' | 'log'> = a.stats();
    expect(before).toMatchObject({ queued: 1, inFlight: 0, lastFlushAt: null, lastFlushResult: null, nextFlushAt: '2024-01-01T00:00:05.000Z', batchesSent: 0, retries: 0, drops: 0, recentBatches: [] });
    expect(before.queuedBytes).toBeGreaterThan(50);
    await a.flush();
    const after = a.stats();
    expect(after).toMatchObject({ queued: 0, queuedBytes: 0, lastFlushAt: '2024-01-01T00:00:00.000Z', lastFlushResult: '1 sent in 1 batch (HTTP 200)', nextFlushAt: null, batchesSent: 1, messagesSent: 1 });
    expect(after.recentBatches).toEqual([expect.objectContaining({ count: 1, status: 200, ok: true, retries: 0, error: null, at: '2024-01-01T00:00:00.000Z' })]);
  });
});
