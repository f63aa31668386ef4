/**
 * Bounds how many request bytes are being parsed and stored at once. A client that sends hundreds of
 * full batches at the same moment (the official Node SDK does) would otherwise have every one parsed
 * into objects before the first commit, and the process would hold all of them. Waiting requests keep
 * only their raw body. One request is always let through, however large, so nothing can starve.
 */
export class ByteGate {
  private inFlight = 0;
  private readonly waiting: { bytes: number; go: () => void }[] = [];

  constructor(private readonly limit: number) {}

  acquire(bytes: number): Promise<void> | undefined {
    if (this.waiting.length === 0 && (this.inFlight === 0 || this.inFlight + bytes <= this.limit)) {
      this.inFlight += bytes;
      return undefined;
    }
    return new Promise((go) => this.waiting.push({ bytes, go }));
  }

  release(bytes: number): void {
    this.inFlight -= bytes;
    // First come, first served: a large request at the head is not overtaken by small ones.
    while (this.waiting.length > 0) {
      const next = this.waiting[0];
      if (this.inFlight !== 0 && this.inFlight + next.bytes > this.limit) break;
      this.waiting.shift();
      this.inFlight += next.bytes;
      next.go();
    }
  }

  get pending(): number {
    return this.waiting.length;
  }
}
