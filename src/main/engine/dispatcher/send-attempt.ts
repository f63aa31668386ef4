import { performance } from 'node:perf_hooks';
import { brotliDecompressSync, constants as zlibConstants, gunzipSync, inflateSync } from 'node:zlib';
import type { Dispatcher } from 'undici';
import type { AttemptTiming } from '../../../shared/types';
import type { SendResult } from './send-result';
import { describeError, errorCode, isTlsCode } from './send-errors';
import { connectFailureTiming, nextOnSocket, type SocketListener, type SocketTiming } from './socket-timing';

// One attempt in flight, as undici's dispatch handler: it reads the response (up to the kept
// limit), owns the attempt's timer, and builds the SendResult when the attempt ends, however it ends.

/** Response bodies are kept up to 64 KiB (SPEC §4); the rest is read and dropped. */
export const RESPONSE_BODY_LIMIT = 65536;

/**
 * A compressed answer as its text: Actions requests say `accept-encoding: gzip,deflate` as Segment's
 * client does, so a receiver may compress. What was kept (possibly cut) is inflated as far as it
 * goes, to at most the kept limit; bytes that do not inflate are kept as they came.
 */
function decoded(body: Buffer, encoding: string | undefined): Buffer {
  const e = encoding?.trim().toLowerCase();
  if (body.length === 0 || (e !== 'gzip' && e !== 'deflate' && e !== 'br')) return body;
  const opts = { finishFlush: zlibConstants.Z_SYNC_FLUSH, maxOutputLength: RESPONSE_BODY_LIMIT };
  try {
    if (e === 'br') return brotliDecompressSync(body, { finishFlush: zlibConstants.BROTLI_OPERATION_FLUSH, maxOutputLength: RESPONSE_BODY_LIMIT });
    return e === 'gzip' ? gunzipSync(body, opts) : inflateSync(body, opts);
  } catch {
    return body;
  }
}

// One shared abort reason: its message is never shown, the result is built before aborting.
const TIMEOUT_REASON = new Error('attempt timed out');

/** The undici handler for one attempt; it also owns the timer, so there is one object per send(). */
export class SendAttempt implements Dispatcher.DispatchHandler, SocketListener {
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
  /** When the TLS handshake failed, before a request was written. */
  #handshakeFailed: number | null = null;
  #reused = false;
  #firstByte: number | null = null;
  /** The deadline passed once already: the loop has since read what the sockets held (expire()). */
  #lastLook = false;

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
      // message names the socket (socket-timing.ts).
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
    const failed = this.#socket === null ? connectFailureTiming(err) : undefined;
    if (failed) {
      this.#socket = failed;
      if (tls) this.#handshakeFailed = failed.failed;
    }
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
    // Timers run before the loop reads its sockets: after the loop was held (a busy machine, a long
    // task), an answer or a refusal that came in time may be waiting unread. One poll phase reads it
    // (setImmediate runs after it) before the attempt is called timed out (issue 44).
    if (!this.#lastLook) {
      this.#lastLook = true;
      // Not cleared when the attempt ends first: expire() then does nothing.
      setImmediate(onTimer, this);
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
      : decoded(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, this.#kept), this.#headers?.['content-encoding']).toString('utf8');
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
      // A handshake that failed: how long it ran before it did.
      tlsMs: !fresh || s.tcp === null ? null : s.tls !== null ? ms(s.tls - s.tcp) : this.#handshakeFailed !== null ? ms(this.#handshakeFailed - s.tcp) : null,
      ttfbMs: this.#firstByte === null ? null : ms(this.#firstByte - this.#t0),
      totalMs: ms(end - this.#t0),
      reused: this.#reused,
    };
  }
}

const ms = (v: number) => Math.round(Math.max(0, v) * 10) / 10;

// A module function, not a closure per attempt: setTimeout passes the attempt as its argument.
function onTimer(a: SendAttempt): void {
  a.expire();
}

/** The result of a send that never reached undici (closed sender, bad URL). */
export function notSentResult(startedAt: number, code: string, message: string): SendResult {
  return {
    startedAt, durationMs: 0, status: null, responseHeaders: null, responseBody: null,
    responseTruncated: false, errorCode: code, errorMessage: message, timedOut: false, tlsError: false, timing: null,
  };
}
