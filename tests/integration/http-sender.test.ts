import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { timingSafeEqual } from 'node:crypto';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { HttpSender, type SendResult } from '../../src/main/engine/dispatcher/http-sender';
import { RESPONSE_BODY_LIMIT } from '../../src/main/engine/dispatcher/send-attempt';
import { currentRequest } from '../../src/main/engine/dispatcher/request-headers';
import { buildRequestHeaders } from '../../src/shared/webhook-request';
import { signBody } from '../../src/main/engine/dispatcher/sign';
import { classify } from '../../src/main/engine/dispatcher/classify';
import { closedPort, type ReceiverHandler } from '../helpers/receiver';
import { selfSignedCert } from '../helpers/tls';
import { until } from '../helpers/until';
import { testLab } from '../helpers/test-lab';

const SECRET = 's3cret';
// Which mechanism ended an attempt is told by its result (`timed out after N ms` is only ever the
// attempt's own timer; a late answer would be its status), never by an upper bound on its duration:
// how late a timer fires is the machine's (issue 44). Lower bounds hold everywhere.
const body = Buffer.from('{"version":1,"type":"track","userId":"zoë","event":"Café ☕ 注文","properties":{"emoji":"🎉"}}', 'utf8');

let sender: HttpSender;
const lab = testLab();

beforeAll(() => {
  sender = new HttpSender({ now: () => 1_700_000_000_000 });
});
afterAll(() => sender.close());

const receiver = (handler?: ReceiverHandler) => lab.receiver(handler);

function post(url: string, opts: { timeoutMs?: number; urlHeaders?: Record<string, string>; via?: HttpSender } = {}): Promise<SendResult> {
  const headers = buildRequestHeaders({ ...currentRequest('Segment.io', SECRET, body), urlHeaders: opts.urlHeaders ?? {}, body });
  return (opts.via ?? sender).send({ url, headers, body, timeoutMs: opts.timeoutMs });
}

describe('HttpSender over loopback', () => {
  it('sends with the method asked for (POST by default), the same exact bytes', async () => {
    const r = await receiver();
    const headers = buildRequestHeaders({ ...currentRequest('Segment.io', SECRET, body), urlHeaders: {}, body });
    for (const method of [undefined, 'PUT', 'PATCH', 'POST'] as const) {
      expect((await sender.send({ url: `${r.url}/m`, method, headers, body })).status).toBe(200);
    }
    expect(r.requests.map((x) => x.method)).toEqual(['POST', 'PUT', 'PATCH', 'POST']);
    for (const x of r.requests) expect(x.body.equals(body)).toBe(true);
  });

  it('records status, headers and body of a 200; the receiver gets the exact bytes and can verify X-Signature', async () => {
    const r = await receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-receiver': 'a' }).end('{"ok":true,"note":"reçu"}');
    });
    const result = await post(`${r.url}/hook?v=1#frag`, { urlHeaders: { 'X-Env': 'qa' } });

    expect(result).toMatchObject({
      startedAt: 1_700_000_000_000,
      status: 200,
      responseBody: '{"ok":true,"note":"reçu"}',
      responseTruncated: false,
      errorCode: null,
      errorMessage: null,
      timedOut: false,
      tlsError: false,
    });
    expect(result.responseHeaders).toMatchObject({ 'content-type': 'application/json', 'x-receiver': 'a' });
    expect(classify(result, Date.now())).toEqual({ outcome: 'success', reason: 'HTTP 200' });

    const [got] = r.requests;
    expect(got.method).toBe('POST');
    expect(got.url).toBe('/hook?v=1');
    expect(got.body.equals(body)).toBe(true);
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['content-length']).toBe(String(body.length));
    expect(got.headers['user-agent']).toBe('Segment.io/1.0');
    expect(got.headers['x-env']).toBe('qa');
    expect(got.headers['transfer-encoding']).toBeUndefined();
    // What a receiver does: HMAC the raw bytes it got, compare in constant time.
    const expected = Buffer.from(signBody(SECRET, got.body), 'hex');
    const sent = Buffer.from(String(got.headers['x-signature']), 'hex');
    expect(sent.length).toBe(20);
    expect(timingSafeEqual(expected, sent)).toBe(true);
  });

  it('joins repeated response headers into one value', async () => {
    const r = await receiver((_req, res) => {
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.writeHead(204).end();
    });
    const result = await post(`${r.url}/`);
    expect(result.status).toBe(204);
    expect(result.responseBody).toBe('');
    expect(result.responseHeaders?.['set-cookie']).toBe('a=1, b=2');
  });

  it('500 is retryable', async () => {
    const r = await receiver((_req, res) => res.writeHead(500).end('boom'));
    const result = await post(`${r.url}/`);
    expect(result.status).toBe(500);
    expect(result.responseBody).toBe('boom');
    expect(classify(result, Date.now())).toEqual({ outcome: 'retryable', reason: 'HTTP 500' });
  });

  it('404 is failed and discarded', async () => {
    const r = await receiver((_req, res) => res.writeHead(404).end('no such hook'));
    const result = await post(`${r.url}/missing`);
    expect(result.status).toBe(404);
    expect(classify(result, Date.now())).toEqual({ outcome: 'failed', reason: 'discarded: 4xx (HTTP 404)' });
  });

  it('302 is failed and not followed: the target path receives nothing', async () => {
    const r = await receiver((req, res) => {
      if (req.url === '/start') res.writeHead(302, { location: '/target' }).end();
      else res.writeHead(200).end('followed');
    });
    const result = await post(`${r.url}/start`);
    expect(result.status).toBe(302);
    expect(classify(result, Date.now())).toEqual({ outcome: 'failed', reason: 'HTTP 302: redirect not followed to /target' });
    // A NEGATIVE check (the redirect is not followed): nothing to wait on for a request never made.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(r.requests.map((q) => q.url)).toEqual(['/start']);
  });

  it('429 with Retry-After: 7 asks for a retry in 7000 ms', async () => {
    const r = await receiver((_req, res) => res.writeHead(429, { 'retry-after': '7' }).end());
    const result = await post(`${r.url}/`);
    expect(classify(result, Date.now())).toEqual({ outcome: 'retryable', reason: 'HTTP 429, Retry-After 7000 ms', retryAfterMs: 7000 });
  });

  it('truncates a response over 64 KiB at 65536 bytes, marks it, and still reads the rest off the wire', async () => {
    const big = Buffer.alloc(RESPONSE_BODY_LIMIT * 3 + 123, 'a');
    big.write('END', big.length - 3);
    const r = await receiver((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(big));
    const result = await post(`${r.url}/`);
    expect(result.status).toBe(200);
    expect(result.responseTruncated).toBe(true);
    expect(result.responseBody).toHaveLength(65536);
    expect(result.responseBody).toBe(big.subarray(0, 65536).toString());
    expect(classify(result, Date.now()).outcome).toBe('success');
    // Exactly at the limit is not truncated.
    const exact = await receiver((_req, res) => res.end(Buffer.alloc(RESPONSE_BODY_LIMIT, 'b')));
    const atLimit = await post(`${exact.url}/`);
    expect(atLimit.responseTruncated).toBe(false);
    expect(atLimit.responseBody).toHaveLength(RESPONSE_BODY_LIMIT);
  });

  it('drains a large response so its keep-alive connection is reused', async () => {
    const huge = Buffer.alloc(8 * 1024 * 1024, 'z');
    const r = await receiver((req, res) => res.end(req.url === '/huge' ? huge : 'small'));
    // One connection per origin: a second one would only appear if the first had been dropped.
    const one = new HttpSender({ connectionsPerOrigin: 1 });
    try {
      const first = await post(`${r.url}/huge`, { via: one });
      expect(first.responseTruncated).toBe(true);
      expect(first.responseBody).toHaveLength(RESPONSE_BODY_LIMIT);
      const second = await post(`${r.url}/small`, { via: one });
      expect(second.responseBody).toBe('small');
      expect(r.stats.connections).toBe(1);
    } finally {
      await one.close();
    }
  });

  it('times out at exactly the configured budget (short variant)', async () => {
    const r = await receiver((_req, res) => {
      setTimeout(() => res.end('late'), 2000).unref();
    });
    const result = await post(`${r.url}/slow`, { timeoutMs: 300 });
    expect(result).toMatchObject({ status: null, timedOut: true, errorCode: 'TIMEOUT', errorMessage: 'timed out after 300 ms', tlsError: false });
    expect(result.durationMs).toBeGreaterThanOrEqual(300);
    expect(classify(result, Date.now())).toEqual({ outcome: 'retryable', reason: 'timed out after 300 ms' });
  });

  it('the budget covers the response body: headers sent, body stalls', async () => {
    const r = await receiver((_req, res) => {
      res.writeHead(200, { 'content-length': '10' });
      res.write('part');
    });
    const result = await post(`${r.url}/`, { timeoutMs: 300 });
    expect(result).toMatchObject({ status: 200, responseBody: 'part', timedOut: true, errorCode: 'TIMEOUT' });
    expect(result.durationMs).toBeGreaterThanOrEqual(300);
    expect(classify(result, Date.now()).outcome).toBe('retryable');
  });

  it('an attempt that times out while waiting for a connection is never sent', async () => {
    const r = await receiver((_req, res) => {
      setTimeout(() => res.end('late'), 1000).unref();
    });
    const one = new HttpSender({ connectionsPerOrigin: 1 });
    try {
      // /a holds the only connection for 600 ms; /b's 300 ms run out while it waits in the queue.
      const [a, b] = await Promise.all([post(`${r.url}/a`, { via: one, timeoutMs: 600 }), post(`${r.url}/b`, { via: one, timeoutMs: 300 })]);
      expect([a.errorMessage, b.errorMessage]).toEqual(['timed out after 600 ms', 'timed out after 300 ms']);
      // A NEGATIVE check (/b never reaches the receiver): no event marks a request never sent.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(r.requests.map((q) => q.url)).toEqual(['/a']);
    } finally {
      await one.close();
    }
  });

  it('the budget covers connecting: a TLS handshake that never completes times out on time', async () => {
    // Accepts TCP and then says nothing, so the client's TLS handshake hangs.
    const sockets = new Set<Socket>();
    const silent = createTcpServer((s) => sockets.add(s));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
    const s = new HttpSender();
    // close() must not wait for undici's own 10 s connect timeout: a sentinel at that value, set before
    // the connect began, comes first if it does.
    let sentinel: NodeJS.Timeout | undefined;
    const connectTimeout = new Promise<string>((r) => (sentinel = setTimeout(() => r("waited for undici's 10 s connect timeout"), 10_000)));
    try {
      const result = await post(`https://127.0.0.1:${(silent.address() as AddressInfo).port}/`, { via: s, timeoutMs: 300 });
      expect(result).toMatchObject({ status: null, timedOut: true, errorCode: 'TIMEOUT', errorMessage: 'timed out after 300 ms', tlsError: false });
      expect(result.durationMs).toBeGreaterThanOrEqual(300);
      expect(await Promise.race([s.close().then(() => 'closed'), connectTimeout])).toBe('closed');
    } finally {
      clearTimeout(sentinel);
      for (const sock of sockets) sock.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('a receiver that answers after 6 s times out at 5 s by default', async () => {
    const r = await receiver((_req, res) => {
      setTimeout(() => res.end('too late'), 6000).unref();
    });
    const result = await post(`${r.url}/six-seconds`);
    expect(result.timedOut).toBe(true);
    expect(result.errorCode).toBe('TIMEOUT');
    expect(result.errorMessage).toBe('timed out after 5000 ms');
    expect(result.status).toBeNull();
    expect(result.durationMs).toBeGreaterThanOrEqual(5000);
  }, 15_000);

  it('connection refused (closed port) is retryable', async () => {
    const port = await closedPort();
    const result = await post(`http://127.0.0.1:${port}/`);
    expect(result).toMatchObject({ status: null, errorCode: 'ECONNREFUSED', errorMessage: 'connection refused', timedOut: false, tlsError: false });
    expect(classify(result, Date.now())).toEqual({ outcome: 'retryable', reason: 'connection refused' });
  });

  it('a connection destroyed mid-response is retryable', async () => {
    const r = await receiver((_req, res) => {
      res.writeHead(200, { 'content-length': '1000' });
      res.write('partial');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const result = await post(`${r.url}/`);
    expect(result.status).toBe(200);
    expect(result.responseBody).toBe('partial');
    expect(result.errorCode).toBe('UND_ERR_SOCKET');
    expect(classify(result, Date.now()).outcome).toBe('retryable');
  });

  it('a connection reset (RST) mid-response is retryable as ECONNRESET', async () => {
    const r = await receiver((_req, res) => {
      res.writeHead(200, { 'content-length': '1000' });
      res.write('partial');
      setTimeout(() => res.socket?.resetAndDestroy(), 20);
    });
    const result = await post(`${r.url}/`);
    expect(result).toMatchObject({ errorCode: 'ECONNRESET', errorMessage: 'connection reset by the receiver', timedOut: false });
    expect(classify(result, Date.now()).outcome).toBe('retryable');
  });

  it('an unresolvable host is a retryable DNS error', async () => {
    const result = await post('http://webhook-lab-test.invalid/hook');
    expect(result.errorCode).toMatch(/^(ENOTFOUND|EAI_AGAIN)$/);
    expect(result.errorMessage).toMatch(/^DNS: /);
    expect(classify(result, Date.now()).outcome).toBe('retryable');
  });

  it('reuses keep-alive connections and bounds them per origin', async () => {
    const r = await receiver((_req, res) => setTimeout(() => res.end('ok'), 20));
    const small = new HttpSender({ connectionsPerOrigin: 4 });
    try {
      const results = await Promise.all(Array.from({ length: 40 }, () => post(`${r.url}/`, { via: small })));
      expect(results.every((x) => x.status === 200)).toBe(true);
      expect(r.requests).toHaveLength(40);
      expect(r.stats.connections).toBe(4);
    } finally {
      await small.close();
    }
  });

  it('never rejects on a bad URL or after close', async () => {
    const s = new HttpSender();
    expect((await s.send({ url: 'not a url', headers: {}, body })).errorCode).toBe('ERR_INVALID_URL');
    expect((await s.send({ url: 'ftp://127.0.0.1/x', headers: {}, body })).errorCode).toBe('ERR_INVALID_URL');
    await s.close();
    const after = await s.send({ url: 'http://127.0.0.1:1/', headers: {}, body });
    expect(after.errorCode).toBe('SENDER_CLOSED');
  });

  // A sender loads undici with its first send (a start of the lab loads none of it): a close meanwhile
  // waits for that send as for any in flight, and a forced one ends it as closed, never hanging it.
  it('a close during the first send, the HTTP client still loading, lets it finish; a forced one ends it as closed', async () => {
    const r = await receiver();
    const s1 = new HttpSender();
    const sent = post(`${r.url}/first`, { via: s1 });
    await s1.close();
    expect((await sent).status).toBe(200);
    const s2 = new HttpSender();
    const forced = post(`${r.url}/forced`, { via: s2 });
    await s2.close({ force: true });
    expect((await forced).errorCode).toBe('SENDER_CLOSED');
    expect(r.requests.map((x) => x.url)).toEqual(['/first']);
  });

  it('close() lets attempts in flight finish', async () => {
    const r = await receiver((_req, res) => setTimeout(() => res.end('done'), 150));
    const s = new HttpSender();
    const pending = post(`${r.url}/`, { via: s });
    await r.waitForRequests(1);
    await s.close();
    expect((await pending).responseBody).toBe('done');
  });

  // Two closes while an attempt is in flight (a stop and a test's teardown, say): each must return
  // once it has finished; the second used to take the first's place, which then waited forever.
  it('two close() calls while an attempt is in flight both return once it finishes', async () => {
    let answer!: () => void;
    const r = await receiver((_req, res) => (answer = () => res.end('done')));
    const s = new HttpSender();
    const pending = post(`${r.url}/`, { via: s });
    await r.waitForRequests(1);
    const closes = [s.close(), s.close()];
    answer();
    await Promise.all(closes);
    expect((await pending).responseBody).toBe('done');
  });
});

describe('HttpSender over TLS', () => {
  it('a self-signed receiver fails the handshake: TLS error, not retried, no HTTP request reaches it', async () => {
    const r = await lab.httpsReceiver(await selfSignedCert());
    const result = await post(`${r.url}/hook`);
    expect(result).toMatchObject({
      status: null,
      errorCode: 'DEPTH_ZERO_SELF_SIGNED_CERT',
      errorMessage: 'TLS: self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT)',
      tlsError: true,
      timedOut: false,
    });
    expect(classify(result, Date.now()).outcome).toBe('failed');
    // The receiver counts the connection when its event comes: wait for it, then check that nothing
    // past the handshake happened.
    await until(() => r.stats.connections === 1);
    expect(r.stats.secureConnections).toBe(0);
    expect(r.stats.requestEvents).toBe(0);
    expect(r.requests).toHaveLength(0);
  });

  it('the same receiver works once its certificate is trusted (so the failure above is about trust)', async () => {
    const tls = await selfSignedCert();
    const r = await lab.httpsReceiver(tls);
    const trusting = new HttpSender({ ca: tls.cert });
    try {
      const result = await post(`${r.url}/hook`, { via: trusting });
      expect(result.status).toBe(200);
      expect(r.stats.secureConnections).toBe(1);
      expect(r.requests[0].body.equals(body)).toBe(true);
    } finally {
      await trusting.close();
    }
  });

  it('an expired certificate is a TLS error (CERT_HAS_EXPIRED) even when trusted', async () => {
    const tls = await selfSignedCert('expired');
    const r = await lab.httpsReceiver(tls);
    const trusting = new HttpSender({ ca: tls.cert });
    try {
      const result = await post(`${r.url}/hook`, { via: trusting });
      expect(result).toMatchObject({ errorCode: 'CERT_HAS_EXPIRED', tlsError: true, status: null });
      expect(classify(result, Date.now()).outcome).toBe('failed');
      expect(r.stats.requestEvents).toBe(0);
    } finally {
      await trusting.close();
    }
  });

  it('https to a plain-http port is a TLS error with a readable message', async () => {
    const r = await receiver();
    const result = await post(`${r.url.replace('http:', 'https:')}/`);
    expect(result.tlsError).toBe(true);
    expect(result.errorMessage).toMatch(/^TLS: wrong version number \(ERR_SSL_WRONG_VERSION_NUMBER\)$/);
    expect(r.requests).toHaveLength(0);
  });
});
