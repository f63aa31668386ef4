import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpTransport } from '../../src/renderer/api/http-transport';
import { SseParser } from '../../src/renderer/api/sse-parser';
import { ApiError } from '../../src/shared/api-error';
import type { EngineEvent } from '../../src/shared/api.contract';
import type { ConnectionStatus } from '../../src/renderer/api/transport.types';
import { until } from '../helpers/until';

interface Seen {
  method: string;
  url: string;
  auth: string | undefined;
  contentType: string | undefined;
  body: string;
}

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

let server: Server | null = null;

async function serve(handler: Handler): Promise<{ base: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, auth: req.headers.authorization, contentType: req.headers['content-type'], body });
      handler(req, res, body);
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

afterEach(async () => {
  const s = server;
  server = null;
  if (!s) return;
  s.closeAllConnections();
  await new Promise((r) => s.close(r));
});

const json = (res: ServerResponse, status: number, value: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
};

describe('HTTP transport: export files', () => {
  it('downloads from /api/export/file with the token and the filters set, named by Content-Disposition', async () => {
    const { base, seen } = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson; charset=utf-8', 'content-disposition': 'attachment; filename="webhook-lab-x.jsonl"' });
      res.end('{"a":1}\n{"a":2}\n');
    });
    const t = createHttpTransport({ token: 'tok-2', baseUrl: base });
    const file = await t.exportFile!({ format: 'jsonl', status: 'failed', q: 'user 1', sourceId: undefined, type: '' });
    expect(seen[0]).toMatchObject({ method: 'GET', url: '/api/export/file?format=jsonl&status=failed&q=user+1', auth: 'Bearer tok-2' });
    expect(file.filename).toBe('webhook-lab-x.jsonl');
    expect(await file.blob.text()).toBe('{"a":1}\n{"a":2}\n');
  });

  it('throws ApiError with the field errors of a refused query, and status 0 when the engine is unreachable', async () => {
    const { base } = await serve((_req, res) => json(res, 400, { error: 'invalid input', fields: [{ path: 'status', message: 'expected one of …' }] }));
    const t = createHttpTransport({ token: 'tok', baseUrl: base });
    const refused = await t.exportFile!({ format: 'har', status: 'bogus' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 400, fields: [{ path: 'status' }] });
    const gone = createHttpTransport({ token: 'tok', baseUrl: 'http://127.0.0.1:9' });
    await expect(gone.exportFile!({ format: 'har' })).rejects.toMatchObject({ status: 0 });
  });
});

describe('HTTP transport: operations', () => {
  it('maps operations onto /api with the Bearer token, query strings for GET, JSON bodies otherwise', async () => {
    const { base, seen } = await serve((req, res) => json(res, 200, req.method === 'GET' ? { items: [], total: 0, next: null } : { id: 's1' }));
    const t = createHttpTransport({ token: 'tok-1', baseUrl: base });
    expect(await t.call('listMessages', { status: 'retrying', q: 'user 1', before: 40 })).toEqual({ items: [], total: 0, next: null });
    await t.call('updateSource', { id: 'src/1', webhooks: { enabled: true, urls: [{ url: 'http://x/h', headers: {} }] } });
    expect(seen[0]).toMatchObject({ method: 'GET', url: '/api/messages?status=retrying&q=user+1&before=40', auth: 'Bearer tok-1' });
    expect(seen[1]).toMatchObject({ method: 'PATCH', url: '/api/sources/src%2F1', auth: 'Bearer tok-1', contentType: 'application/json' });
    expect(JSON.parse(seen[1].body)).toEqual({ webhooks: { enabled: true, urls: [{ url: 'http://x/h', headers: {} }] } });
    // A bodiless request says nothing about a body it does not have.
    await t.call('deleteSource', { id: 's1' });
    expect(seen[2]).toMatchObject({ method: 'DELETE', url: '/api/sources/s1', contentType: undefined, body: '' });
    expect(seen[0].contentType).toBeUndefined();
  });

  it('throws ApiError with the engine’s field errors on a non-2xx answer', async () => {
    const { base } = await serve((_req, res) =>
      json(res, 400, { error: 'webhooks.urls[1].url: must be an absolute http: or https: URL', code: 'invalid_input', fields: [{ path: 'webhooks.urls[1].url', message: 'must be an absolute http: or https: URL' }] }),
    );
    const t = createHttpTransport({ token: 't', baseUrl: base });
    const err = await t.call('updateSource', { id: 's', webhooks: { enabled: false, urls: [] } }).catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(400);
    expect(err.code).toBe('invalid_input');
    expect(err.fieldMessage('webhooks.urls[1].url')).toBe('must be an absolute http: or https: URL');
    expect(err.fieldMessage('webhooks.urls[0].url')).toBeUndefined();
  });

  it('reports a non-JSON error body and an unreachable server as readable ApiErrors', async () => {
    const { base } = await serve((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end('bad gateway');
    });
    const t = createHttpTransport({ token: 't', baseUrl: base });
    const err = await t.call('health', {}).catch((e) => e);
    // No code in a body that is not ours: the status's own.
    expect(err).toMatchObject({ status: 502, code: 'internal', message: 'bad gateway' });
    server!.closeAllConnections();
    await new Promise((r) => server!.close(r));
    server = null;
    const down = await t.call('health', {}).catch((e) => e);
    expect(down).toBeInstanceOf(ApiError);
    expect(down.status).toBe(0);
    expect(down.code).toBe('unreachable');
    expect(down.message).toMatch(/Cannot reach Webhook Lab/);
  });
});

describe('HTTP transport: live events over SSE', () => {
  it('delivers each SSE message as one batch, sends the token in the header and reconnects when the stream ends', async () => {
    let connections = 0;
    const { base, seen } = await serve((req, res) => {
      if (req.url !== '/api/events') return json(res, 404, { error: 'no' });
      connections++;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': connected\r\n\r\n');
      if (connections === 1) {
        const batch: EngineEvent[] = [{ type: 'sources.changed' }, { type: 'attempt.recorded', callId: 7, attempt: { id: 1 } as never, delivery: {} as never }];
        const text = `data: ${JSON.stringify(batch)}\r\n\r\n`;
        // Split mid-line and mid-CRLF: the parser must reassemble.
        res.write(text.slice(0, 9));
        setTimeout(() => res.write(text.slice(9, text.length - 1)), 20);
        setTimeout(() => res.end(text.slice(text.length - 1)), 40);
      } else {
        res.write(`data: ${JSON.stringify([{ type: 'sources.changed' }])}\n\n`);
      }
    });
    const t = createHttpTransport({ token: 'secret-token', baseUrl: base, backoffMs: { initial: 20, max: 100 } });
    const statuses: ConnectionStatus[] = [];
    t.onStatus((s) => statuses.push(s));
    const batches: EngineEvent[][] = [];
    const got = new Promise<void>((resolve) => {
      const un = t.subscribe((events) => {
        batches.push(events);
        if (batches.length === 2) {
          un();
          resolve();
        }
      });
    });
    await got;
    expect(batches[0].map((e) => e.type)).toEqual(['sources.changed', 'attempt.recorded']);
    expect(batches[1]).toEqual([{ type: 'sources.changed' }]);
    expect(connections).toBe(2);
    const eventRequests = seen.filter((s) => s.url.startsWith('/api/events'));
    expect(eventRequests.every((s) => s.auth === 'Bearer secret-token' && s.url === '/api/events')).toBe(true);
    expect(statuses).toEqual(['closed', 'connecting', 'open', 'reconnecting', 'open', 'closed']);
  });

  it('backs off while the server refuses the stream', async () => {
    const times: number[] = [];
    const { base } = await serve((_req, res) => {
      times.push(Date.now());
      json(res, 503, { error: 'starting' });
    });
    const t = createHttpTransport({ token: 't', baseUrl: base, backoffMs: { initial: 25, max: 1000 } });
    const un = t.subscribe(() => {});
    await until(() => times.length >= 4);
    un();
    // Delays 50, 100, 200 ms: each try waits at least twice as long as the one before, not dozens
    // in a row. Lower bounds only, which a busy machine cannot break (a timer may fire 1 ms early).
    const gaps = times.slice(1, 4).map((x, i) => x - times[i]);
    expect(gaps[0]).toBeGreaterThanOrEqual(49);
    expect(gaps[1]).toBeGreaterThanOrEqual(99);
    expect(gaps[2]).toBeGreaterThanOrEqual(199);
  });
});

describe('SSE parser', () => {
  it('joins multi-line data, ignores comments and other fields', () => {
    const p = new SseParser();
    expect(p.push(': hi\nevent: x\nid: 3\ndata: [1,\ndata: 2]\n')).toEqual([]);
    expect(p.push('\n')).toEqual(['[1,\n2]']);
    expect(p.push('data:{"a":1}\r')).toEqual([]);
    expect(p.push('\n\r\n')).toEqual(['{"a":1}']);
  });
});
