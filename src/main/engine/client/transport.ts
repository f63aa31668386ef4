import type { Dispatcher } from 'undici';
import { loadOnce } from '../../../shared/load-once';

export interface TransportRequest {
  url: string;
  headers: Record<string, string>;
  /** The batch as UTF-8 JSON bytes, built once per batch and sent unchanged on every retry. */
  body: Buffer;
  /** The whole exchange (connect, headers, body) must finish within this many ms. */
  timeoutMs: number;
}

export interface TransportResponse {
  status: number;
  /** Response body text (the collector answers `{"success": ...}`); used in error messages only. */
  body: string;
}

/**
 * Sends one batch request. Resolves with any HTTP status; rejects only when no status was received
 * (connection refused/reset, DNS, timeout) — the client retries those.
 */
export interface Transport {
  send(req: TransportRequest): Promise<TransportResponse>;
  /** Releases sockets; called by Analytics.close() for transports it created itself. */
  close?(): Promise<void>;
}

export class TransportTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
  constructor(ms: number) {
    super(`request timed out after ${ms} ms`);
    this.name = 'TransportTimeoutError';
  }
}

// Error text from a collector can be anything; keep what goes into messages and events short.
const MAX_BODY_CHARS = 2000;
/** At most this much of an answer's body is read: enough for MAX_BODY_CHARS characters of any UTF-8. */
const MAX_BODY_BYTES = MAX_BODY_CHARS * 4;

/**
 * The start of an answer's body, once its status has come. The status is the collector's decision:
 * a body that stalls (until httpTimeout aborts it), breaks or runs on forever changes nothing, and is
 * never read further than an error message needs (leaving the loop early cancels the rest).
 */
async function readBodyStart(body: AsyncIterable<Uint8Array> | null | undefined, text?: () => Promise<string>): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    if (!body || typeof body[Symbol.asyncIterator] !== 'function') return text ? (await text()).slice(0, MAX_BODY_CHARS) : '';
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= MAX_BODY_BYTES) break;
    }
  } catch {
    // Timed out, reset or aborted after the status: keep what came.
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, MAX_BODY_CHARS);
}

/** Default transport: undici `request` over a keep-alive Agent, with an exact timeout of our own. */
export function createUndiciTransport(options: { dispatcher?: Dispatcher; connections?: number } = {}): Transport {
  const owned = !options.dispatcher;
  // undici's own headers/body timeouts are coarse (they fire up to ~0.5 s late), so the AbortSignal
  // below enforces httpTimeout; these are only a backstop.
  // No socket limit by default: the client's `concurrency` (which configure() may raise) already bounds
  // its requests, and one waiting here for a socket would run down its httpTimeout before it is sent.
  // undici is loaded by the first send, before its timeout starts, not by importing the client: a
  // program (or the lab) that makes a client but sends nothing yet does not pay for the largest
  // module it has. A failed load is tried again by the next send.
  const loaded = loadOnce(() =>
    import('undici').then((undici) => ({
      request: undici.request,
      dispatcher: options.dispatcher ?? new undici.Agent({ keepAliveTimeout: 10_000, connections: options.connections ?? null }),
    })),
  );
  let closed = false;
  return {
    async send(req) {
      // As a closed Agent refuses a request (closed before its first send, no Agent was made).
      if (closed) throw Object.assign(new Error('The client is closed'), { code: 'UND_ERR_CLOSED' });
      const { request, dispatcher } = await loaded.get();
      const ac = new AbortController();
      const timer = setTimeout(() => ac.abort(new TransportTimeoutError(req.timeoutMs)), req.timeoutMs);
      try {
        const res = await request(req.url, {
          method: 'POST',
          headers: req.headers,
          body: req.body,
          dispatcher,
          signal: ac.signal,
        });
        return { status: res.statusCode, body: await readBodyStart(res.body) };
      } catch (err) {
        // Abort surfaces as undici's AbortError; report the timeout itself.
        if (ac.signal.aborted) throw ac.signal.reason;
        throw err;
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {
      // A dispatcher given is the caller's to close, and stays usable.
      if (!owned) return;
      closed = true;
      const made = await loaded.peek()?.catch(() => undefined);
      if (made) await made.dispatcher.close();
    },
  };
}

/** Adapts any WHATWG `fetch` (global fetch, undici fetch, a test double) to a Transport. */
export function createFetchTransport(fetchFn: typeof fetch): Transport {
  return {
    async send(req) {
      const ac = new AbortController();
      const timer = setTimeout(() => ac.abort(new TransportTimeoutError(req.timeoutMs)), req.timeoutMs);
      try {
        // Our bodies never sit on a SharedArrayBuffer, which is all that fetch's BodyInit type excludes.
        const body = req.body as Uint8Array<ArrayBuffer>;
        const res = await fetchFn(req.url, { method: 'POST', headers: req.headers, body, signal: ac.signal });
        return { status: res.status, body: await readBodyStart(res.body as AsyncIterable<Uint8Array> | null, () => res.text()) };
      } catch (err) {
        if (ac.signal.aborted) throw ac.signal.reason;
        throw err;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
