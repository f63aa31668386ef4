import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../helpers/engine';
import { Store } from '../../src/main/engine/store/store';
import { Ingest } from '../../src/main/engine/collector/ingest';
import { CallFastPath } from '../../src/main/engine/collector/call-fast-path';
import { FaultReplies } from '../../src/main/engine/collector/fault-replies';
import { MAX_CALL_BYTES } from '../../src/shared/limits';

// The collector's call fast path (collector/call-fast-path.ts, issue 27): a POST with a Content-Length
// to a call route is read without Fastify's request cycle. It must answer exactly as the Fastify route
// does, which still takes every other request (a chunked body is the simplest way to be sent there).

const KEY = 'wk_fast';
const basic = (key: string) => `Basic ${Buffer.from(`${key}:`).toString('base64')}`;

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** POSTs `body` with a Content-Length (the fast path) or chunked (Fastify's route). */
function post(url: string, path: string, body: string, o: { chunked: boolean; headers?: Record<string, string> }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const bytes = Buffer.from(body);
    const headers: Record<string, string | number> = { ...o.headers };
    if (!o.chunked) headers['content-length'] = bytes.length;
    const req = httpRequest(`${url}${path}`, { method: 'POST', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    // Chunked: two chunks, so no Content-Length is known when the headers go out.
    if (o.chunked) {
      req.write(bytes.subarray(0, 1));
      req.end(bytes.subarray(1));
    } else req.end(bytes);
  });
}

/** What a client can tell apart in an answer (Date and the connection's headers aside). */
const seen = (a: Answer) => ({
  status: a.status,
  contentType: a.headers['content-type'],
  cors: a.headers['access-control-allow-origin'],
  retryAfter: a.headers['retry-after'],
  length: Number(a.headers['content-length']),
  body: JSON.parse(a.text) as unknown,
});

describe('answers as the Fastify route does', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine({
      config: {
        sources: [
          { name: 'fast', writeKey: KEY },
          { name: 'refusing', writeKey: 'wk_refusing', collectorFaults: { rate: 1, mode: 'status', status: 429, retryAfterS: 3 } },
        ],
      },
    });
  });
  afterAll(() => t.stop());

  const track = (id: string) => JSON.stringify({ userId: 'u1', event: 'Order Completed', messageId: id, properties: { n: 1 } });
  const json = { 'content-type': 'application/json' };
  const cases: { name: string; path: string; body: (id: string) => string; headers: Record<string, string> }[] = [
    { name: 'a valid track call', path: '/v1/track', body: track, headers: { ...json, authorization: basic(KEY) } },
    { name: 'a query string', path: '/v1/t?x=1', body: track, headers: { ...json, authorization: basic(KEY) } },
    { name: 'the key in the body, text/plain', path: '/v1/track', body: (id) => JSON.stringify({ writeKey: KEY, userId: 'u', event: 'E', messageId: id }), headers: { 'content-type': 'text/plain' } },
    { name: 'a Content-Type Fastify cannot parse', path: '/v1/track', body: track, headers: { 'content-type': 'json', authorization: basic(KEY) } },
    { name: 'no Content-Type', path: '/v1/identify', body: (id) => JSON.stringify({ userId: 'u', messageId: id }), headers: { authorization: basic(KEY) } },
    { name: 'invalid JSON', path: '/v1/track', body: () => '{"userId":', headers: { ...json, authorization: basic(KEY) } },
    { name: 'not an object', path: '/v1/track', body: () => '[1,2]', headers: { ...json, authorization: basic(KEY) } },
    { name: 'a byte order mark', path: '/v1/track', body: (id) => '\ufeff' + track(id), headers: { ...json, authorization: basic(KEY) } },
    { name: 'no write key', path: '/v1/track', body: track, headers: json },
    { name: 'an unknown write key (stored dropped)', path: '/v1/track', body: track, headers: { ...json, authorization: basic('wk_nobody') } },
    { name: 'a call the collector drops (no event)', path: '/v1/track', body: (id) => JSON.stringify({ userId: 'u', messageId: id }), headers: { ...json, authorization: basic(KEY) } },
    { name: 'a batch', path: '/v1/batch', body: (id) => JSON.stringify({ batch: [{ type: 'track', userId: 'u', event: 'E', messageId: id }] }), headers: { ...json, authorization: basic(KEY) } },
    { name: 'a batch without its array', path: '/v1/import', body: () => JSON.stringify({ batch: 1 }), headers: { ...json, authorization: basic(KEY) } },
    { name: 'a fault answered with a status', path: '/v1/track', body: track, headers: { ...json, authorization: basic('wk_refusing') } },
  ];

  for (const [i, c] of cases.entries()) {
    it(c.name, async () => {
      const fast = await post(t.collectorUrl, c.path, c.body(`fast-${i}-id`), { chunked: false, headers: c.headers });
      const routed = await post(t.collectorUrl, c.path, c.body(`routed-${i}-id`), { chunked: true, headers: c.headers });
      expect(seen(fast)).toEqual(seen(routed));
      expect(seen(fast).length).toBe(Buffer.byteLength(fast.text));
    });
  }

  it('stores what it took as the route does: how the request came (route, Content-Type as sent, key), status, reason', async () => {
    const stored = async (id: string) => {
      const { items } = await t.call('listMessages', { q: id, limit: 10 });
      expect(items.map((m) => m.messageId)).toEqual([id]);
      const { call } = await t.call('getMessage', { id: items[0].id });
      return { request: call.request, status: call.status, dropReason: call.dropReason, type: call.type, sourceName: call.sourceName };
    };
    for (const [i, c] of cases.entries()) {
      if (['invalid JSON', 'not an object', 'a byte order mark', 'no write key', 'a batch without its array', 'a fault answered with a status'].includes(c.name)) continue;
      const fast = await stored(`fast-${i}-id`);
      expect(fast).toEqual(await stored(`routed-${i}-id`));
      expect(fast.request.contentType).toBe(c.headers['content-type'] ?? null);
    }
  });
});

describe('which requests it takes', () => {
  let dir: string;
  let store: Store;
  let server: Server;
  let fast: CallFastPath;
  let url: string;
  /** Requests the server's own listener (Fastify's, in the collector) was handed. */
  const fellThrough: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wl-fast-path-'));
    store = new Store({ dataDir: dir });
    store.sources.create({ name: 'fast', writeKey: KEY }, Date.now());
    const ingest = new Ingest(store, Date.now, () => null, () => {});
    server = createServer((req, res) => {
      fellThrough.push(`${req.method} ${req.url}`);
      req.resume();
      req.on('end', () => res.writeHead(299).end());
    });
    fast = new CallFastPath(ingest, new FaultReplies());
    fast.add({ path: '/v1/track', type: 'track', bodyLimit: MAX_CALL_BYTES });
    fast.install(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const body = (id: string) => JSON.stringify({ userId: 'u', event: 'E', messageId: id });
  const headers = { 'content-type': 'application/json', authorization: basic(KEY) };

  it('takes a POST to a call route with a Content-Length within its limit, a query string allowed', async () => {
    expect((await post(url, '/v1/track', body('a'), { chunked: false, headers })).status).toBe(200);
    expect((await post(url, '/v1/track?x=1', body('b'), { chunked: false, headers })).status).toBe(200);
    expect(fellThrough).toEqual([]);
    expect(store.calls.list({ limit: 10 }).total).toBe(2);
  });

  it('leaves chunked bodies, bodies over the limit, other paths and methods to the server', async () => {
    fellThrough.length = 0;
    expect((await post(url, '/v1/track', body('c'), { chunked: true, headers })).status).toBe(299);
    expect((await post(url, '/v1/track', 'x'.repeat(MAX_CALL_BYTES + 1), { chunked: false, headers })).status).toBe(299);
    expect((await post(url, '/v1/track/', body('d'), { chunked: false, headers })).status).toBe(299);
    expect((await post(url, '/v1/TRACK', body('e'), { chunked: false, headers })).status).toBe(299);
    const get = await fetch(`${url}/v1/track`);
    expect(get.status).toBe(299);
    expect(fellThrough).toEqual(['POST /v1/track', 'POST /v1/track', 'POST /v1/track/', 'POST /v1/TRACK', 'GET /v1/track']);
    expect(store.calls.list({ limit: 10 }).total).toBe(2);
  });

  it('takes nothing once closed: the server answers (Fastify says 503 while it closes)', async () => {
    fellThrough.length = 0;
    fast.close();
    expect((await post(url, '/v1/track', body('f'), { chunked: false, headers })).status).toBe(299);
    expect(fellThrough).toEqual(['POST /v1/track']);
  });
});
