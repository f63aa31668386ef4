interface Waiting {
  bytes: number;
  /** performance.now() when its delay ends. */
  endsAt: number;
  timer: NodeJS.Timeout;
  wake: () => void;
}

/**
 * The requests a `delay` collector fault is holding (README, Decisions, "Collector faults"). They wait
 * outside the ingest's byte gate, so that a delay does not hold up other requests; this bounds what
 * they keep instead: their raw bodies count against `limit` bytes, and a request that would go over it
 * is not held at all (the caller answers 503 with the Retry-After given here). One request is always
 * let in, however large. When the collector closes, every wait ends at once, so stopping the lab does
 * not wait out a 60 s delay: the held requests are then handled (and committed) like any other.
 */
export class DelayedRequests {
  private bytes = 0;
  private closed = false;
  private readonly waiting = new Set<Waiting>();

  constructor(private readonly limit: number) {}

  /** Resolves after `ms`, or answers the whole seconds after which a retry may find room. */
  wait(bytes: number, ms: number): Promise<void> | { retryAfterS: number } {
    if (this.closed) return Promise.resolve();
    if (this.waiting.size > 0 && this.bytes + bytes > this.limit) return { retryAfterS: this.secondsUntilOneEnds() };
    return new Promise((resolve) => {
      const entry: Waiting = {
        bytes,
        endsAt: performance.now() + ms,
        timer: setTimeout(() => this.end(entry), ms),
        wake: resolve,
      };
      this.waiting.add(entry);
      this.bytes += bytes;
    });
  }

  /** The bytes of request bodies held now. */
  get heldBytes(): number {
    return this.bytes;
  }

  /** The collector is closing: every held request goes on now, and none is held from here on. */
  endAll(): void {
    this.closed = true;
    for (const entry of [...this.waiting]) this.end(entry);
  }

  private end(entry: Waiting): void {
    if (!this.waiting.delete(entry)) return;
    clearTimeout(entry.timer);
    this.bytes -= entry.bytes;
    entry.wake();
  }

  private secondsUntilOneEnds(): number {
    let first = Infinity;
    for (const w of this.waiting) first = Math.min(first, w.endsAt);
    return Math.max(1, Math.ceil((first - performance.now()) / 1000));
  }
}
