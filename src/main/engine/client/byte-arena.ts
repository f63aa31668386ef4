/** Size of each buffer the arena allocates: room for at least two worst-case 32 KB messages. */
export const ARENA_CHUNK_BYTES = 256 * 1024;

/**
 * Where the client keeps queued messages' JSON: as UTF-8 bytes in large shared buffers, not as
 * strings. A queued string lives until its batch is sent, so with a deep queue every scavenge copies
 * it and then promotes it: kept alive, 100,000 `JSON.stringify` results were produced at half the
 * rate of the same ones dropped. Copied here, the string dies young, and a batch body is built by
 * copying bytes, with no re-encoding. A chunk is freed by the GC once no queued message points into it.
 *
 * Use: `at = reserve(most)`, write at most `most` bytes into `chunk` from `at`, then `commit(used)`.
 */
export class ByteArena {
  private current: Buffer | null = null;
  private used = 0;

  constructor(private readonly chunkBytes: number = ARENA_CHUNK_BYTES) {}

  /** The buffer the last reserve() handed out. */
  get chunk(): Buffer {
    return this.current as Buffer;
  }

  /** Offset in `chunk` where `most` bytes can be written; opens a new chunk when the current one is short. */
  reserve(most: number): number {
    if (this.current === null || this.used + most > this.current.length) {
      // A message may be larger than a chunk only through a restored queue; it gets a buffer of its own.
      this.current = Buffer.allocUnsafeSlow(Math.max(this.chunkBytes, most));
      this.used = 0;
    }
    return this.used;
  }

  /** Keep the `bytes` just written at the reserved offset; what is not committed is reused. */
  commit(bytes: number): void {
    this.used += bytes;
  }

  /**
   * Give back the last commit: a message refused after it was written (queue full, persistence
   * failed). Otherwise every refused call would spend chunk space, and the calls accepted between
   * them would each pin a chunk of their own. Anything but the last commit is left as it is.
   */
  release(chunk: Buffer, offset: number, bytes: number): void {
    if (chunk === this.current && offset + bytes === this.used) this.used = offset;
  }

  /** Copy a whole JSON text in (restored messages). */
  append(text: string): { chunk: Buffer; offset: number; bytes: number } {
    const offset = this.reserve(text.length * 3);
    const chunk = this.chunk;
    const bytes = chunk.write(text, offset, 'utf8');
    this.commit(bytes);
    return { chunk, offset, bytes };
  }
}
