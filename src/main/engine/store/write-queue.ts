import type { Db } from './database';
import type { StorageHealth } from './storage-health';

declare const held: unique symbol;
/**
 * Held only inside a transaction: a job of the write queue, or a transaction of its own
 * (ownTransaction). The ledger's writes take it as their first argument, so "inside a write job" is
 * checked by the compiler, not said in a comment. Made nowhere but here
 * (tests/unit/write-tx-token.test.ts fails on a cast to it elsewhere).
 */
export type WriteTx = { readonly [held]: true };
const TX = Object.freeze({}) as WriteTx;

/** fn in a transaction of its own, now (not queued): for writes that must be seen by the very next read, and for start-up. */
export function ownTransaction<T>(db: Db, fn: (tx: WriteTx) => T): T {
  return db.transaction(() => fn(TX))();
}

type Job = { run: (tx: WriteTx) => unknown; undo?: () => void; resolve: (v: unknown) => void; reject: (e: unknown) => void };

/**
 * Group commit: jobs queued in the same event-loop turn run in one transaction, so a burst of
 * requests costs one fsync-equivalent instead of one each. A job's promise settles after COMMIT,
 * which is what lets the collector answer 2xx only once the call is durable.
 */
export class WriteQueue {
  private jobs: Job[] = [];
  private scheduled = false;
  private closed = false;

  /** onRollback: in-memory state that mirrors the tables (a running count) must be rebuilt. */
  constructor(
    private readonly db: Db,
    private readonly onRollback: () => void = () => {},
    /** Told of every commit and every failed write: a full disk or read-only folder marks storage failing. */
    private readonly health?: StorageHealth,
    /** Checked before each commit: an error refuses every job queued (the database file is gone). */
    private readonly precheck: () => Error | null = () => null,
  ) {}

  /**
   * undo: takes back what the job did outside the database (the duplicate window's ids) when its
   * transaction is rolled back, at once: the jobs after it in the same turn run again after it and
   * must not see a trace of a job that stored nothing.
   */
  run<T>(fn: (tx: WriteTx) => T, undo?: () => void): Promise<T> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    return new Promise<T>((resolve, reject) => {
      this.jobs.push({ run: fn, undo, resolve: resolve as (v: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /**
   * Runs everything queued now, synchronously (also used at shutdown). The common case is one
   * transaction for all jobs, with no savepoint per job. If any job throws, that transaction is rolled
   * back and every job runs again in a transaction of its own, so one failure cannot take the others
   * down. Jobs must therefore be safe to run again after a rollback (all of ours only write SQL and
   * build their results inside the job).
   */
  flush(): void {
    this.scheduled = false;
    const jobs = this.jobs;
    if (jobs.length === 0) return;
    this.jobs = [];
    // Before anything is committed: a commit into a deleted file would be acknowledged, then lost.
    const refused = this.precheck();
    if (refused) {
      this.health?.noteError(refused);
      for (const job of jobs) job.reject(refused);
      return;
    }
    let results: unknown[] | null = null;
    try {
      results = this.db.transaction(() => jobs.map((job) => job.run(TX)))();
    } catch {
      results = null;
      this.onRollback();
      for (const job of jobs) job.undo?.();
    }
    if (results) {
      this.health?.noteSuccess();
      for (let i = 0; i < jobs.length; i++) jobs[i].resolve(results[i]);
      return;
    }
    for (const job of jobs) {
      try {
        job.resolve(this.db.transaction(() => job.run(TX))());
        this.health?.noteSuccess();
      } catch (err) {
        this.onRollback();
        job.undo?.();
        this.health?.noteError(err);
        job.reject(err ?? new Error('write failed'));
      }
    }
  }

  close(): void {
    this.flush();
    this.closed = true;
  }
}
