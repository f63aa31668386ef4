import { join } from 'node:path';
import { Piscina } from 'piscina';
import { workerFile } from '../engine/worker-file';
import { readOpBody, type BodyTask, type BodyTaskResult } from './op-body';

// Large bodies are read off the event loop (issue 38). The collector, the control API, the UI's events
// and the dispatcher share one loop; a config of 10,000 sources is 1-2 MB of JSON whose parse, key
// scan and schema check held it for a second and more (the transaction that writes it is what stays).
// A body over OFFLOAD_BYTES goes to a worker thread; smaller ones cost less than the trip.

/** Bodies larger than this are read in the worker: about 5 ms of reading on the loop. */
export const OFFLOAD_BYTES = 64 * 1024;

export class BodyPool {
  private pool: Promise<Piscina> | undefined;
  private closed = false;
  private readonly counts = { worker: 0, fallback: 0 };
  /** Bodies larger than this go to the worker (tests send every body there: 0). */
  readonly offloadBytes: number;

  constructor(private readonly opts: { log?: (line: string) => void; workerFile?: () => Promise<string>; offloadBytes?: number; heapMb?: number } = {}) {
    this.offloadBytes = opts.offloadBytes ?? OFFLOAD_BYTES;
  }

  /** Bodies read in the worker, and on the loop because the worker failed. */
  stats(): { worker: number; fallback: number } {
    return { ...this.counts };
  }

  /**
   * The body read and checked in the worker; on the loop if the worker cannot start (its file
   * missing), so a request never fails for that. A body the worker could not read (it ran out of its
   * memory: ten million items, each an error) is refused, never read again on the loop, where it
   * would end the lab.
   */
  async read(task: BodyTask): Promise<BodyTaskResult | { ok: false; unreadable: string }> {
    let pool: Piscina;
    try {
      pool = await this.piscina();
    } catch (err) {
      this.counts.fallback++;
      if (!this.closed) this.opts.log?.(`control API: a ${task.text.length}-byte body was read on the event loop: its worker failed (${err instanceof Error ? err.message : String(err)})`);
      return readOpBody(task);
    }
    try {
      const read = (await pool.run(task)) as BodyTaskResult;
      this.counts.worker++;
      return read;
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      this.opts.log?.(`control API: a ${task.text.length}-byte body was refused: its reader stopped (${why})`);
      return { ok: false, unreadable: why };
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const pool = this.pool;
    this.pool = undefined;
    if (pool) await (await pool.catch(() => undefined))?.destroy();
  }

  private piscina(): Promise<Piscina> {
    if (this.closed) return Promise.reject(new Error('the control API is closing'));
    const file = this.opts.workerFile ?? (() => workerFile('api-body-worker', join(__dirname, 'body-worker.ts'), "the control API's body reader"));
    // One thread: the other core is the loop's. Not kept when idle: a lab rarely gets a large body.
    return (this.pool ??= file().then((filename) => new Piscina({ filename, minThreads: 0, maxThreads: 1, idleTimeout: 30_000, resourceLimits: { maxOldGenerationSizeMb: this.opts.heapMb ?? 1024 } })));
  }
}
