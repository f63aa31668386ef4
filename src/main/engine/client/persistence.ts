/**
 * One queued message as persistence stores it: already stamped and serialized once at enqueue. The
 * in-memory queue keeps the same message as bytes (QueueEntry); this is its plain, storable form.
 */
export interface QueuedMessage {
  /** Queue entry id, unique across restarts; equals messageId unless the caller set its own messageId. */
  id: string;
  messageId: string;
  type: string;
  /** The message exactly as it goes into `batch`, as JSON text. */
  json: string;
  /** UTF-8 byte length of `json`. */
  bytes: number;
  /** Epoch ms (client clock) of the enqueue. */
  enqueuedAt: number;
}

/**
 * Where queued messages live until the collector accepts them. The client calls `add` inside every
 * identify/track/... call (a throw refuses that call), `remove` once a batch is accepted (2xx) or
 * dropped, and `load` once in its constructor: loaded messages are sent before any new one.
 * All three are synchronous on purpose: a crash right after track() returns must lose nothing.
 */
export interface Persistence {
  load(): QueuedMessage[];
  add(messages: QueuedMessage[]): void;
  remove(ids: string[]): void;
}

/** Default: process memory. Sharing one instance between two clients in a process hands the queue over. */
export class MemoryPersistence implements Persistence {
  private readonly entries = new Map<string, QueuedMessage>();

  load(): QueuedMessage[] {
    return [...this.entries.values()];
  }

  add(messages: QueuedMessage[]): void {
    for (const m of messages) this.entries.set(m.id, m);
  }

  remove(ids: string[]): void {
    for (const id of ids) this.entries.delete(id);
  }

  get size(): number {
    return this.entries.size;
  }
}
