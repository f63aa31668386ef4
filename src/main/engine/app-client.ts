import type { ApiHandlers, ClientSettings, ClientState } from '../../shared/api.contract';
import { Analytics } from './client/analytics';
import { AnalyticsError, AnalyticsValidationError } from './client/errors';
import type { Logger } from './client/logger';
import type { Persistence } from './client/persistence';
import type { Store } from './store/store';
import { codedError, conflict } from './errors';
import { ValidationError } from '../../shared/validation-error';
import { formatTimestamp } from '../../shared/timestamp';

type ClientHandlers = Pick<ApiHandlers, 'clientSend' | 'clientFlush' | 'clientState' | 'clientGetSettings' | 'clientUpdateSettings'>;

interface StoredClientSettings {
  flushAt: number;
  flushAfter: number;
  /** null = the embedded collector, wherever it listens this run. */
  endpoint: string | null;
  sourceId: string | null;
  writeKey: string | null;
}

const DEFAULTS: StoredClientSettings = { flushAt: 20, flushAfter: 5000, endpoint: null, sourceId: null, writeKey: null };
const LOG_LINES = 200;
/** How long `POST /api/client/flush` waits for the flush before it answers that it goes on. */
export const FLUSH_ANSWER_MS = 10_000;

/**
 * The app's own batching client: the calls people build in the UI go through it, exactly as their
 * code would send them. Its queue lives in SQLite, so a quit before a flush loses nothing.
 */
export class AppClient {
  private client: Analytics | null = null;
  private settings: StoredClientSettings;
  private readonly log: { at: string; line: string }[] = [];
  private notifyTimer: NodeJS.Timeout | null = null;
  private closed = false;
  /**
   * The SQLite queue, cut off at close: a flush still retrying after shutdown must not touch the
   * closed database. What it held stays queued there and is sent at the next start (at least once).
   */
  private readonly persistence: Persistence = {
    load: () => this.store.clientQueue.load(),
    add: (m) => {
      if (this.closed) throw new Error('Webhook Lab is shutting down');
      this.store.clientQueue.add(m);
    },
    remove: (ids) => {
      if (!this.closed) this.store.clientQueue.remove(ids);
    },
  };

  constructor(
    private readonly store: Store,
    private readonly collectorUrl: () => string,
    private readonly onChange: (state: ClientState) => void,
  ) {
    this.settings = { ...DEFAULTS, ...store.settings.getExtra<StoredClientSettings>('client') };
    // Messages a previous run left queued go out now, if there is a key to send them with.
    if (this.store.clientQueue.count() > 0 && this.resolveKey()) this.instance();
  }

  handlers(): ClientHandlers {
    return {
      clientSend: (input) => {
        const { type, ...message } = input;
        try {
          const messageId = this.instance().enqueue(type, message);
          return { messageId, queued: this.instance().stats().queued };
        } catch (err) {
          if (err instanceof AnalyticsValidationError) {
            throw new ValidationError(err.violations.map((v) => ({ path: v.field, message: v.message })));
          }
          if (err instanceof AnalyticsError) throw codedError(err.code === 'queue_full' ? 'rate_limited' : 'invalid_input', err.message);
          throw err;
        }
      },
      clientFlush: async () => {
        // A collector that does not answer (a `hang` fault, an endpoint that stalls) keeps the client
        // retrying for minutes: the request answers within FLUSH_ANSWER_MS saying so, and the flush
        // goes on in the background, its queue kept in SQLite (issue 38).
        let timer: NodeJS.Timeout | undefined;
        const flushing = this.instance().flush();
        const waited = new Promise<null>((resolve) => (timer = setTimeout(resolve, FLUSH_ANSWER_MS, null)));
        try {
          const r = await Promise.race([flushing, waited]);
          if (r === null) {
            // Its outcome is in the client's log and state; a rejection is not left unhandled.
            flushing.catch(() => undefined);
            return { sent: 0, batches: 0, errors: [`still sending after ${FLUSH_ANSWER_MS / 1000} s: the collector has not answered; the client keeps trying in the background, and its messages stay queued (across a restart too) until it does`] };
          }
          return { sent: r.sent, batches: r.batches.length, errors: r.errors.map((e) => e.message) };
        } finally {
          clearTimeout(timer);
        }
      },
      clientState: () => this.state(),
      clientGetSettings: () => this.publicSettings(),
      clientUpdateSettings: async (patch) => {
        if (patch.sourceId && !this.store.sources.get(patch.sourceId)) throw codedError('not_found', `sourceId: no source ${patch.sourceId}`);
        const next: StoredClientSettings = { ...this.settings };
        if (patch.flushAt !== undefined) next.flushAt = patch.flushAt;
        if (patch.flushAfter !== undefined) next.flushAfter = patch.flushAfter;
        if (patch.endpoint !== undefined) next.endpoint = patch.endpoint.replace(/\/+$/, '') || null;
        // A source and a raw write key are alternatives: setting one clears the other.
        if (patch.sourceId !== undefined) Object.assign(next, { sourceId: patch.sourceId, writeKey: null });
        if (patch.writeKey !== undefined) Object.assign(next, { writeKey: patch.writeKey, sourceId: null });
        this.settings = next;
        this.store.settings.setExtra('client', next);
        await this.replaceInstance();
        this.notify();
        return this.publicSettings();
      },
    };
  }

  async close(): Promise<void> {
    if (this.notifyTimer) clearTimeout(this.notifyTimer);
    const c = this.client;
    this.client = null;
    // Whatever is not sent by now stays in SQLite for the next start; do not hold shutdown on retries.
    if (c) await Promise.race([c.close(), new Promise((r) => setTimeout(r, 1000).unref())]);
    this.closed = true;
  }

  private instance(): Analytics {
    if (this.client) return this.client;
    const writeKey = this.resolveKey();
    if (!writeKey) throw conflict('no source to send as: create a source first, or choose one in the client settings');
    const logger: Logger = { log: (line: string) => this.addLog(line) };
    const c = new Analytics(writeKey, {
      endpoint: this.settings.endpoint ?? this.collectorUrl(),
      flushAt: this.settings.flushAt,
      flushAfter: this.settings.flushAfter,
      persistence: this.persistence,
      logger,
      debug: true,
    });
    for (const event of ['enqueue', 'flush', 'retry', 'drop'] as const) c.on(event, () => this.notify());
    c.on('error', (e) => this.addLog(`analytics: error: ${(e as Error).message}`));
    this.client = c;
    return c;
  }

  /** Settings changed: the live client takes them over, its queue untouched. */
  private async replaceInstance(): Promise<void> {
    const writeKey = this.resolveKey();
    if (!this.client || !writeKey) return;
    this.client.configure({
      endpoint: this.settings.endpoint ?? this.collectorUrl(),
      flushAt: this.settings.flushAt,
      flushAfter: this.settings.flushAfter,
      writeKey,
    });
  }

  private resolveKey(): string | null {
    return this.settings.writeKey ?? this.currentSource()?.writeKey ?? null;
  }

  /** The chosen source, else the first one; none when a raw write key was set. */
  private currentSource() {
    if (this.settings.writeKey) return undefined;
    return (this.settings.sourceId && this.store.sources.get(this.settings.sourceId)) || this.store.sources.list()[0];
  }

  private publicSettings(): ClientSettings {
    const source = this.currentSource();
    return {
      flushAt: this.settings.flushAt,
      flushAfter: this.settings.flushAfter,
      endpoint: this.settings.endpoint ?? this.collectorUrl(),
      sourceId: source?.id ?? null,
      writeKey: this.settings.writeKey ?? source?.writeKey ?? '',
    };
  }

  private state(): ClientState {
    const s = this.client?.stats();
    return {
      settings: this.publicSettings(),
      queued: s ? s.queued : this.store.clientQueue.count(),
      queuedBytes: s ? s.queuedBytes : 0,
      lastFlushAt: s?.lastFlushAt ?? null,
      lastFlushResult: s?.lastFlushResult ?? null,
      nextFlushAt: s?.nextFlushAt ?? null,
      batchesSent: s?.batchesSent ?? 0,
      retries: s?.retries ?? 0,
      drops: s?.drops ?? 0,
      recentBatches: (s?.recentBatches ?? []).map((b) => ({
        at: b.at,
        count: b.count,
        bytes: b.bytes,
        status: b.status,
        durationMs: b.durationMs,
        retries: b.retries,
        error: b.error,
      })),
      log: this.log.slice(),
    };
  }

  private addLog(line: string): void {
    this.log.push({ at: formatTimestamp(Date.now()), line });
    if (this.log.length > LOG_LINES) this.log.splice(0, this.log.length - LOG_LINES);
  }

  /** At most ~5 state pushes a second, whatever the message rate. */
  private notify(): void {
    if (this.notifyTimer) return;
    this.notifyTimer = setTimeout(() => {
      this.notifyTimer = null;
      this.onChange(this.state());
    }, 200);
    this.notifyTimer.unref();
  }
}
