import type { Db } from './database';

type Job = { run: () => unknown; resolve: (v: unknown) => void; reject: (e: unknown) => void };

/**
 * Group commit: jobs queued in the same event-loop turn run in one transaction, so a burst of
 * requests costs one fsync-equivalent instead of one each. A job's promise settles after COMMIT,
 * which is what lets the collector answer 2xx only once the call is durable.
 */
export class WriteQueue {
  private jobs: Job[] = [];
  private scheduled = false;
  private closed = false;

  constructor(private readonly db: Db) {}

  run<T>(fn: () => T): Promise<T> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    return new Promise<T>((resolve, reject) => {
      this.jobs.push({ run: fn, resolve: resolve as (v: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Runs everything queued now, synchronously (also used at shutdown). */
  flush(): void {
    this.scheduled = false;
    const jobs = this.jobs;
    if (jobs.length === 0) return;
    this.jobs = [];
    const results: unknown[] = new Array(jobs.length);
    const errors: unknown[] = new Array(jobs.length);
    try {
      this.db.transaction(() => {
        for (let i = 0; i < jobs.length; i++) {
          // A failing job must not take the others down: savepoint each one.
          try {
            results[i] = this.db.transaction(jobs[i].run)();
          } catch (err) {
            errors[i] = err ?? new Error('write failed');
          }
        }
      })();
    } catch (err) {
      for (const job of jobs) job.reject(err);
      return;
    }
    for (let i = 0; i < jobs.length; i++) {
      if (errors[i] !== undefined) jobs[i].reject(errors[i]);
      else jobs[i].resolve(results[i]);
    }
  }

  close(): void {
    this.flush();
    this.closed = true;
  }
}
