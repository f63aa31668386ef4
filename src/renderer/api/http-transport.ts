import type { Api, EngineEvent, OpInput, OpName, OpOutput } from '../../shared/api.contract';
import { ApiError } from '../../shared/api-error';
import { API_PREFIX, EXPORT_FILE_PATH, toHttpRequest } from '../../shared/http-mapping';
import { sameQuery, type EarlyAnswer, type EarlyRequest } from './early-request';
import { SseParser } from './sse-parser';
import type { ConnectionStatus, Transport } from './transport.types';

// Web mode transport: JSON over HTTP under /api with a Bearer token, live events from GET /api/events
// (SSE). The stream is read with fetch + ReadableStream rather than EventSource so the token travels
// in the Authorization header, never in a URL.

// The contract holds every operation's zod schema, and the transport needs only methods and paths:
// it is loaded with the first call that needs it, so zod is not parsed and run before the first render.
let contract: Promise<Api> | null = null;
const loadApi = () => (contract ??= import('../../shared/api.contract').then((m) => m.api));

export interface HttpTransportOptions {
  token: string;
  /** Origin of the control API; '' = same origin as the page. */
  baseUrl?: string;
  fetch?: typeof fetch;
  /** Reconnect backoff: first delay and cap, ms. */
  backoffMs?: { initial: number; max: number };
  /** A GET already under way (early-request.ts): answers the first call to that URL instead of a new fetch. */
  early?: EarlyRequest | null;
}

export function createHttpTransport(opts: HttpTransportOptions): Transport & { close(): void } {
  const base = (opts.baseUrl ?? '').replace(/\/+$/, '');
  const doFetch = opts.fetch ?? ((input, init) => fetch(input, init));
  const backoff = opts.backoffMs ?? { initial: 500, max: 10_000 };
  const auth = { Authorization: `Bearer ${opts.token}` };

  const listeners = new Set<(events: EngineEvent[]) => void>();
  const statusListeners = new Set<(s: ConnectionStatus) => void>();
  let status: ConnectionStatus = 'closed';
  let abort: AbortController | null = null;
  let retryTimer: ReturnType<typeof setTimeout> | null = null;
  let early = opts.early ?? null;

  const setStatus = (s: ConnectionStatus) => {
    if (s === status) return;
    status = s;
    for (const l of statusListeners) l(s);
  };

  /** Status and the whole body text: a call is not answered until its body is read. */
  async function exchange(name: OpName, input: Record<string, unknown>, signal: AbortSignal | undefined): Promise<EarlyAnswer> {
    const e = early;
    if (e && e.op === name && sameQuery(e.input, input)) {
      early = null;
      try {
        return await e.answer;
      } catch {
        // The early request failed (network): ask again the ordinary way.
      }
    }
    const req = toHttpRequest((await loadApi())[name], input);
    const res = await doFetch(base + req.url, {
      method: req.method,
      headers: req.body === undefined ? auth : { ...auth, 'Content-Type': 'application/json' },
      body: req.body,
      signal,
    });
    return { status: res.status, body: await res.text() };
  }

  const unreachable = (err: unknown) =>
    new ApiError(0, `Cannot reach Webhook Lab at ${base || 'this page'}: ${(err as Error).message}. Is it still running? Start it again (webhook-lab serve), then retry.`);

  /** A non-2xx answer as ApiError: the engine's `{error, fields}` when the body is that, else its text. */
  function answerError(status: number, text: string, json: unknown): ApiError {
    const body = json && typeof json === 'object' ? (json as { error?: string }) : { error: text.slice(0, 200) || undefined };
    return ApiError.fromBody(status, body);
  }

  async function call<K extends OpName>(name: K, input: OpInput<K>, opts?: { signal?: AbortSignal }): Promise<OpOutput<K>> {
    let res: EarlyAnswer;
    try {
      res = await exchange(name, (input ?? {}) as Record<string, unknown>, opts?.signal);
    } catch (err) {
      // Withdrawn by its caller: not the engine's absence.
      if (opts?.signal?.aborted) throw err;
      throw unreachable(err);
    }
    const text = res.body;
    const ok = res.status >= 200 && res.status < 300;
    let json: unknown = null;
    if (text) {
      try {
        json = JSON.parse(text);
      } catch {
        if (ok) throw new ApiError(res.status, `${name}: the server answered with something that is not JSON`);
      }
    }
    if (!ok) throw answerError(res.status, text, json);
    return json as OpOutput<K>;
  }

  /** The streamed export route: the engine never holds the file whole, the browser keeps it as a Blob. */
  async function exportFile(input: OpInput<'exportDeliveries'>): Promise<{ filename: string; blob: Blob }> {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(input)) if (value !== undefined && value !== '') query.set(key, String(value));
    let res: Response;
    try {
      res = await doFetch(`${base}${API_PREFIX}${EXPORT_FILE_PATH}?${query}`, { headers: auth });
    } catch (err) {
      throw unreachable(err);
    }
    if (!res.ok) {
      const text = await res.text();
      let json: unknown = null;
      try {
        json = JSON.parse(text);
      } catch {
        // not JSON: the text itself is the best message
      }
      throw answerError(res.status, text, json);
    }
    const filename = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? 'webhook-lab-export';
    return { filename, blob: await res.blob() };
  }

  async function stream(signal: AbortSignal, attempt: number): Promise<void> {
    let opened = false;
    try {
      const res = await doFetch(`${base}/api/events`, { headers: { ...auth, Accept: 'text/event-stream' }, signal });
      if (!res.ok || !res.body) throw new Error(`events: HTTP ${res.status}`);
      opened = true;
      setStatus('open');
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      const parser = new SseParser();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        for (const data of parser.push(value)) deliver(data);
      }
    } catch {
      if (signal.aborted) return;
    }
    if (signal.aborted) return;
    // The server closed or failed: back off (reset after a stream that did open) and reconnect.
    const next = opened ? 0 : attempt + 1;
    const delay = Math.min(backoff.max, backoff.initial * 2 ** next);
    setStatus('reconnecting');
    retryTimer = setTimeout(() => {
      retryTimer = null;
      if (!signal.aborted) void stream(signal, next);
    }, delay);
  }

  function deliver(data: string) {
    let events: unknown;
    try {
      events = JSON.parse(data);
    } catch {
      return;
    }
    const batch = (Array.isArray(events) ? events : [events]) as EngineEvent[];
    if (batch.length === 0) return;
    for (const l of [...listeners]) l(batch);
  }

  function start() {
    abort = new AbortController();
    setStatus('connecting');
    void stream(abort.signal, 0);
  }

  function stop() {
    abort?.abort();
    abort = null;
    if (retryTimer) clearTimeout(retryTimer);
    retryTimer = null;
    setStatus('closed');
  }

  return {
    kind: 'http',
    call,
    exportFile,
    subscribe(listener) {
      listeners.add(listener);
      if (listeners.size === 1) start();
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0) stop();
      };
    },
    onStatus(listener) {
      statusListeners.add(listener);
      listener(status);
      return () => statusListeners.delete(listener);
    },
    close: stop,
  };
}
