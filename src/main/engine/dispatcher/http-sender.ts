import { rootCertificates } from 'node:tls';
import type { Agent, Dispatcher } from 'undici';
import type { ActionsMethod } from '../../../shared/types';
import { CLASSIC_TIMEOUT_MS } from '../../../shared/actions/retry-classes';
import { basicAuthOf, maskUrlPassword } from '../../../shared/url-credentials';
import { loadOnce } from '../../../shared/load-once';
import { notSentResult, SendAttempt } from './send-attempt';
import type { SendResult } from './send-result';
import { timedConnector } from './socket-timing';

// The sender and its types. One attempt's response reading and timer: send-attempt.ts; connect and
// TLS timing: socket-timing.ts; naming network and TLS failures: send-errors.ts.

/** Classic's 5 s (shared/actions/retry-classes.ts), when a request names no timeout. */
export const DEFAULT_TIMEOUT_MS = CLASSIC_TIMEOUT_MS;

export interface SendRequest {
  url: string;
  /** Default POST (Classic); an Actions mapping's may be PUT or PATCH. */
  method?: ActionsMethod;
  headers: Record<string, string>;
  body: Buffer;
  /** Whole-attempt budget: connect + request + response headers + response body. Default 5000 (Classic); Actions deliveries pass 10000. */
  timeoutMs?: number;
}

export type { SendResult } from './send-result';

export interface HttpSenderOptions {
  /** Keep-alive connections per receiver origin; null = as many as requests out. Default 32. */
  connectionsPerOrigin?: number | null;
  /** Clock for startedAt (epoch ms). Durations and the timeout always use real time. */
  now?: () => number;
  /** Extra CA to trust besides the bundled roots (tests, local receivers). */
  ca?: string | Buffer;
  /**
   * Accept any certificate (the probe, after it has reported an untrusted one, so that its other
   * checks can still see the receiver's answers). Never used for deliveries.
   */
  acceptAnyCertificate?: boolean;
}

interface Target {
  origin: string;
  path: string;
  /** `Basic …` from the URL's `user:password@` (README, Decisions), or null. */
  auth: string | null;
}

const TARGET_CACHE_MAX = 1024;

/**
 * undici, loaded by the first sender to send: it is the largest module a start would load, and the
 * inspector's first page needs none of it. A failed load is tried again by the next send.
 */
const undici = loadOnce(() => import('undici'));

/**
 * One request per send() (POST unless told otherwise), over a single undici Agent (keep-alive pool per origin). Redirects are not
 * followed and the body is never re-encoded. send() never rejects and always settles within
 * timeoutMs of its attempt's start: the clock starts at send() (a sender's first sends: once undici
 * is loaded, see below), so time spent waiting for a free connection counts, as connecting does. Callers that want the budget to start on the wire keep
 * no more than connectionsPerOrigin attempts in flight per origin.
 */
export class HttpSender {
  #agent: Agent | null = null;
  readonly #opts: HttpSenderOptions;
  readonly #now: () => number;
  readonly #targets = new Map<string, Target>();
  #inFlight = 0;
  #closed = false;
  #forced = false;
  // Every close() waiting for attempts in flight (a second close must not orphan the first).
  readonly #onIdle: Array<() => void> = [];

  constructor(opts: HttpSenderOptions = {}) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
  }

  /** The agent, made once undici is loaded; a failed load (or Agent) is tried again by the next send. */
  readonly #agentLoad = loadOnce(() =>
    undici.get().then(({ Agent, buildConnector }) => {
      const opts = this.#opts;
      this.#agent = new Agent({
        connections: opts.connectionsPerOrigin === undefined ? 32 : opts.connectionsPerOrigin,
        pipelining: 1,
        connect: timedConnector(
          buildConnector(opts.acceptAnyCertificate ? { rejectUnauthorized: false } : opts.ca ? { ca: [...rootCertificates, opts.ca.toString()] } : {}),
        ),
      });
      return this.#agent;
    }),
  );

  send(req: SendRequest): Promise<SendResult> {
    if (this.#closed) return Promise.resolve(this.#closedResult());
    if (this.#agent !== null) return this.#sendNow(req, this.#agent);
    // The first sends wait for undici before their clocks start: loading the lab's own code is not
    // the receiver's time (an attempt's timing and the probe's latency would count it). Counted in
    // flight meanwhile, so a close waits for them (a forced one ends them as closed).
    this.#inFlight++;
    return this.#agentLoad.get().then(
      (agent) => {
        const sent = this.#forced ? Promise.resolve(this.#closedResult()) : this.#sendNow(req, agent);
        this.#settled();
        return sent;
      },
      (err: Error) => {
        this.#settled();
        return notSentResult(this.#now(), 'ERR_HTTP_CLIENT_LOAD', `the lab could not start its HTTP client: ${err.message}`);
      },
    );
  }

  #closedResult(): SendResult {
    return notSentResult(this.#now(), 'SENDER_CLOSED', 'sender closed');
  }

  #sendNow(req: SendRequest, agent: Agent): Promise<SendResult> {
    const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const startedAt = this.#now();
    let target: Target;
    try {
      target = this.#target(req.url);
    } catch {
      return Promise.resolve(notSentResult(startedAt, 'ERR_INVALID_URL', `invalid URL: ${maskUrlPassword(req.url)}`));
    }
    this.#inFlight++;
    return new Promise<SendResult>((resolve) => {
      const attempt = new SendAttempt(this.#settled, resolve, startedAt, timeoutMs);
      // undici's own timeouts are coarse (up to ~0.5 s late); they only back ours up.
      const opts: Dispatcher.DispatchOptions = {
        origin: target.origin,
        path: target.path,
        method: req.method ?? 'POST',
        headers: target.auth === null ? req.headers : withBasicAuth(req.headers, target.auth),
        body: req.body,
        headersTimeout: timeoutMs + 1000,
        bodyTimeout: timeoutMs + 1000,
      };
      try {
        agent.dispatch(opts, attempt);
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
    if (opts.force) this.#forced = true;
    if (this.#inFlight > 0 && !opts.force) await new Promise<void>((resolve) => this.#onIdle.push(resolve));
    // A first send may still be loading undici: its agent is made, then destroyed with the rest.
    const agent = this.#agent ?? (await this.#agentLoad.peek()?.catch(() => null));
    await agent?.destroy();
  }

  // One closure per sender, handed to every attempt.
  readonly #settled = (): void => {
    if (--this.#inFlight === 0) for (const resolve of this.#onIdle.splice(0)) resolve();
  };

  // Receiver URLs come from a handful of settings rows: parse each once, not per attempt.
  #target(url: string): Target {
    let t = this.#targets.get(url);
    if (t === undefined) {
      const u = new URL(url);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
      t = { origin: u.origin, path: u.pathname + u.search, auth: basicAuthOf(u) };
      if (this.#targets.size >= TARGET_CACHE_MAX) this.#targets.clear();
      this.#targets.set(url, t);
    }
    return t;
  }
}

/**
 * The URL's credentials as `Authorization`, as curl and Node's http `auth` send them: a static
 * Authorization header of the URL or mapping wins. Added here, on the wire only, so the attempt
 * recorded for the inspector never holds the password.
 */
function withBasicAuth(headers: Record<string, string>, auth: string): Record<string, string> {
  for (const name in headers) if (name.toLowerCase() === 'authorization') return headers;
  // Actions requests send lowercased names (Segment's request client); Classic ones capitalized.
  return { ...headers, [headers['user-agent'] === undefined ? 'Authorization' : 'authorization']: auth };
}
