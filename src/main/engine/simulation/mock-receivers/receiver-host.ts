import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import {
  mockReceiverSchema,
  type MockReceiver,
  type MockRequestRecord,
} from '../../../../shared/mock-receiver.schema';
import { ValidationError, formatPath, parseOrThrow } from '../../../../shared/validation-error';
import { answerItems, createBehaviorState, decide, type BehaviorState } from './behavior';
import { screenRequest, screens } from './screening';
import { Exchange } from './exchange';
import { loadOrCreateCertificate, type CertificatePair } from './self-signed-cert';
import { guardServer, HTTP_TIMEOUTS, nodeServerOptions, type HttpTimeouts } from '../../http-timeouts';

export interface MockReceiverHostOptions {
  /** Where cert.pem and key.pem are kept (created on first start, reused afterwards). */
  dataDir: string;
  /** Bind address; loopback by default so mock receivers are never reachable from the network. */
  host?: string;
  httpPort?: number;
  httpsPort?: number;
  /** Every finished exchange, in order; the app persists these. A throwing sink never breaks the host. */
  onRequest?: (record: MockRequestRecord) => void;
  onSinkError?: (err: unknown) => void;
  /** Records kept in memory per receiver for requests(id). */
  historyLimit?: number;
  /** Body bytes kept per record; the signature is still checked over every byte. */
  bodyLimitBytes?: number;
  now?: () => number;
  /** Seeds for behaviors without `seed` (tests pin it). */
  seedSource?: () => number;
  /** Receiving limits of both listeners (answering, a hang included, is not limited). */
  timeouts?: HttpTimeouts;
}

interface Entry {
  def: MockReceiver;
  /** Canonical JSON of the definition: a change resets the counters, an identical upsert does not. */
  key: string;
  state: BehaviorState;
}

interface Listener {
  server: http.Server;
  port: number;
}

/** Serves every mock receiver over one HTTP and one HTTPS listener, routed by exact path. */
export class MockReceiverHost {
  private readonly entries = new Map<string, Entry>();
  private readonly history = new Map<string, MockRequestRecord[]>();
  private readonly sockets = new Set<Socket>();
  private readonly exchanges = new Set<Exchange>();
  private readonly opts: Required<Omit<MockReceiverHostOptions, 'onRequest' | 'onSinkError'>> &
    Pick<MockReceiverHostOptions, 'onRequest' | 'onSinkError'>;
  private http: Listener | null = null;
  private https: Listener | null = null;
  private certificate: CertificatePair | null = null;

  constructor(options: MockReceiverHostOptions) {
    this.opts = {
      host: '127.0.0.1',
      httpPort: 0,
      httpsPort: 0,
      historyLimit: 500,
      bodyLimitBytes: 1_048_576,
      now: Date.now,
      seedSource: () => Math.floor(Math.random() * 4294967296),
      timeouts: HTTP_TIMEOUTS,
      ...options,
    };
  }

  // ---- definitions -------------------------------------------------------------------------

  /** Replaces every definition. Unchanged ones keep their counters and history. */
  setReceivers(defs: readonly MockReceiver[]): void {
    const parsed = defs.map((d, i) => this.parse(d, [i]));
    const byPath = new Map<string, string>();
    const ids = new Set<string>();
    parsed.forEach((d, i) => {
      if (ids.has(d.id)) throw new ValidationError([{ path: `[${i}].id`, message: `duplicate id "${d.id}"` }]);
      const other = byPath.get(d.path);
      if (other) throw new ValidationError([{ path: `[${i}].path`, message: `path ${d.path} is already used by receiver "${other}"` }]);
      ids.add(d.id);
      byPath.set(d.path, d.name);
    });
    for (const id of [...this.entries.keys()]) if (!ids.has(id)) this.remove(id);
    for (const d of parsed) this.put(d);
  }

  /** Adds or replaces one definition; a changed definition starts from fresh counters. */
  upsert(def: MockReceiver): MockReceiver {
    const d = this.parse(def, []);
    const clash = [...this.entries.values()].find((e) => e.def.path === d.path && e.def.id !== d.id);
    if (clash) throw new ValidationError([{ path: 'path', message: `path ${d.path} is already used by receiver "${clash.def.name}"` }]);
    this.put(d);
    return d;
  }

  remove(id: string): boolean {
    this.history.delete(id);
    return this.entries.delete(id);
  }

  list(): MockReceiver[] {
    return [...this.entries.values()].map((e) => e.def);
  }

  get(id: string): MockReceiver | undefined {
    return this.entries.get(id)?.def;
  }

  /** Starts the receiver's counters and random sequences over (failFirst fails N times again). */
  resetState(id: string): void {
    const e = this.entries.get(id);
    if (e) e.state = createBehaviorState(e.def.behavior, this.opts.seedSource);
  }

  /** The last `historyLimit` records of this receiver, oldest first. */
  requests(id: string): MockRequestRecord[] {
    return [...(this.history.get(id) ?? [])];
  }

  clearRequests(id: string): void {
    this.history.delete(id);
  }

  // ---- addresses ---------------------------------------------------------------------------

  urlFor(receiver: Pick<MockReceiver, 'path' | 'tls'> | string): string {
    const def = typeof receiver === 'string' ? this.get(receiver) : receiver;
    if (!def) throw new Error(`no mock receiver with id "${String(receiver)}"`);
    return `${this.baseUrl(def.tls ?? false)}${def.path}`;
  }

  baseUrl(tls: boolean): string {
    const l = tls ? this.https : this.http;
    if (!l) throw new Error('the mock receiver host is not started');
    const host = this.opts.host.includes(':') ? `[${this.opts.host}]` : this.opts.host;
    return `${tls ? 'https' : 'http'}://${host}:${l.port}`;
  }

  /** The HTTPS listener's certificate (PEM), for clients that choose to trust it. */
  certificatePem(): string {
    if (!this.certificate) throw new Error('the mock receiver host is not started');
    return this.certificate.cert;
  }

  certificateFingerprint(): string | null {
    return this.certificate?.fingerprint ?? null;
  }

  /** Open TCP connections on both listeners (hung requests included). */
  openConnections(): number {
    return this.sockets.size;
  }

  /** Requests received but not yet ended (delayed or hung). */
  inFlight(): number {
    return this.exchanges.size;
  }

  get started(): boolean {
    return this.http !== null;
  }

  // ---- lifecycle ---------------------------------------------------------------------------

  async start(): Promise<void> {
    if (this.http) return;
    this.certificate ??= await loadOrCreateCertificate(this.opts.dataDir, this.opts.now());
    const limits = nodeServerOptions(this.opts.timeouts);
    const plain = http.createServer(limits, (req, res) => this.handle(req, res, false));
    const secure = https.createServer({ ...limits, cert: this.certificate.cert, key: this.certificate.key }, (req, res) =>
      this.handle(req, res, true),
    );
    const errorBody = (error: string) => ({ error });
    for (const server of [plain, secure]) guardServer(server, this.opts.timeouts, errorBody);
    const listeners: Listener[] = [];
    try {
      listeners.push(await this.listen(plain, this.opts.httpPort));
      listeners.push(await this.listen(secure, this.opts.httpsPort));
    } catch (err) {
      await Promise.all(listeners.map((l) => closeServer(l.server)));
      throw err;
    }
    [this.http, this.https] = listeners;
  }

  /** Closes both listeners and every connection, hung ones included; records end with `stop`. */
  async stop(): Promise<void> {
    const listeners = [this.http, this.https].filter((l): l is Listener => l !== null);
    this.http = this.https = null;
    for (const x of [...this.exchanges]) x.abort();
    const closing = listeners.map((l) => closeServer(l.server));
    // A server may report closed before its sockets emit 'close'; wait for both so nothing is left.
    // Every socket still in the set has yet to emit 'close' (its own listener removes it then).
    const gone = [...this.sockets].map((s) => new Promise<void>((r) => s.once('close', () => r())));
    for (const s of this.sockets) s.destroy();
    await Promise.all([...closing, ...gone]);
  }

  // ---- serving -----------------------------------------------------------------------------

  private parse(def: MockReceiver, prefix: PropertyKey[]): MockReceiver {
    const d = parseOrThrow(mockReceiverSchema, def, prefix);
    if (!d.id) throw new ValidationError([{ path: formatPath([...prefix, 'id']), message: 'required by the host' }]);
    return d as MockReceiver;
  }

  private put(d: MockReceiver): void {
    const key = canonicalJson(d);
    const existing = this.entries.get(d.id);
    if (existing && existing.key === key) return;
    this.entries.set(d.id, { def: d, key, state: createBehaviorState(d.behavior, this.opts.seedSource) });
  }

  private handle(req: IncomingMessage, res: ServerResponse, tls: boolean): void {
    const pathname = (req.url ?? '/').split('?')[0];
    const entry = [...this.entries.values()].find((e) => e.def.path === pathname);
    if (!entry || entry.def.tls !== tls) return this.notFound(req, res, tls, pathname, entry?.def);
    const exchange = new Exchange(req, res, {
      receiver: entry.def,
      decision: decide(entry.def.behavior, entry.state, entry.def.name),
      tls,
      bodyLimitBytes: this.opts.bodyLimitBytes,
      now: this.opts.now,
      answerItems: (body) => answerItems(entry.def.behavior, entry.state, body),
      screen: screens(entry.def.behavior) ? (body, problem) => screenRequest(entry.def.behavior, entry.state.seen, body, problem) : undefined,
      reset: (r) => this.resetConnection(r),
      done: (record, x) => {
        this.exchanges.delete(x);
        this.record(record);
      },
    });
    this.exchanges.add(exchange);
  }

  private notFound(req: IncomingMessage, res: ServerResponse, tls: boolean, pathname: string, other?: MockReceiver): void {
    const receivers = this.list().filter((d) => d.tls === tls).map((d) => ({ name: d.name, path: d.path, url: this.urlFor(d) }));
    const body: Record<string, unknown> = {
      error: `no mock receiver at ${pathname} on this ${tls ? 'HTTPS' : 'HTTP'} listener`,
      method: req.method,
      receivers,
    };
    if (other) body.hint = `receiver "${other.name}" serves ${other.path} over ${other.tls ? 'HTTPS' : 'HTTP'}: ${this.urlFor(other)}`;
    const text = JSON.stringify(body);
    req.resume();
    res.writeHead(404, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
    res.end(text);
  }

  private record(record: MockRequestRecord): void {
    if (this.entries.has(record.receiverId)) {
      const list = this.history.get(record.receiverId) ?? [];
      list.push(record);
      if (list.length > this.opts.historyLimit) list.splice(0, list.length - this.opts.historyLimit);
      this.history.set(record.receiverId, list);
    }
    try {
      this.opts.onRequest?.(record);
    } catch (err) {
      if (this.opts.onSinkError) this.opts.onSinkError(err);
      else console.error('mock receivers: onRequest failed:', err);
    }
  }

  /**
   * A TCP reset (RST), so clients see ECONNRESET as from a crashing receiver. Under TLS the request's
   * socket is the TLS layer, which cannot send a reset; the raw TCP socket under it can.
   */
  private resetConnection(req: IncomingMessage): void {
    const s = req.socket;
    const raw = [...this.sockets].find((r) => r.remotePort === s.remotePort && r.remoteAddress === s.remoteAddress) ?? s;
    try {
      raw.resetAndDestroy();
    } catch {
      raw.destroy();
    }
  }

  private listen(server: http.Server, port: number): Promise<Listener> {
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, this.opts.host, () => {
        server.off('error', reject);
        resolve({ server, port: (server.address() as AddressInfo).port });
      });
    });
  }
}

function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}
