import type { Clock } from './clock';
import type { Logger } from './logger';
import type { Persistence } from './persistence';
import type { Transport } from './transport';

export interface AnalyticsOptions {
  /** Collector base URL; requests go to `{endpoint}/v1/batch`. Default `http://127.0.0.1:8787`. */
  endpoint?: string;
  /** Flush when this many messages are queued; also the most messages per request. Default 20; 1 sends each message on its own. */
  flushAt?: number;
  /** Alias of flushAt (the Go v2 library's name). flushAt wins when both are given. */
  size?: number;
  /** Flush when this many ms have passed since the last flush started. Default 5000. */
  flushAfter?: number;
  /** Retries per batch after the first attempt (5xx, 429, network errors, timeouts). Default 10. */
  maxRetries?: number;
  /** Per-attempt limit in ms for the whole HTTP exchange. Default 10000. */
  httpTimeout?: number;
  /** Most messages held (waiting plus in flight); more are refused with QueueFullError. Default 10000. */
  maxQueueSize?: number;
  /** Requests out at once, whichever flush their batches belong to (a batch being retried holds one). Default 4. */
  concurrency?: number;
  /** Where debug lines go. Default: stderr. Lines are written only when debug is on. */
  logger?: Logger;
  /** Force debug logging on or off. Default: on when `env.DEBUG` includes `analytics`. */
  debug?: boolean;
  /** Environment read for DEBUG. Default `process.env`. */
  env?: Record<string, string | undefined>;
  /** Time source and timers. Default: Date.now and global timers. */
  clock?: Clock;
  /** Queue storage. Default: in memory. The app supplies a SQLite one. */
  persistence?: Persistence;
  /** How batches are sent. Default: undici `request` with a keep-alive Agent. */
  transport?: Transport;
  /** Shortcut for a fetch-based transport (ignored when `transport` is given). */
  fetch?: typeof fetch;
}

/** What Analytics.configure() may change on a live client. */
export type ConfigurePatch = Partial<
  Pick<AnalyticsOptions, 'endpoint' | 'flushAt' | 'flushAfter' | 'maxRetries' | 'httpTimeout' | 'maxQueueSize' | 'concurrency'>
> & { writeKey?: string };

export interface ResolvedOptions {
  endpoint: string;
  flushAt: number;
  flushAfter: number;
  maxRetries: number;
  httpTimeout: number;
  maxQueueSize: number;
  concurrency: number;
  debug: boolean;
}

/** The outcome of one batch request (after its retries). */
export interface BatchResult {
  /** The envelope's messageId. */
  batchId: string;
  count: number;
  bytes: number;
  /** Status of the last attempt; null when it got no response (network error, timeout). */
  status: number | null;
  ok: boolean;
  retries: number;
  /** From the first attempt's start to the last attempt's end (retry waits included). */
  durationMs: number;
  /** Why the batch was dropped; null when accepted. */
  error: string | null;
  /** When the batch settled (ISO 8601 UTC). */
  at: string;
}

export interface FlushResult {
  /** Messages accepted by the collector. */
  sent: number;
  /** Messages dropped (4xx, or retries exhausted). */
  dropped: number;
  batches: BatchResult[];
  errors: Error[];
}

export interface EnqueueEvent {
  type: string;
  messageId: string;
  bytes: number;
  /** Messages held after this one was added. */
  queued: number;
}

export type FlushTrigger = 'count' | 'timer' | 'manual' | 'close' | 'load';

export interface FlushEvent extends BatchResult {
  trigger: FlushTrigger;
}

export interface RetryEvent {
  batchId: string;
  count: number;
  bytes: number;
  /** 1 for the first retry. */
  retry: number;
  maxRetries: number;
  delayMs: number;
  status: number | null;
  reason: string;
}

export interface DropEvent {
  batchId: string;
  count: number;
  messageIds: string[];
  status: number | null;
  reason: string;
}

export interface AnalyticsEvents {
  enqueue: EnqueueEvent;
  /** One per batch request once it is settled (accepted or dropped). */
  flush: FlushEvent;
  retry: RetryEvent;
  /** A batch was dropped (DeliveryError) or the persistence seam failed (PersistenceError). */
  error: Error;
  drop: DropEvent;
}

export interface ClientStats {
  /** Messages held: waiting plus in flight. */
  queued: number;
  queuedBytes: number;
  /** Of those, in a request right now. */
  inFlight: number;
  /** ISO time the last flush started, or null. */
  lastFlushAt: string | null;
  /** Summary of the last settled flush, e.g. `20 sent in 1 batch (HTTP 200)`, or null. */
  lastFlushResult: string | null;
  /** ISO time the interval flush is due, or null when nothing waits. */
  nextFlushAt: string | null;
  batchesSent: number;
  messagesSent: number;
  retries: number;
  /** Messages dropped. */
  drops: number;
  batchesDropped: number;
  closed: boolean;
  /** The last batches (newest last, at most 20). */
  recentBatches: BatchResult[];
}
