import { STATUS_CODES, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { afterReceivedAnswered } from './http-pipelining';

/**
 * Timeouts of every HTTP server Webhook Lab runs: the collector, the control API/UI server and the
 * mock receivers' HTTP and HTTPS listeners. They bound receiving a request only: answering it is not
 * limited, so the event stream (/api/events), a streamed export and a receiver's `hang` or delay
 * last as long as they need.
 */
export interface HttpTimeouts {
  /** The request line and headers must have arrived within this, from the start of the request. */
  headersMs: number;
  /** The whole request, body included, must have arrived within this. */
  requestMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveMs: number;
  /** Node checks the two limits above on an interval (30 s by default), not per request. */
  checkIntervalMs: number;
}

/** The defaults (README, The collector, "Limits and timeouts"): a stalled request gets 408 within about 31 s. */
export const HTTP_TIMEOUTS: Readonly<HttpTimeouts> = Object.freeze({
  headersMs: 10_000,
  requestMs: 30_000,
  keepAliveMs: 10_000,
  checkIntervalMs: 1_000,
});

/**
 * After an answer on a connection that is closing, what the client still sends is read and discarded
 * for up to this long (counted once the answer is out) before the connection is destroyed. Closing a
 * socket whose input was not read makes the kernel send a TCP reset, and a client still writing its
 * body then often loses the answer.
 */
export const DRAIN_MS = 5_000;

/** The options of http(s).createServer for these timeouts (keepAliveTimeout is set on the server). */
export function nodeServerOptions(t: HttpTimeouts) {
  return { headersTimeout: t.headersMs, requestTimeout: t.requestMs, connectionsCheckingInterval: t.checkIntervalMs };
}

/**
 * For a node:http(s) server created with nodeServerOptions: the keep-alive timeout, the answer to
 * client errors (clientErrorHandler) and closes without a reset (closeConnectionsGracefully).
 */
export function guardServer(server: Server, t: HttpTimeouts, body: ErrorBody): void {
  server.keepAliveTimeout = t.keepAliveMs;
  server.on('clientError', clientErrorHandler(t, body));
  closeConnectionsGracefully(server);
}

/**
 * Fastify's options for these timeouts and for answering client errors (instead of its handler,
 * which destroys the socket at once); call closeConnectionsGracefully(app.server) too.
 */
export function fastifyServerOptions(t: HttpTimeouts, body: ErrorBody) {
  return { requestTimeout: t.requestMs, keepAliveTimeout: t.keepAliveMs, http: nodeServerOptions(t), clientErrorHandler: clientErrorHandler(t, body) };
}

/** Each server's JSON shape for an error: the collector's `{success, message}`, the control API's `{error}`. */
export type ErrorBody = (message: string) => unknown;

const answered = new WeakSet<Duplex>();
/** Connections with a client error whose answer waits for earlier answers (afterReceivedAnswered). */
const failing = new WeakSet<Duplex>();

/**
 * Handles Node's 'clientError': a request whose headers or body did not arrive in time (408), whose
 * request line and headers exceed Node's 16 KB (431), or that is not HTTP (400). Answers with a JSON
 * body and `Connection: close` when nothing was answered on the connection yet, then closes it
 * without a reset (closeGracefully). Node's and Fastify's own handlers destroy the socket at once.
 * The answers of requests received in full before the error (pipelined) are written first, in order.
 */
export function clientErrorHandler(t: HttpTimeouts, body: ErrorBody) {
  return (err: NodeJS.ErrnoException, socket: Duplex): void => {
    // The rest of a request we already answered and are draining, or more of what failed to parse.
    if (answered.has(socket) || failing.has(socket)) return;
    if (socket.destroyed || err.code === 'ECONNRESET' || err.code === 'EPIPE') {
      socket.destroy();
      return;
    }
    const status = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
    const message =
      status === 408
        ? `request timeout: the headers must arrive within ${seconds(t.headersMs)} and the whole request within ${seconds(t.requestMs)}`
        : status === 431
          ? 'request line and headers are larger than 16 KB'
          : `bad request: ${err.code ?? 'malformed HTTP'}`;
    failing.add(socket);
    afterReceivedAnswered(socket, () => {
      if (answered.has(socket)) return; // one of those answers closed the connection
      // A response already begun on this connection (headers written) cannot be followed by another.
      const pending = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
      if (socket.writable && !pending?.headersSent) {
        const text = JSON.stringify(body(message));
        socket.write(
          `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nconnection: close\r\ncontent-type: application/json; charset=utf-8\r\n` +
            `content-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
        );
      }
      closeGracefully(socket);
    });
  };
}

/**
 * Ends our side of the connection after what was written, and destroys it once the client has closed
 * its side, or DRAIN_MS after our answer is out. Meanwhile Node's HTTP parser keeps reading what the
 * client sends and discards it: the rest of a request's body (Node dumps the body of a request
 * answered without reading it) or, after a parse error, anything.
 */
export function closeGracefully(socket: Duplex): void {
  if (answered.has(socket)) return;
  answered.add(socket);
  let timer: NodeJS.Timeout | undefined;
  // Never destroy before our answer is out: what is still buffered would be lost.
  const destroyWhenSent = () => (socket.writableFinished ? socket.destroy() : socket.once('finish', () => socket.destroy()));
  const startClock = () => {
    timer = setTimeout(() => socket.destroy(), DRAIN_MS);
    timer.unref();
  };
  socket.once('end', destroyWhenSent);
  socket.once('close', () => clearTimeout(timer));
  socket.on('error', () => socket.destroy());
  socket.end();
  if (socket.writableFinished) startClock();
  else socket.once('finish', startClock);
}

/**
 * Every connection the server closes after an answer is closed with closeGracefully. Node closes a
 * connection after answering a request that asked for it, or whose answer says `Connection: close`
 * (Fastify says so when it refuses a body, over the limit for example, while the client may still be
 * sending it), by ending it and destroying it at once (socket.destroySoon): with the rest of that body
 * unread, the kernel resets the connection and the client often loses the answer.
 */
export function closeConnectionsGracefully(server: Server): void {
  const take = (socket: Duplex & { destroySoon?: () => void }) => {
    socket.destroySoon = () => closeGracefully(socket);
  };
  // The HTTP layer's socket: the TCP one, or over TLS the TLS one.
  server.on('connection', take);
  server.on('secureConnection', take);
  server.on('timeout', closeIdleAfterReading);
}

/**
 * The keep-alive timeout (the only socket timeout these servers set: server.timeout stays 0), in
 * place of Node's own close. Timers run before the loop reads its sockets: after the loop was held
 * (a busy machine, a long task), a client's next request may already wait unread on a connection
 * whose timer is overdue, and Node would destroy it with that request, which the client sees as a
 * reset (issue 44: ECONNRESET under load). One poll phase reads what came first (setImmediate runs
 * after it); a connection that received nothing meanwhile is closed as Node would.
 */
function closeIdleAfterReading(socket: Duplex & { bytesRead?: number; _httpMessage?: unknown }): void {
  const read = socket.bytesRead;
  setImmediate(() => {
    if (socket.destroyed) return;
    // Bytes of a new request arrived: Node cleared the keep-alive timer for it (or the headers
    // timeout now bounds it); a response under way is not idle.
    if (socket.bytesRead !== read || socket._httpMessage) return;
    socket.destroy();
  });
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
