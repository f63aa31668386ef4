import { subscribe } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { rootCertificates } from 'node:tls';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import type { AttemptTiming } from '../../../shared/types';

export const DEFAULT_TIMEOUT_MS = 5000;
/** Response bodies are kept up to 64 KiB (SPEC §4); the rest is read and dropped. */
export const RESPONSE_BODY_LIMIT = 65536;

export interface SendRequest {
  url: string;
  headers: Record<string, string>;
  body: Buffer;
  /** Whole-attempt budget: connect + request + response headers + response body. Default 5000. */
  timeoutMs?: number;
}

export interface SendResult {
  /** Epoch ms from the injected clock when send() was called. */
  startedAt: number;
  /** Real elapsed time, whatever the injected clock says. */
  durationMs: number;
  status: number | null;
  /** Names lowercased; repeated headers joined with ", ". */
  responseHeaders: Record<string, string> | null;
  /** UTF-8, at most RESPONSE_BODY_LIMIT bytes of it. */
  responseBody: string | null;
  responseTruncated: boolean;
  errorCode: string | null;
  errorMessage: string | null;
  timedOut: boolean;
  tlsError: boolean;
  /** Connect, TLS, first byte and total, where measured; null when the request never had a connection. */
  timing: AttemptTiming | null;
}

export interface HttpSenderOptions {
  /** Keep-alive connections per receiver origin. Default 32. */
  connectionsPerOrigin?: number;
  /** Clock for startedAt (epoch ms). Durations and the timeout always use real time. */
  now?: () => number;
  /** Extra CA to trust besides the bundled roots (tests, local receivers). */
  ca?: string | Buffer;
}

interface Target {
  origin: string;
  path: string;
}

const TARGET_CACHE_MAX = 1024;
// One shared abort reason: its message is never shown, the result is built before aborting.
const TIMEOUT_REASON = new Error('attempt timed out');

/**
 * One POST per send(), over a single undici Agent (keep-alive pool per origin). Redirects are not
 * followed and the body is never re-encoded. send() never rejects and always settles within
 * timeoutMs of being called: the clock starts at send(), so time spent waiting for a free
 * connection counts, as connecting does. Callers that want the budget to start on the wire keep
 * no more than connectionsPerOrigin attempts in flight per origin.
 */
export class HttpSender {
  readonly #agent: Agent;
  readonly #now: () => number;
  readonly #targets = new Map<string, Target>();
  #inFlight = 0;
  #closed = false;
  #onIdle: (() => void) | null = null;

  constructor(opts: HttpSenderOptions = {}) {
    this.#now = opts.now ?? Date.now;
    this.#agent = new Agent({
      connections: opts.connectionsPerOrigin ?? 32,
      pipelining: 1,
      connect: timedConnector(buildConnector(opts.ca ? { ca: [...rootCertificates, opts.ca.toString()] } : {})),
    });
  }

  send(req: SendRequest): Promise<SendResult> {
    const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const startedAt = this.#now();
    if (this.#closed) return Promise.resolve(errorResult(startedAt, 'SENDER_CLOSED', 'sender closed'));
    let target: Target;
    try {
      target = this.#target(req.url);
    } catch {
      return Promise.resolve(errorResult(startedAt, 'ERR_INVALID_URL', `invalid URL: ${req.url}`));
    }
    this.#inFlight++;
    return new Promise<SendResult>((resolve) => {
      const attempt = new Attempt(this.#settled, resolve, startedAt, timeoutMs);
      // undici's own timeouts are coarse (up to ~0.5 s late); they only back ours up.
      const opts: Dispatcher.DispatchOptions = {
        origin: target.origin,
        path: target.path,
        method: 'POST',
        headers: req.headers,
        body: req.body,
        headersTimeout: timeoutMs + 1000,
        bodyTimeout: timeoutMs + 1000,
      };
      try {
        this.#agent.dispatch(opts, attempt);
      } catch (err) {
        attempt.onResponseError(null, err as Error);
      }
    });
  }

  /**
   * Waits for attempts in flight (each ends within its timeout), then drops every connection.
   * With `force`, drops them at once: attempts in flight end with an error (shutdown after its grace).
   */
  async close(opts: { force?: boolean } = {}): Promise<void> {
    this.#closed = true;
    if (this.#inFlight > 0 && !opts.force) await new Promise<void>((resolve) => (this.#onIdle = resolve));
    await this.#agent.destroy();
  }

  // One closure per sender, handed to every attempt.
  readonly #settled = (): void => {
    if (--this.#inFlight === 0 && this.#onIdle) {
      this.#onIdle();
      this.#onIdle = null;
    }
  };

  // Receiver URLs come from a handful of settings rows: parse each once, not per attempt.
  #target(url: string): Target {
    let t = this.#targets.get(url);
    if (t === undefined) {
      const u = new URL(url);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
      t = { origin: u.origin, path: u.pathname + u.search };
      if (this.#targets.size >= TARGET_CACHE_MAX) this.#targets.clear();
      this.#targets.set(url, t);
    }
    return t;
  }
}

/** The undici handler for one attempt; it also owns the timer, so there is one object per send(). */
class Attempt implements Dispatcher.DispatchHandler {
  #controller: Dispatcher.DispatchController | null = null;
  #done = false;
  #status: number | null = null;
  #headers: Record<string, string> | null = null;
  #chunks: Buffer[] = [];
  #kept = 0;
  #truncated = false;
  readonly #t0 = performance.now();
  #timer: NodeJS.Timeout;
  /** The connection the request went out on (set when its headers are written), and the first response byte. */
  #socket: SocketTiming | null = null;
  #reused = false;
  #firstByte: number | null = null;

  constructor(
    readonly onSettled: () => void,
    readonly resolve: (r: SendResult) => void,
    readonly startedAt: number,
    readonly timeoutMs: number,
  ) {
    this.#timer = setTimeout(onTimer, timeoutMs, this);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    // Timed out while waiting for a connection: never send it.
    if (this.#done) controller.abort(TIMEOUT_REASON);
    else {
      this.#controller = controller;
      // undici writes this request's headers next, in the same synchronous step: the channel's
      // message names the socket (the subscriber at the end of this file).
      nextOnSocket(this);
    }
  }

  /** @internal The socket this request is written on; its connect and TLS times if it is new. */
  onSocket(t: SocketTiming | undefined): void {
    if (!t) return;
    this.#socket = t;
    this.#reused = t.uses++ > 0;
  }

  onResponseStarted(): void {
    this.#firstByte ??= performance.now();
  }

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    if (this.#done) return;
    this.#status = statusCode;
    for (const name in headers) {
      const v = headers[name];
      if (typeof v !== 'string') headers[name] = Array.isArray(v) ? v.join(', ') : '';
    }
    this.#headers = headers as Record<string, string>;
  }

  onResponseData(_c: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#truncated || this.#done) return; // past the limit: drop without buffering
    const room = RESPONSE_BODY_LIMIT - this.#kept;
    if (chunk.length > room) {
      this.#truncated = true;
      chunk = chunk.subarray(0, room);
    }
    this.#kept += chunk.length;
    this.#chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (!this.#done) this.#finish(null, null, false, false);
  }

  onResponseError(_c: Dispatcher.DispatchController | null, err: Error): void {
    if (this.#done) return;
    const code = errorCode(err);
    const tls = isTlsCode(code);
    this.#finish(code, describeError(code, err, tls), false, tls);
  }

  /** @internal */
  expire(): void {
    if (this.#done) return;
    // libuv's cached loop time can start the timer a few ms early; the budget is real time.
    const left = this.timeoutMs - (performance.now() - this.#t0);
    if (left > 0) {
      this.#timer = setTimeout(onTimer, Math.ceil(left), this);
      return;
    }
    this.#finish('TIMEOUT', `timed out after ${this.timeoutMs} ms`, true, false);
    this.#controller?.abort(TIMEOUT_REASON);
  }

  #finish(code: string | null, message: string | null, timedOut: boolean, tlsError: boolean): void {
    this.#done = true;
    clearTimeout(this.#timer);
    const chunks = this.#chunks;
    const body = this.#status === null ? null
      : chunks.length === 1 ? chunks[0].toString('utf8')
      : Buffer.concat(chunks, this.#kept).toString('utf8');
    this.#chunks = [];
    const end = performance.now();
    this.resolve({
      startedAt: this.startedAt,
      durationMs: Math.round(end - this.#t0),
      status: this.#status,
      responseHeaders: this.#headers,
      responseBody: body,
      responseTruncated: this.#truncated,
      errorCode: code,
      errorMessage: message,
      timedOut,
      tlsError,
      timing: this.#timing(end),
    });
    this.onSettled();
  }

  #timing(end: number): AttemptTiming | null {
    const s = this.#socket;
    if (s === null) return null;
    const fresh = !this.#reused;
    return {
      connectMs: fresh && s.tcp !== null ? ms(s.tcp - s.start) : null,
      tlsMs: fresh && s.tls !== null && s.tcp !== null ? ms(s.tls - s.tcp) : null,
      ttfbMs: this.#firstByte === null ? null : ms(this.#firstByte - this.#t0),
      totalMs: ms(end - this.#t0),
      reused: this.#reused,
    };
  }
}

const ms = (v: number) => Math.round(Math.max(0, v) * 10) / 10;

/** When a connection was opened (performance.now()), connected, and finished its TLS handshake; how many requests it carried. */
interface SocketTiming {
  start: number;
  tcp: number | null;
  tls: number | null;
  uses: number;
}

const socketTimings = new WeakMap<object, SocketTiming>();

/** undici's own connector, with each new socket's connect and handshake times noted. */
function timedConnector(base: buildConnector.connector): buildConnector.connector {
  // Typed as returning nothing, undici's connector returns the socket it opens (lib/core/connect.js).
  const open = base as unknown as (o: buildConnector.Options, cb: buildConnector.Callback) => Socket | undefined;
  return (opts, callback) => {
    const t: SocketTiming = { start: performance.now(), tcp: null, tls: null, uses: 0 };
    const socket = open(opts, callback);
    if (!socket) return socket;
    socketTimings.set(socket, t);
    socket.once('connect', () => (t.tcp = performance.now()));
    if (opts.protocol === 'https:') socket.once('secureConnect', () => (t.tls = performance.now()));
    return socket;
  };
}

// The attempt whose request undici is about to write: set in onRequestStart, taken by the next
// sendHeaders message, which undici publishes in the same synchronous step (client-h1 writeH1). The
// channel is process-wide (Node's own fetch publishes there too), so nothing else is ever paired.
let assigning: Attempt | null = null;
function nextOnSocket(a: Attempt): void {
  assigning = a;
}
subscribe('undici:client:sendHeaders', (message) => {
  const a = assigning;
  assigning = null;
  if (a) a.onSocket(socketTimings.get((message as { socket: object }).socket));
});

function onTimer(a: Attempt): void {
  a.expire();
}

function errorResult(startedAt: number, code: string, message: string): SendResult {
  return {
    startedAt, durationMs: 0, status: null, responseHeaders: null, responseBody: null,
    responseTruncated: false, errorCode: code, errorMessage: message, timedOut: false, tlsError: false, timing: null,
  };
}

// The dispatch path reports socket/TLS errors as they are; undici wrappers (fetch, some connect
// paths) put them in `cause`, so a specific cause code beats a generic undici one.
function errorCode(err: Error & { code?: unknown; cause?: unknown }): string {
  const own = typeof err.code === 'string' ? err.code : null;
  const cause = err.cause as { code?: unknown } | undefined;
  const inner = cause && typeof cause.code === 'string' ? cause.code : null;
  if (inner && (!own || own.startsWith('UND_ERR_'))) return inner;
  return own ?? err.name ?? 'ERROR';
}

// OpenSSL certificate verification results as Node names them, plus Node's and OpenSSL's prefixes.
const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'UNABLE_TO_GET_CRL',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE', 'UNABLE_TO_DECRYPT_CRL_SIGNATURE', 'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'CERT_SIGNATURE_FAILURE', 'CRL_SIGNATURE_FAILURE', 'CERT_NOT_YET_VALID', 'CERT_HAS_EXPIRED',
  'CRL_NOT_YET_VALID', 'CRL_HAS_EXPIRED', 'ERROR_IN_CERT_NOT_BEFORE_FIELD', 'ERROR_IN_CERT_NOT_AFTER_FIELD',
  'ERROR_IN_CRL_LAST_UPDATE_FIELD', 'ERROR_IN_CRL_NEXT_UPDATE_FIELD', 'CERT_CHAIN_TOO_LONG', 'CERT_REVOKED',
  'INVALID_CA', 'PATH_LENGTH_EXCEEDED', 'INVALID_PURPOSE', 'CERT_UNTRUSTED', 'CERT_REJECTED', 'HOSTNAME_MISMATCH',
  'EPROTO',
]);

export function isTlsCode(code: string | null): boolean {
  return code !== null && (TLS_CODES.has(code) || code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_'));
}

const MESSAGES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the receiver',
  UND_ERR_SOCKET: 'socket closed by the receiver before the response was complete',
  EPIPE: 'connection closed while sending (broken pipe)',
  ENOTFOUND: 'DNS: host not found',
  EAI_AGAIN: 'DNS: temporary lookup failure',
  ETIMEDOUT: 'connect timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connect timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

function describeError(code: string, err: Error & { reason?: unknown; hostname?: unknown }, tls: boolean): string {
  if (tls) {
    // OpenSSL errors carry a short `reason`; their message is a raw error-stack line.
    const what = typeof err.reason === 'string' ? err.reason : err.message;
    return `TLS: ${what} (${code})`;
  }
  const known = MESSAGES[code];
  if (known === undefined) return err.message || code;
  return typeof err.hostname === 'string' ? `${known} (${err.hostname})` : known;
}
