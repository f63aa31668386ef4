import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { CallType } from '../../../shared/types';
import type { Ingest, IngestResponse } from './ingest';
import type { FaultReplies } from './fault-replies';
import { inOrder } from '../http-pipelining';
import { bodyTooLarge } from './content-encoding';

/** A route the fast path may take: its path as routed, the call type it implies, its body limit. */
export interface FastRoute {
  path: string;
  type: CallType | 'batch';
  bodyLimit: number;
}

const OK_TEXT = '{"success":true}';
const JSON_TYPE = 'application/json; charset=utf-8';
const DIGITS = /^\d{1,9}$/;

/**
 * The collector's calls without Fastify's request cycle (routing, hooks, content-type parsing, reply),
 * which cost a single call about a sixth of its time (issue 27): a POST to a call route, exactly as
 * routed (a query string allowed), with a Content-Length within the route's limit and no
 * Transfer-Encoding, while the collector is open, is read here and handed to the same Ingest as the
 * Fastify route. Everything else (chunked or oversized bodies, other methods and paths, a closing
 * collector) goes to Fastify as before, whose answers this one matches: the same statuses, bodies and
 * headers (tests/integration/collector-fast-path.test.ts). The Content-Type is not looked at, as on
 * the Fastify route: the body is JSON whatever it says.
 */
export class CallFastPath {
  private readonly routes = new Map<string, FastRoute>();
  private closing = false;

  constructor(
    private readonly ingest: Ingest,
    private readonly faults: FaultReplies,
  ) {}

  add(route: FastRoute): void {
    this.routes.set(route.path, route);
  }

  /** No new request is taken once the collector closes: Fastify answers them (503). */
  close(): void {
    this.closing = true;
  }

  /**
   * Puts the fast path in front of the server's request listener (Fastify's). Done once the app is
   * ready, so Fastify has its listener in place. Pipelined requests reach either one at a time
   * (inOrder): every call stored gets its answer, none is stored behind an answer that closes.
   */
  install(server: Server): void {
    const listeners = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
    if (listeners.length !== 1) throw new Error(`collector: expected one request listener, found ${listeners.length}`);
    const fastify = listeners[0];
    server.removeListener('request', fastify);
    server.on(
      'request',
      inOrder((req: IncomingMessage, res: ServerResponse) => {
        const route = this.closing ? undefined : this.take(req);
        if (route) this.read(req, res, route);
        else fastify(req, res);
      }),
    );
    // A client that asks first (Expect: 100-continue, as curl does for large bodies) about a body over
    // the route's limit gets the refusal instead of 100 Continue, and does not send the body at all.
    server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
      const over = this.overLimit(req);
      if (!over) {
        res.writeContinue();
        server.emit('request', req, res);
        return;
      }
      // The body may still come: the connection ends with the answer rather than read it as a request.
      res.shouldKeepAlive = false;
      send(res, 400, JSON.stringify({ success: false, message: bodyTooLarge(over.type === 'batch') }), undefined);
    });
  }

  /** The call route a POST names, when its Content-Length is over that route's limit. */
  private overLimit(req: IncomingMessage): FastRoute | undefined {
    const route = this.routeOf(req);
    const length = req.headers['content-length'];
    if (!route || length === undefined || !/^\d+$/.test(length)) return undefined;
    // The number, not its text: `0000000105` is 105 bytes (issue 38). Past 15 digits Number() rounds,
    // but any such number is over every limit.
    const digits = length.replace(/^0+(?=\d)/, '');
    return digits.length > 15 || Number(digits) > route.bodyLimit ? route : undefined;
  }

  /** The call route a POST names, exactly as routed (a query string allowed). */
  private routeOf(req: IncomingMessage): FastRoute | undefined {
    if (req.method !== 'POST') return undefined;
    const url = req.url ?? '';
    const q = url.indexOf('?');
    return this.routes.get(q === -1 ? url : url.slice(0, q));
  }

  private take(req: IncomingMessage): FastRoute | undefined {
    const route = this.routeOf(req);
    if (!route) return undefined;
    const length = req.headers['content-length'];
    if (length === undefined || req.headers['transfer-encoding'] !== undefined || !DIGITS.test(length)) return undefined;
    return Number(length) <= route.bodyLimit ? route : undefined;
  }

  private read(req: IncomingMessage, res: ServerResponse, route: FastRoute): void {
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
    };
    const onEnd = () => {
      req.removeListener('data', onData);
      req.removeListener('error', onError);
      // Node frames the body by its Content-Length: 'end' means all of it arrived. Copied, as Fastify
      // does: a chunk is a view of the socket's read, which may be far larger than this body.
      const body = Buffer.concat(chunks, received);
      this.ingest
        .handle({
          path: route.path,
          route: route.type,
          authorization: req.headers.authorization,
          contentType: req.headers['content-type'],
          contentEncoding: req.headers['content-encoding'],
          userAgent: req.headers['user-agent'],
          body,
        })
        .then(
          (r) => this.answer(req, res, r),
          // As the Fastify route's error handler: never a crash and never silent loss.
          (err: unknown) => send(res, 500, JSON.stringify({ success: false, message: `internal error: ${(err as Error)?.message}` }), undefined),
        );
    };
    // The client went away mid-body: nothing was handed over, nothing to answer.
    const onError = () => {
      req.removeListener('data', onData);
      req.removeListener('end', onEnd);
    };
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
  }

  private answer(req: IncomingMessage, res: ServerResponse, r: IngestResponse): void {
    if (r.fault) {
      if (r.fault.mode === 'status') send(res, r.fault.status, JSON.stringify(r.body), r.fault.retryAfterS);
      else this.faults.cut(req.socket as Socket, r.fault.mode);
      return;
    }
    send(res, r.status, r.status === 200 && r.body.success ? OK_TEXT : JSON.stringify(r.body), r.retryAfter, r.acceptEncoding);
  }
}

function send(res: ServerResponse, status: number, text: string, retryAfter: number | undefined, acceptEncoding?: string): void {
  if (res.writableEnded || res.destroyed) return;
  const headers: Record<string, string | number> = { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(text), 'access-control-allow-origin': '*' };
  if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
  if (acceptEncoding !== undefined) headers['accept-encoding'] = acceptEncoding;
  res.writeHead(status, headers);
  res.end(text);
}
