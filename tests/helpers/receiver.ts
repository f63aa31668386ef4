import { createServer as createHttpServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { TlsMaterial } from './tls';

/** One request as the receiver saw it, body as the raw bytes that arrived. */
export interface ReceivedRequest {
  method: string;
  /** Path and query. */
  url: string;
  headers: IncomingHttpHeaders;
  /** Name/value pairs in arrival order, names as sent. */
  rawHeaders: string[];
  body: Buffer;
  receivedAt: number;
}

/** Called once the whole body is in; `res` is still open. A returned promise that rejects answers 500. */
export type ReceiverHandler = (req: ReceivedRequest, res: ServerResponse, raw: IncomingMessage) => unknown;

export interface TestReceiver {
  /** Base URL without a trailing slash, e.g. http://127.0.0.1:43121 */
  url: string;
  port: number;
  server: Server;
  requests: ReceivedRequest[];
  /** Transport-level counts: TCP connections, completed TLS handshakes, failed TLS handshakes, requests begun. */
  stats: { connections: number; secureConnections: number; tlsClientErrors: number; requestEvents: number };
  /** Resolves when at least n requests were recorded, rejects after timeoutMs. */
  waitForRequests(n: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

const ok: ReceiverHandler = (_req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
};

/** A real HTTP receiver on 127.0.0.1, port 0 (or the port given: another program holding it). */
export function startReceiver(handler: ReceiverHandler = ok, port = 0): Promise<TestReceiver> {
  return listen(createHttpServer(), handler, 'http', port);
}

/** The same over TLS with the given key/cert (see tls.ts for a self-signed one). */
export function startHttpsReceiver(tls: TlsMaterial, handler: ReceiverHandler = ok): Promise<TestReceiver> {
  const server = createHttpsServer({ key: tls.key, cert: tls.cert });
  return listen(server, handler, 'https');
}

async function listen(server: Server, handler: ReceiverHandler, scheme: 'http' | 'https', wanted = 0): Promise<TestReceiver> {
  const requests: ReceivedRequest[] = [];
  const stats = { connections: 0, secureConnections: 0, tlsClientErrors: 0, requestEvents: 0 };
  const sockets = new Set<Socket>();
  const waiters: { n: number; resolve: () => void }[] = [];

  server.on('connection', (s: Socket) => {
    stats.connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('secureConnection', () => stats.secureConnections++);
  server.on('tlsClientError', () => stats.tlsClientErrors++);
  server.on('request', (raw: IncomingMessage, res: ServerResponse) => {
    stats.requestEvents++;
    const chunks: Buffer[] = [];
    raw.on('data', (c: Buffer) => chunks.push(c));
    raw.on('end', () => {
      const rec: ReceivedRequest = {
        method: raw.method ?? '',
        url: raw.url ?? '',
        headers: raw.headers,
        rawHeaders: raw.rawHeaders,
        body: Buffer.concat(chunks),
        receivedAt: Date.now(),
      };
      requests.push(rec);
      for (let i = waiters.length - 1; i >= 0; i--) {
        if (requests.length >= waiters[i].n) waiters.splice(i, 1)[0].resolve();
      }
      Promise.resolve(handler(rec, res, raw)).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500).end(String(err));
        else res.destroy();
      });
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(wanted, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `${scheme}://127.0.0.1:${port}`,
    port,
    server,
    requests,
    stats,
    waitForRequests(n, timeoutMs = 5000) {
      if (requests.length >= n) return Promise.resolve(requests);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`receiver got ${requests.length} of ${n} requests`)), timeoutMs);
        waiters.push({ n, resolve: () => (clearTimeout(timer), resolve(requests)) });
      });
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A port that was just free and now refuses connections. */
export async function closedPort(): Promise<number> {
  // Below Linux's ephemeral range (32768–60999), where servers listening on port 0 and outgoing
  // connections take their ports: a port freed from that range was seen taken again by a test
  // running beside this one. Checked refused before it is given.
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
    });
    if (refused) return port;
  }
}
