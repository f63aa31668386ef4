import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { HttpSender } from '../../src/main/engine/dispatcher/http-sender';
import { Store } from '../../src/main/engine/store/store';
import { MIGRATIONS } from '../../src/main/engine/store/migrations';
import { registerSearchFunctions } from '../../src/main/engine/store/database';
import type { AttemptTiming } from '../../src/shared/types';
import { closedPort, type TestReceiver } from '../helpers/receiver';
import { selfSignedCert } from '../helpers/tls';
import { waitFor, webhookSource } from '../helpers/engine';
import { openDbFile } from '../helpers/db-file';
import { testLab } from '../helpers/test-lab';

// Per-attempt timing (AttemptTiming): connect, TLS, time to first byte and total, measured by the
// HTTP sender from undici's connector and its sendHeaders diagnostics message.

const body = Buffer.from('{"type":"track","event":"Timed"}');
// The lab's afterEach is registered first, so it runs after this one: senders close before receivers.
const lab = testLab();
const senders: HttpSender[] = [];
afterEach(async () => {
  await Promise.all(senders.splice(0).map((s) => s.close({ force: true })));
});

/** A receiver that waits before its first byte, so time to first byte is visibly apart from connect. */
function slowReceiver(tls?: { key: string; cert: string }): Promise<TestReceiver> {
  const handler = (_req: unknown, res: import('node:http').ServerResponse) => {
    setTimeout(() => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'), 40);
  };
  return tls ? lab.httpsReceiver(tls, handler) : lab.receiver(handler);
}

// One connection per origin: a second request waits for the first one's connection, which is then
// certainly reused (with more, the pool may open another before the first is back in it).
function sender(ca?: string): HttpSender {
  const s = new HttpSender({ ca, connectionsPerOrigin: 1 });
  senders.push(s);
  return s;
}

/** Each measured part within the total, and the parts in the order they happen. */
function expectOrdered(t: AttemptTiming, durationMs: number): void {
  expect(t.ttfbMs).not.toBeNull();
  expect(t.ttfbMs!).toBeGreaterThanOrEqual((t.connectMs ?? 0) + (t.tlsMs ?? 0));
  expect(t.ttfbMs!).toBeLessThanOrEqual(t.totalMs);
  expect(Math.abs(t.totalMs - durationMs)).toBeLessThanOrEqual(0.5);
  // The receiver waits 40 ms before answering.
  expect(t.ttfbMs!).toBeGreaterThanOrEqual(39);
}

describe('HTTP sender: timing split', () => {
  it('http: a new connection has connect time and no TLS; a kept-alive reused one has connect null', async () => {
    const r = await slowReceiver();
    const s = sender();
    const first = await s.send({ url: `${r.url}/t`, headers: { 'content-type': 'application/json' }, body });
    expect(first.status).toBe(200);
    const t1 = first.timing!;
    expect(t1.reused).toBe(false);
    expect(t1.connectMs).not.toBeNull();
    expect(t1.connectMs!).toBeGreaterThanOrEqual(0);
    expect(t1.tlsMs).toBeNull();
    expectOrdered(t1, first.durationMs);

    const second = await s.send({ url: `${r.url}/t`, headers: { 'content-type': 'application/json' }, body });
    expect(r.stats.connections).toBe(1); // really the same connection
    const t2 = second.timing!;
    expect(t2).toMatchObject({ reused: true, connectMs: null, tlsMs: null });
    expectOrdered(t2, second.durationMs);
  });

  it('https: connect and TLS handshake both measured, in order, within the total; reused: both null', async () => {
    const tls = await selfSignedCert();
    const r = await slowReceiver(tls);
    const s = sender(tls.cert);
    const first = await s.send({ url: `${r.url}/t`, headers: { 'content-type': 'application/json' }, body });
    expect(first.status).toBe(200);
    const t1 = first.timing!;
    expect(t1.reused).toBe(false);
    expect(t1.connectMs).not.toBeNull();
    expect(t1.tlsMs).not.toBeNull();
    // A handshake is never free: at least a round trip and a signature.
    expect(t1.tlsMs!).toBeGreaterThan(0);
    expectOrdered(t1, first.durationMs);

    const second = await s.send({ url: `${r.url}/t`, headers: { 'content-type': 'application/json' }, body });
    expect(r.stats.secureConnections).toBe(1);
    expect(second.timing).toMatchObject({ reused: true, connectMs: null, tlsMs: null });
    expectOrdered(second.timing!, second.durationMs);
  });

  it('no timing when the request never had a connection (refused)', async () => {
    const port = await closedPort();
    const res = await sender().send({ url: `http://127.0.0.1:${port}/`, headers: {}, body });
    expect(res.errorCode).toBe('ECONNREFUSED');
    expect(res.timing).toBeNull();
  });

  it('a TLS handshake that fails (self-signed): connect measured, and how long the handshake ran before it failed', async () => {
    const r = await slowReceiver(await selfSignedCert());
    // Both requests wait on the one connection: each gets its times (the second's began before it).
    const s = sender();
    const [a, b] = await Promise.all([1, 2].map(() => s.send({ url: `${r.url}/t`, headers: {}, body })));
    for (const res of [a!, b!]) {
      expect(res.tlsError).toBe(true);
      expect(res.timing).toMatchObject({ reused: false, ttfbMs: null, connectMs: expect.any(Number), tlsMs: expect.any(Number) });
    }
    const t = a!.timing!;
    expect(t.connectMs! + t.tlsMs!).toBeLessThanOrEqual(t.totalMs + 0.2);
    expect(r.requests).toHaveLength(0);
  });
});

describe('timing on the attempt row, through the engine', () => {
  it('getMessage shows each attempt with its timing', async () => {
    const e = await lab.start();
    const r = await slowReceiver();
    await e.call('createSource', webhookSource('timed', 'wk-timed', [`${r.url}/hook`]));
    const res = await e.post('/v1/track', { userId: 'u1', event: 'Timed' }, { writeKey: 'wk-timed' });
    expect(res.status).toBe(200);
    const id = (await e.call('listMessages', { limit: 1 })).items[0].id;
    const detail = await waitFor(async () => {
      const d = await e.call('getMessage', { id });
      return d.deliveries[0]?.attempts.length === 1 ? d : null;
    }, 'the first attempt');
    const a = detail.deliveries[0].attempts[0];
    expect(a.timing).not.toBeNull();
    expect(a.timing!.tlsMs).toBeNull();
    expectOrdered(a.timing!, a.durationMs);
  });
});

describe('migration to v9: timing columns on a database the previous version wrote', () => {
  it('keeps old attempts (timing null) and records new ones with timing', async () => {
    const v = MIGRATIONS.findIndex((m) => m.includes('ADD COLUMN connect_ms'));
    expect(v).toBeGreaterThan(0);
    const dir = lab.dataDir();
    const old = new Database(join(dir, 'webhook-lab.db'));
    registerSearchFunctions(old);
    for (const m of MIGRATIONS.slice(0, v)) old.exec(m);
    old.pragma(`user_version = ${v}`);
    old.prepare("INSERT INTO requests (id, received_at, meta, body) VALUES (1, 1, '{}', '{}')").run();
    old.prepare("INSERT INTO calls (id, source_key, received_at, type, status, request_id) VALUES (1, NULL, 1, 'track', 'accepted', 1)").run();
    old.prepare("INSERT INTO deliveries (id, call_id, source_id, type, state, urls, pending_urls, round, body) VALUES (1, 1, 's', 'track', 'delivered', '[{\"url\":\"http://x/\",\"headers\":{}}]', '[]', 1, x'7b7d')").run();
    old.prepare("INSERT INTO attempts (delivery_id, round, url_index, url, trigger, started_at, duration_ms, request_headers, response_status, outcome) VALUES (1, 1, 0, 'http://x/', 'scheduled', 1, 7, '{}', 200, 'success')").run();
    old.close();

    const store = new Store({ dataDir: dir });
    try {
      const file = openDbFile(dir);
      expect(file.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
      file.close();
      const [before] = store.deliveries.forCall(1)[0].attempts;
      expect(before).toMatchObject({ durationMs: 7, responseStatus: 200, timing: null });
      const timing: AttemptTiming = { connectMs: 0.4, tlsMs: 1.2, ttfbMs: 3.5, totalMs: 4.1, reused: false };
      // Replays recorded through the ledger, as the dispatcher records them: the delivery's row with its attempt.
      const d = store.deliveries.active(1)!;
      const replay = (round: number, t: AttemptTiming) =>
        store.writes.run((tx) => store.ledger.recordRound(
          tx,
          {
            id: 1, state: d.state, pendingUrls: d.pendingUrls, round, attemptCount: round, nextAttemptAt: null, nextSimOffsetMs: null, simElapsedMs: 0,
            firstAttemptAt: 1, lastAttemptAt: round, lastDurationMs: 4, deliveredAt: round, lastError: null, urlStates: d.urlStates,
          },
          [{
            deliveryId: 1, round, urlIndex: 0, url: 'http://x/', trigger: 'replay', startedAt: round, durationMs: 4, requestHeaders: {}, body: null,
            signature: null, responseStatus: 200, responseHeaders: {}, responseBody: '', responseTruncated: false, errorCode: null, errorMessage: null,
            timedOut: false, timeoutMs: null, tlsError: null, connectError: null, outcome: 'success', timing: t,
          }],
        ));
      await replay(2, timing);
      const reused = { ...timing, connectMs: null, tlsMs: null, reused: true };
      await replay(3, reused);
      const attempts = store.deliveries.forCall(1)[0].attempts;
      expect(attempts.map((a) => a.timing)).toEqual([null, timing, reused]);
    } finally {
      store.close();
    }
  });
});
