import { systemClock, unrefHandle, type Clock } from './clock';
import { LIBRARY_NAME, LIBRARY_VERSION, MAX_BATCH_BYTES, MAX_BATCH_MESSAGES, MAX_MESSAGE_BYTES } from './constants';
import { deliverBatch, type DeliveredBatch, type DeliveryContext } from './delivery';
import { TypedEmitter } from './emitter';
import { ClientClosedError, DeliveryError, PersistenceError, QueueFullError } from './errors';
import { stderrLogger, type Logger } from './logger';
import {
  prepareMessage,
  type AliasMessage,
  type GroupMessage,
  type IdentifyMessage,
  type PageMessage,
  type ScreenMessage,
  type TrackMessage,
} from './message';
import { resolveOptions } from './options';
import { ByteArena } from './byte-arena';
import type { Persistence, QueuedMessage } from './persistence';
import { QueueEntry } from './queue-entry';
import { splitBatches } from './batches';
import { ClientStatsTracker } from './stats';
import { createFetchTransport, createUndiciTransport, type Transport } from './transport';
import type { AnalyticsEvents, AnalyticsOptions, ClientStats, ConfigurePatch, FlushResult, FlushTrigger, ResolvedOptions } from './types';

const emptyResult = (): FlushResult => ({ sent: 0, dropped: 0, batches: [], errors: [] });

/** One flush: its batches in flight or waiting for a slot, and what they came to so far. */
interface FlushRun {
  trigger: FlushTrigger;
  result: FlushResult;
  /** Batches not settled yet. */
  left: number;
  done: Promise<FlushResult>;
  resolve(result: FlushResult): void;
}

/**
 * Batching client with the semantics of the service's Go v2 library (SPEC §5): calls are validated
 * and queued synchronously, then sent in the background as `POST {endpoint}/v1/batch`.
 */
export class Analytics extends TypedEmitter<AnalyticsEvents> {
  private resolved: Readonly<ResolvedOptions>;
  private readonly clock: Clock;
  /** null: the queue itself is the only store (nothing to mirror). */
  private readonly persistence: Persistence | null;
  private readonly transport: Transport;
  private readonly ownsTransport: boolean;
  /** Debug lines: null unless debug is on. */
  private readonly logger: Logger | null;
  /** Listener failures are always reported: to the caller's logger, else stderr. */
  private readonly warnLogger: Logger;
  private delivery: DeliveryContext;
  private readonly tracker = new ClientStatsTracker();

  private readonly arena = new ByteArena();
  private pending: QueueEntry[] = [];
  private pendingBytes = 0;
  private inFlight = 0;
  private inFlightBytes = 0;
  /** Flushes not settled yet, oldest first: each settles when the last of its batches does. */
  private readonly runs: FlushRun[] = [];
  /** Batches of every flush waiting for a request slot, oldest first; `concurrency` are out at once. */
  private readonly waiting: { messages: QueueEntry[]; run: FlushRun }[] = [];
  private sending = 0;
  private timer: unknown = null;
  private timerDue: number | null = null;
  /** Base of the flushAfter interval: the start of the last flush, or construction. */
  private lastFlushStart: number;
  private closing: Promise<FlushResult> | null = null;
  private writeKey = '';

  constructor(writeKey: string, options: AnalyticsOptions = {}) {
    super((err, event) => this.warn(`analytics: a listener of "${String(event)}" threw: ${(err as Error)?.stack ?? String(err)}`));
    if (typeof writeKey !== 'string' || writeKey.trim() === '') throw new TypeError('analytics: writeKey must be a non-empty string');
    this.resolved = Object.freeze(resolveOptions(options));
    this.clock = options.clock ?? systemClock;
    this.persistence = options.persistence ?? null;
    this.ownsTransport = !options.transport;
    this.transport =
      options.transport ?? (options.fetch ? createFetchTransport(options.fetch) : createUndiciTransport());
    this.warnLogger = options.logger ?? stderrLogger;
    this.logger = this.resolved.debug ? this.warnLogger : null;
    this.delivery = this.deliveryContext(writeKey);
    this.lastFlushStart = this.clock.now();

    // A crash loses nothing: what the last run left is sent first, as soon as listeners can be attached.
    const restored = this.keepSendable(this.persistence?.load() ?? []);
    if (restored.length > 0) {
      this.pending = restored.map((record) => QueueEntry.restore(record, this.arena));
      for (const m of this.pending) this.pendingBytes += m.bytes;
      this.debug(`analytics: restored ${restored.length} queued messages (${this.pendingBytes} bytes)`);
      queueMicrotask(() => {
        if (!this.closing && this.pending.length > 0) this.flushInBackground('load');
      });
    }
  }

  /**
   * Loaded records the collector would refuse with the whole batch around them (400 for a body that
   * is not JSON, or over its limit) are removed from persistence instead of queued, and reported
   * once listeners can be attached. Returns the others.
   */
  private keepSendable(records: QueuedMessage[]): QueuedMessage[] {
    const bad: string[] = [];
    const good = records.filter((r) => {
      let ok = typeof r.json === 'string' && Buffer.byteLength(r.json) <= MAX_MESSAGE_BYTES;
      if (ok) {
        try {
          const parsed: unknown = JSON.parse(r.json);
          ok = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed);
        } catch {
          ok = false;
        }
      }
      if (!ok) bad.push(r.id);
      return ok;
    });
    if (bad.length === 0) return records;
    let removed = '';
    try {
      this.persistence?.remove(bad);
    } catch (err) {
      removed = ` (and could not remove them: ${(err as Error)?.message ?? err})`;
    }
    const shown = bad.slice(0, 10).join(', ') + (bad.length > 10 ? ', …' : '');
    const error = new PersistenceError(`dropped ${bad.length} restored messages that are not a JSON object of at most ${MAX_MESSAGE_BYTES} bytes: ${shown}${removed}`);
    queueMicrotask(() => this.emit('error', error));
    return good;
  }

  /** The options in force, defaults applied. */
  get options(): Readonly<ResolvedOptions> {
    return this.resolved;
  }

  /**
   * Change settings of a live client (the app's settings panel). Queued messages stay queued and go
   * to the new endpoint/write key; requests already in flight finish as they started.
   */
  configure(patch: ConfigurePatch): void {
    if (patch.writeKey !== undefined && (typeof patch.writeKey !== 'string' || patch.writeKey.trim() === '')) {
      throw new TypeError('analytics: writeKey must be a non-empty string');
    }
    const { writeKey, ...rest } = patch;
    // An explicit `undefined` means "unchanged", not "back to the default".
    const changes = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined));
    this.resolved = Object.freeze(resolveOptions({ ...this.resolved, ...changes, debug: this.resolved.debug }));
    this.delivery = this.deliveryContext(writeKey ?? this.writeKey);
    this.clearTimer();
    // A raised concurrency takes batches already waiting at once.
    this.pump();
    if (this.closing) return;
    if (this.pending.length >= this.resolved.flushAt) this.flushInBackground('count');
    else this.armTimer();
  }

  identify(message: IdentifyMessage): string {
    return this.enqueue('identify', message);
  }
  track(message: TrackMessage): string {
    return this.enqueue('track', message);
  }
  page(message: PageMessage): string {
    return this.enqueue('page', message);
  }
  screen(message: ScreenMessage): string {
    return this.enqueue('screen', message);
  }
  group(message: GroupMessage): string {
    return this.enqueue('group', message);
  }
  alias(message: AliasMessage): string {
    return this.enqueue('alias', message);
  }

  /**
   * Validate, stamp and queue one message of any call type; returns its messageId. Throws
   * AnalyticsValidationError, MessageTooLargeError, QueueFullError, ClientClosedError or
   * PersistenceError synchronously, and in every such case nothing was queued.
   */
  enqueue(type: string, message: unknown): string {
    if (this.closing) throw new ClientClosedError();
    const queued = prepareMessage(type, message, this.clock.now(), this.arena);
    if (this.pending.length + this.inFlight >= this.resolved.maxQueueSize) {
      this.arena.release(queued.chunk, queued.offset, queued.bytes);
      throw new QueueFullError(this.resolved.maxQueueSize);
    }
    try {
      this.persistence?.add([queued.toRecord()]);
    } catch (err) {
      this.arena.release(queued.chunk, queued.offset, queued.bytes);
      throw new PersistenceError(`could not persist the message, nothing queued: ${(err as Error)?.message ?? err}`, { cause: err });
    }
    this.pending.push(queued);
    this.pendingBytes += queued.bytes;
    // Read back from the queued bytes: the queue itself keeps no id string per message.
    const messageId = queued.messageId;
    if (this.listenerCount('enqueue') > 0) {
      this.emit('enqueue', { type, messageId, bytes: queued.bytes, queued: this.pending.length + this.inFlight });
    }
    if (this.pending.length >= this.resolved.flushAt) {
      this.flushInBackground('count');
    } else {
      this.armTimer();
    }
    return messageId;
  }

  /**
   * Send everything queued now; resolves (never rejects) once those messages, and those of flushes
   * still in flight, are accepted or dropped (their results merged, oldest first).
   */
  flush(): Promise<FlushResult> {
    return this.requestFlush('manual');
  }

  /** Flush everything, then refuse new calls with ClientClosedError. Calling it again returns the same promise. */
  close(): Promise<FlushResult> {
    if (this.closing) return this.closing;
    this.clearTimer();
    this.closing = this.requestFlush('close').then(async (result) => {
      if (this.ownsTransport) {
        try {
          await this.transport.close?.();
        } catch {
          // Sockets that fail to close cleanly cannot lose messages any more: everything was sent.
        }
      }
      return result;
    });
    return this.closing;
  }

  /** A snapshot for dashboards: queue, timing and counters. */
  stats(): ClientStats {
    return this.tracker.snapshot({
      queued: this.pending.length + this.inFlight,
      queuedBytes: this.pendingBytes + this.inFlightBytes,
      inFlight: this.inFlight,
      nextFlushAt: this.timerDue,
      closed: this.closing !== null,
    });
  }

  private requestFlush(trigger: FlushTrigger): Promise<FlushResult> {
    const earlier = this.runs.map((r) => r.done);
    const own = this.startFlush(trigger);
    return Promise.all([...earlier, own]).then((results) => ({
      sent: results.reduce((n, r) => n + r.sent, 0),
      dropped: results.reduce((n, r) => n + r.dropped, 0),
      batches: results.flatMap((r) => r.batches),
      errors: results.flatMap((r) => r.errors),
    }));
  }

  /** A flush nobody awaits (count, timer, load): startFlush settles and never rejects, so nothing is lost by not waiting. */
  private flushInBackground(trigger: FlushTrigger): void {
    this.startFlush(trigger).catch(() => undefined);
  }

  /**
   * Takes what is queued, splits it into batches and puts them behind those of earlier flushes: up to
   * `concurrency` requests are out at once, whichever flush they belong to, so a batch being retried
   * holds one slot, not the flushes after it (as the Go v2 library sends each batch on a goroutine).
   */
  private startFlush(trigger: FlushTrigger): Promise<FlushResult> {
    this.clearTimer();
    const taken = this.pending;
    if (taken.length === 0) return Promise.resolve(emptyResult());
    this.pending = [];
    this.inFlightBytes += this.pendingBytes;
    this.pendingBytes = 0;
    this.inFlight += taken.length;
    this.lastFlushStart = this.clock.now();
    this.tracker.lastFlushAt = this.lastFlushStart;
    const batches = splitBatches(taken, {
      maxMessages: Math.min(this.resolved.flushAt, MAX_BATCH_MESSAGES),
      maxBytes: MAX_BATCH_BYTES,
    });
    let resolve!: (r: FlushResult) => void;
    const run: FlushRun = { trigger, result: emptyResult(), left: batches.length, done: new Promise<FlushResult>((r) => (resolve = r)), resolve };
    this.runs.push(run);
    for (const messages of batches) this.waiting.push({ messages, run });
    this.pump();
    return run.done;
  }

  /** Starts waiting batches while fewer than `concurrency` requests are out. */
  private pump(): void {
    while (this.sending < this.resolved.concurrency && this.waiting.length > 0) {
      const { messages, run } = this.waiting.shift()!;
      this.sending++;
      deliverBatch(this.delivery, messages)
        .then(
          (delivered) => this.settle(delivered, run.trigger, run.result),
          (err: unknown) => {
            // Unreachable unless a seam misbehaves (deliverBatch never rejects); still, a flush must settle.
            run.result.errors.push(err instanceof Error ? err : new Error(String(err)));
          },
        )
        .finally(() => {
          this.sending--;
          if (--run.left === 0) this.finishRun(run);
          this.pump();
        });
    }
  }

  private finishRun(run: FlushRun): void {
    this.runs.splice(this.runs.indexOf(run), 1);
    this.tracker.finishFlush(run.result);
    run.resolve(run.result);
    try {
      this.afterFlush();
    } catch (err) {
      // Only an injected clock that throws gets here; report it rather than reject a settled flush.
      this.emit('error', err instanceof Error ? err : new Error(String(err)));
    }
  }

  private settle(d: DeliveredBatch, trigger: FlushTrigger, result: FlushResult): void {
    const { messages, cause, ...batch } = d;
    let messageBytes = 0;
    for (const m of messages) messageBytes += m.bytes;
    this.inFlight -= messages.length;
    this.inFlightBytes -= messageBytes;
    try {
      this.persistence?.remove(messages.map((m) => m.id));
    } catch (err) {
      // The batch itself is settled; at worst it is sent again after a restart (receivers de-duplicate by messageId).
      const e = new PersistenceError(`could not remove ${messages.length} settled messages: ${(err as Error)?.message ?? err}`, { cause: err });
      result.errors.push(e);
      this.emit('error', e);
    }
    result.batches.push(batch);
    this.tracker.recordBatch(batch);
    const status = batch.status ?? 'no response';
    this.debug(
      `analytics: flush ${batch.count} messages, ${batch.bytes} bytes → ${status} in ${batch.durationMs} ms (${trigger}${batch.retries ? `, ${batch.retries} retries` : ''})`,
    );
    this.emit('flush', { ...batch, trigger });
    if (batch.ok) {
      result.sent += batch.count;
      return;
    }
    result.dropped += batch.count;
    const reason = batch.error ?? 'dropped';
    const error = new DeliveryError(`dropped ${batch.count} messages: ${reason}`, batch.status, batch.count, batch.retries, { cause });
    result.errors.push(error);
    this.debug(`analytics: drop ${batch.count} messages: ${reason}`);
    this.emit('drop', { batchId: batch.batchId, count: batch.count, messageIds: messages.map((m) => m.messageId), status: batch.status, reason });
    this.emit('error', error);
  }

  private afterFlush(): void {
    if (this.closing || this.pending.length === 0) return;
    if (this.pending.length >= this.resolved.flushAt) this.flushInBackground('count');
    else this.armTimer();
  }

  private armTimer(): void {
    if (this.timer !== null || this.closing || this.pending.length === 0) return;
    // flushAfter counts from the last flush (SPEC §5), so an idle client sends a first message at once.
    const due = this.lastFlushStart + this.resolved.flushAfter;
    this.timerDue = due;
    this.timer = this.clock.setTimeout(
      () => {
        this.timer = null;
        this.timerDue = null;
        if (!this.closing) this.flushInBackground('timer');
      },
      Math.max(0, due - this.clock.now()),
    );
    unrefHandle(this.timer);
  }

  private clearTimer(): void {
    if (this.timer === null) return;
    this.clock.clearTimeout(this.timer);
    this.timer = null;
    this.timerDue = null;
  }

  private deliveryContext(writeKey: string): DeliveryContext {
    this.writeKey = writeKey;
    return {
      transport: this.transport,
      url: `${this.resolved.endpoint}/v1/batch`,
      headers: {
        authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`,
        'content-type': 'application/json',
        'user-agent': `${LIBRARY_NAME}/${LIBRARY_VERSION} (node ${process.version})`,
      },
      clock: this.clock,
      maxRetries: this.resolved.maxRetries,
      httpTimeout: this.resolved.httpTimeout,
      onRetry: (e) => {
        this.tracker.retries++;
        this.debug(`analytics: retry ${e.retry}/${e.maxRetries} of ${e.count} messages (${e.bytes} bytes) in ${e.delayMs} ms after ${e.reason}`);
        this.emit('retry', e);
      },
    };
  }

  private debug(line: string): void {
    if (!this.logger) return;
    try {
      this.logger.log(line);
    } catch {
      // A broken logger must not break delivery.
    }
  }

  private warn(line: string): void {
    try {
      this.warnLogger.log(line);
    } catch {
      // Nowhere left to report it.
    }
  }
}
