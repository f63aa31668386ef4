import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MockReceiverHost } from '../../src/main/engine/simulation/mock-receivers/receiver-host';
import { signBody } from '../../src/main/engine/dispatcher/sign';
import { signStandardWebhook } from '../../src/main/engine/dispatcher/standard-webhooks-sign';
import type { MockReceiver, MockRequestRecord } from '../../src/shared/mock-receiver.schema';

const BODY = '{"type":"track","event":"Order Completed","userId":"u1"}';

function receiver(id: string, path: string, extra: Partial<MockReceiver> = {}): MockReceiver {
  return { id, name: id, path, tls: false, behavior: {}, ...extra };
}

// Returns as soon as the check passes: a long limit costs nothing, and a busy machine needs it.
async function waitFor(check: () => boolean, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

function errorCode(err: unknown): string {
  const e = err as { code?: string; cause?: { code?: string } };
  return e.cause?.code ?? e.code ?? String(err);
}

let dataDir: string;
let host: MockReceiverHost;
let sink: MockRequestRecord[];
let agent: Agent;

async function post(url: string, body = BODY, headers: Record<string, string> = {}, signal?: AbortSignal) {
  const started = Date.now();
  const res = await request(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers }, dispatcher: agent, signal });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, ms: Date.now() - started };
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'mock-receivers-'));
  host = new MockReceiverHost({ dataDir, onRequest: (r) => sink.push(r) });
  await host.start();
});

afterAll(async () => {
  await host.stop();
  await rm(dataDir, { recursive: true, force: true });
});

beforeEach(() => {
  sink = [];
  agent = new Agent();
  host.setReceivers([]);
});

afterEach(async () => {
  await agent.close();
});

describe('behaviors over real sockets', () => {
  it('answers the status and records the request exactly', async () => {
    host.upsert(receiver('ok', '/ok', { behavior: { status: 202 } }));
    const res = await post(host.urlFor('ok') + '?attempt=1', BODY, { 'X-Env': 'qa' });
    expect(res.status).toBe(202);
    expect(JSON.parse(res.text)).toEqual({ ok: true, receiver: 'ok', seq: 1 });
    const [rec] = host.requests('ok');
    expect(sink).toEqual([rec]);
    expect(rec).toMatchObject({
      receiverId: 'ok', seq: 1, method: 'POST', path: '/ok?attempt=1', tls: false, body: BODY, bodyBytes: BODY.length, bodyTruncated: false,
      response: { action: 'status', status: 202, delayMs: 0, failed: false, endedBy: 'response' },
      signature: { state: 'not_checked' },
    });
    expect(rec.headers['x-env']).toBe('qa');
    expect(Date.parse(rec.at)).toBeLessThanOrEqual(Date.now());
  });

  it('waits a fixed delay before answering', async () => {
    host.upsert(receiver('slow', '/slow', { behavior: { delayMs: 300 } }));
    const res = await post(host.urlFor('slow'));
    expect(res.status).toBe(200);
    expect(res.ms).toBeGreaterThanOrEqual(290);
    expect(host.requests('slow')[0].response).toMatchObject({ delayMs: 300, endedBy: 'response' });
    expect(host.requests('slow')[0].response.durationMs).toBeGreaterThanOrEqual(290);
  });

  it('waits a random delay within the range', async () => {
    host.upsert(receiver('jitter', '/jitter', { behavior: { delay: { minMs: 40, maxMs: 160 }, seed: 7 } }));
    for (let i = 0; i < 8; i++) {
      const res = await post(host.urlFor('jitter'));
      const { delayMs } = host.requests('jitter')[i].response;
      expect(delayMs).toBeGreaterThanOrEqual(40);
      expect(delayMs).toBeLessThanOrEqual(160);
      expect(res.ms).toBeGreaterThanOrEqual(delayMs - 5);
    }
    expect(new Set(host.requests('jitter').map((r) => r.response.delayMs)).size).toBeGreaterThan(1);
  });

  it('a delay longer than the client waits ends as a client timeout', async () => {
    host.upsert(receiver('late', '/late', { behavior: { delayMs: 1500 } }));
    await expect(post(host.urlFor('late'), BODY, {}, AbortSignal.timeout(300))).rejects.toThrow();
    await waitFor(() => host.requests('late').length === 1);
    expect(host.requests('late')[0].response).toMatchObject({ action: 'status', status: 200, delayMs: 1500, endedBy: 'client' });
  });

  it('hangs until the client gives up, then releases the socket', async () => {
    await waitFor(() => host.openConnections() === 0);
    host.upsert(receiver('hang', '/hang', { behavior: { hang: true } }));
    const started = Date.now();
    await expect(post(host.urlFor('hang'), BODY, {}, AbortSignal.timeout(400))).rejects.toThrow();
    expect(Date.now() - started).toBeGreaterThanOrEqual(390);
    await waitFor(() => host.requests('hang').length === 1);
    expect(host.requests('hang')[0].response).toMatchObject({ action: 'hang', status: null, endedBy: 'client' });
    // Held from the body's end until the client gave up (400 ms after it started): on a busy machine
    // the request may reach the receiver late, so count from when it arrived (`at`), with 50 ms for the body.
    const held = host.requests('hang')[0];
    expect(held.response.durationMs).toBeGreaterThanOrEqual(started + 400 - Date.parse(held.at) - 50);
    await waitFor(() => host.openConnections() === 0);
  });

  it('failFirst 3 answers 500, 500, 500, then 200; resetState starts over', async () => {
    host.upsert(receiver('flaky', '/flaky', { behavior: { failFirst: 3, status: 500 } }));
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await post(host.urlFor('flaky'))).status);
    expect(statuses).toEqual([500, 500, 500, 200]);
    expect(host.requests('flaky').map((r) => r.response.failed)).toEqual([true, true, true, false]);
    host.resetState('flaky');
    expect((await post(host.urlFor('flaky'))).status).toBe(500);
  });

  it('counters survive an identical upsert and reset when the definition changes', async () => {
    const def = receiver('ff', '/ff', { behavior: { failFirst: 1 } });
    host.upsert(def);
    expect((await post(host.urlFor('ff'))).status).toBe(500);
    host.upsert({ ...def, behavior: { failFirst: 1 } });
    host.setReceivers([{ ...def }]);
    expect((await post(host.urlFor('ff'))).status).toBe(200);
    host.upsert({ ...def, behavior: { failFirst: 1, status: 503 } });
    expect((await post(host.urlFor('ff'))).status).toBe(503);
  });

  it('failPercent 50 with seed 42 repeats its sequence and fails about half of 200', async () => {
    host.setReceivers([
      receiver('coin', '/coin', { behavior: { failPercent: 50, seed: 42 } }),
      receiver('coin2', '/coin2', { behavior: { failPercent: 50, seed: 42 } }),
    ]);
    const sequence = async (url: string) => {
      const out: number[] = [];
      for (let i = 0; i < 200; i++) out.push((await post(url)).status);
      return out;
    };
    const first = await sequence(host.urlFor('coin'));
    expect(new Set(first)).toEqual(new Set([200, 500]));
    const failures = first.filter((s) => s === 500).length;
    expect(failures).toBeGreaterThan(70);
    expect(failures).toBeLessThan(130);
    expect(await sequence(host.urlFor('coin2'))).toEqual(first);
    host.resetState('coin');
    expect(await sequence(host.urlFor('coin'))).toEqual(first);
  });

  it('reset destroys the connection without an answer', async () => {
    host.upsert(receiver('reset', '/reset', { behavior: { reset: true } }));
    const url = new URL(host.urlFor('reset'));
    const err = await new Promise<NodeJS.ErrnoException>((resolve, reject) => {
      const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent: false }, () =>
        reject(new Error('got a response')),
      );
      req.on('error', resolve);
      req.end(BODY);
    });
    expect(err.code).toBe('ECONNRESET');
    expect(err.message).toMatch(/ECONNRESET|socket hang up/);
    await waitFor(() => host.requests('reset').length === 1);
    expect(host.requests('reset')[0]).toMatchObject({ body: BODY, response: { action: 'reset', status: null, endedBy: 'reset' } });
  });

  it('answers with the chosen body and headers', async () => {
    host.upsert(receiver('limited', '/limited', { behavior: { status: 429, body: '{"error":"slow down"}', headers: { 'Retry-After': '2', 'X-Mock': 'yes' } } }));
    const res = await post(host.urlFor('limited'));
    expect(res.status).toBe(429);
    expect(res.text).toBe('{"error":"slow down"}');
    expect(res.headers).toMatchObject({ 'retry-after': '2', 'x-mock': 'yes', 'content-type': 'application/json', 'content-length': '21' });
  });

  it('answers an unknown path with a helpful 404', async () => {
    host.setReceivers([receiver('a', '/a'), receiver('secure', '/secure', { tls: true })]);
    const res = await post(`${host.baseUrl(false)}/nope`);
    expect(res.status).toBe(404);
    const body = JSON.parse(res.text);
    expect(body.error).toContain('/nope');
    expect(body.receivers).toEqual([{ name: 'a', path: '/a', url: host.urlFor('a') }]);
    const wrongProtocol = JSON.parse((await post(`${host.baseUrl(false)}/secure`)).text);
    expect(wrongProtocol.hint).toContain(host.urlFor('secure'));
    expect(host.requests('a')).toEqual([]);
    expect(sink).toEqual([]);
  });

  it('refuses a path already used by another receiver', () => {
    host.upsert(receiver('a', '/same'));
    expect(() => host.upsert(receiver('b', '/same'))).toThrow(/already used/);
    expect(() => host.setReceivers([receiver('a', '/x'), receiver('b', '/x')])).toThrow(/already used/);
  });
});

describe('signature check', () => {
  beforeEach(() => {
    host.setReceivers([receiver('signed', '/signed', { secret: 's3cret' }), receiver('open', '/open')]);
  });

  it('valid when X-Signature is the HMAC-SHA1 of the exact bytes', async () => {
    await post(host.urlFor('signed'), BODY, { 'X-Signature': signBody('s3cret', BODY) });
    expect(host.requests('signed')[0].signature).toEqual({ state: 'valid', received: signBody('s3cret', BODY), expected: signBody('s3cret', BODY), reason: null });
  });

  it('invalid, with both digests, when signed over other bytes', async () => {
    const resigned = signBody('s3cret', JSON.stringify(JSON.parse(BODY), null, 2));
    await post(host.urlFor('signed'), BODY, { 'X-Signature': resigned });
    const sig = host.requests('signed')[0].signature;
    expect(sig).toMatchObject({ state: 'invalid', received: resigned, expected: signBody('s3cret', BODY) });
    expect(sig.reason).toContain(resigned);
  });

  it('missing without X-Signature; not_checked without a secret', async () => {
    await post(host.urlFor('signed'));
    expect(host.requests('signed')[0].signature).toMatchObject({ state: 'missing', received: null });
    await post(host.urlFor('open'), BODY, { 'X-Signature': 'abc' });
    expect(host.requests('open')[0].signature).toEqual({ state: 'not_checked', received: 'abc', expected: null, reason: null });
  });
});

describe('HTTPS with a self-signed certificate', () => {
  beforeEach(() => host.setReceivers([receiver('secure', '/secure', { tls: true })]));

  it('a default client refuses it and no request reaches the receiver', async () => {
    expect(host.urlFor('secure')).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/secure$/);
    const err = await post(host.urlFor('secure')).then(() => null, (e: unknown) => e);
    expect(['DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN']).toContain(errorCode(err));
    // A NEGATIVE check (no request is recorded): nothing to wait on for a request never made.
    await new Promise((r) => setTimeout(r, 50));
    expect(host.requests('secure')).toEqual([]);
    expect(sink).toEqual([]);
  });

  it('a client trusting the generated certificate succeeds', async () => {
    await agent.close();
    agent = new Agent({ connect: { ca: host.certificatePem() } });
    const res = await post(host.urlFor('secure'));
    expect(res.status).toBe(200);
    expect(host.requests('secure')[0]).toMatchObject({ tls: true, body: BODY });
  });

  it('reset works under TLS too', async () => {
    host.upsert(receiver('secure', '/secure', { tls: true, behavior: { reset: true } }));
    await agent.close();
    agent = new Agent({ connect: { ca: host.certificatePem() } });
    const err = await post(host.urlFor('secure')).then(() => null, (e: unknown) => e);
    expect(errorCode(err)).toMatch(/ECONNRESET|UND_ERR_SOCKET/);
    await waitFor(() => host.requests('secure').length === 1);
    expect(host.requests('secure')[0].response.endedBy).toBe('reset');
  });
});

describe('host lifecycle', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mock-host-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps the certificate in the data dir and reuses it on the next start', async () => {
    const first = new MockReceiverHost({ dataDir: dir });
    await first.start();
    const pem = first.certificatePem();
    expect(await readFile(join(dir, 'cert.pem'), 'utf8')).toBe(pem);
    expect((await stat(join(dir, 'key.pem'))).mode & 0o077).toBe(0);
    await first.stop();

    const second = new MockReceiverHost({ dataDir: dir });
    second.upsert(receiver('secure', '/secure', { tls: true }));
    await second.start();
    expect(second.certificatePem()).toBe(pem);
    const trusting = new Agent({ connect: { ca: pem } });
    const res = await request(second.urlFor('secure'), { method: 'POST', body: BODY, dispatcher: trusting });
    expect(res.statusCode).toBe(200);
    await res.body.text();
    await trusting.close();
    await second.stop();
  });

  it('replaces an unreadable certificate instead of failing to start', async () => {
    await writeFile(join(dir, 'cert.pem'), 'garbage');
    await writeFile(join(dir, 'key.pem'), 'garbage');
    const h = new MockReceiverHost({ dataDir: dir });
    await h.start();
    expect(h.certificatePem()).toContain('BEGIN CERTIFICATE');
    expect(await readFile(join(dir, 'cert.pem'), 'utf8')).toBe(h.certificatePem());
    await h.stop();
  });

  it('stop() closes hung connections and records them as ended by stop', async () => {
    const records: MockRequestRecord[] = [];
    const h = new MockReceiverHost({ dataDir: dir, onRequest: (r) => records.push(r), historyLimit: 2 });
    h.setReceivers([receiver('hang', '/hang', { behavior: { hang: true } }), receiver('ok', '/ok')]);
    await h.start();
    for (let i = 0; i < 3; i++) await (await request(h.urlFor('ok'), { method: 'POST', body: String(i), dispatcher: agent })).body.text();
    expect(h.requests('ok').map((r) => r.body)).toEqual(['1', '2']);
    expect(records.filter((r) => r.receiverId === 'ok')).toHaveLength(3);

    // The hanging request never ends by itself; the client gives up on it after 30 s (generous). A stop()
    // that waited for it would end with that: a headers timeout, not the receiver closing the socket.
    const pending = request(h.urlFor('hang'), { method: 'POST', body: BODY, dispatcher: agent, headersTimeout: 30_000 }).then(() => null, (e: unknown) => e);
    await waitFor(() => h.openConnections() >= 1 && h.inFlight() === 1);
    await h.stop();
    expect(await pending).toBeInstanceOf(Error);
    expect(errorCode(await pending)).toBe('UND_ERR_SOCKET');
    expect(h.openConnections()).toBe(0);
    expect(records.at(-1)).toMatchObject({ receiverId: 'hang', response: { action: 'hang', endedBy: 'stop' } });
  });
});

describe('per-item answers', () => {
  it('answers a JSON-array batch with one {status} per item and 207, recorded with the request', async () => {
    host.setReceivers([receiver('items', '/items', { behavior: { itemStatuses: [200, 500, 400] } })]);
    const batch = JSON.stringify([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
    const res = await post(host.urlFor('items'), batch);
    expect(res.status).toBe(207);
    expect(res.headers['content-type']).toBe('application/json');
    expect(JSON.parse(res.text)).toEqual([{ status: 200 }, { status: 500 }, { status: 400 }, { status: 200 }]);
    const [rec] = host.requests('items');
    expect(rec.response).toMatchObject({ action: 'status', status: 207, body: res.text, itemStatuses: [200, 500, 400, 200], endedBy: 'response' });
    // A single event is one item.
    const single = await post(host.urlFor('items'), BODY);
    expect([single.status, single.text]).toEqual([200, '{"status":200}']);
  });

  it('counts the items of a batch larger than the stored body copy', async () => {
    const small = new MockReceiverHost({ dataDir, bodyLimitBytes: 64 });
    await small.start();
    try {
      small.setReceivers([receiver('items', '/items', { behavior: { itemStatuses: [200, 503] } })]);
      const batch = JSON.stringify(Array.from({ length: 50 }, (_, i) => ({ event: `e${i}`, pad: 'x'.repeat(20) })));
      const res = await post(small.urlFor('items'), batch);
      expect(JSON.parse(res.text)).toHaveLength(50);
      expect(small.requests('items')[0]).toMatchObject({ bodyTruncated: true, response: { status: 207 } });
    } finally {
      await small.stop();
    }
  });
});

describe('Standard Webhooks check', () => {
  const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  beforeEach(() => {
    host.setReceivers([receiver('sw', '/sw', { standardWebhooksSecret: SECRET }), receiver('open', '/open')]);
  });
  const headersFor = (body: string, o: { secret?: string; timestamp?: number } = {}) => {
    const timestamp = o.timestamp ?? Math.floor(Date.now() / 1000);
    const signature = signStandardWebhook({ secret: o.secret ?? SECRET, id: 'msg_x', timestamp, body });
    return { 'webhook-id': 'msg_x', 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
  };

  it('valid over the exact bytes; invalid with a reason for other bytes or an old timestamp; missing without headers', async () => {
    await post(host.urlFor('sw'), BODY, headersFor(BODY));
    await post(host.urlFor('sw'), BODY, headersFor(JSON.stringify(JSON.parse(BODY), null, 2)));
    await post(host.urlFor('sw'), BODY, headersFor(BODY, { timestamp: Math.floor(Date.now() / 1000) - 3600 }));
    await post(host.urlFor('sw'), BODY);
    const [ok, resigned, stale, none] = host.requests('sw').map((r) => r.standardWebhooks!);
    expect(ok).toMatchObject({ state: 'valid', id: 'msg_x', reason: null });
    expect(ok.expected).toBe(ok.received);
    expect(resigned).toMatchObject({ state: 'invalid', reason: expect.stringMatching(/body was changed/) });
    expect(stale).toMatchObject({ state: 'invalid', reason: expect.stringMatching(/s old/) });
    expect(none).toMatchObject({ state: 'missing', received: null });
    // The X-Signature check is separate: this receiver has no shared secret.
    expect(host.requests('sw')[0].signature.state).toBe('not_checked');
    await post(host.urlFor('open'), BODY, headersFor(BODY));
    expect(host.requests('open')[0].standardWebhooks).toMatchObject({ state: 'not_checked', id: 'msg_x', expected: null });
  });
});
