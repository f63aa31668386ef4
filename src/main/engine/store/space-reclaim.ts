import type { Db } from './database';
import type { StorageHealth } from './storage-health';
import { backgroundSlices } from '../slice-meter';

/**
 * Pages given back to the file system per step: 128 pages of 16 KB (2 MB) took about 7 ms on a
 * 2-core machine (256 took 31 ms), short enough to sit between the collector's group commits.
 */
export const RECLAIM_PAGES = 128;
/** The pause between steps: timers, so requests and commits run in between. */
export const RECLAIM_EVERY_MS = 25;

/**
 * Gives the pages retention freed back to the file system (issue 27): `PRAGMA incremental_vacuum`
 * in small steps, off the hot path, until the free list is empty. Each step moves pages from the end
 * of the file into free slots, in its own short transaction; the file shrinks at the next checkpoint
 * (every 256 WAL pages, and once at the end). Only a file with auto_vacuum INCREMENTAL can do it
 * (database.ts, auto-vacuum.ts); on another it does nothing. While storage is failing (a full disk:
 * storage-health.ts) it does not start and stops, and a step that fails stops it without a word to
 * the storage state: the writes that matter say so themselves.
 */
export class SpaceReclaimer {
  private timer: NodeJS.Timeout | null = null;
  private readonly incremental: boolean;
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly health: StorageHealth,
    private readonly log: (line: string) => void = () => undefined,
  ) {
    this.incremental = (db.pragma('auto_vacuum', { simple: true }) as number) === 2;
  }

  /** Pages in the file that hold nothing (freelist_count). */
  freePages(): number {
    return this.db.pragma('freelist_count', { simple: true }) as number;
  }

  /** Starts giving free pages back, unless it is already doing so; `done` is told when it stops. */
  start(done?: (freed: number) => void): void {
    if (this.closed || this.timer || !this.incremental || !this.health.ok || this.freePages() === 0) return;
    const before = this.freePages();
    const step = () => {
      this.timer = null;
      if (this.closed) return;
      let left: number;
      try {
        if (!this.health.ok) return;
        left = backgroundSlices.time('space back', () => {
          this.db.pragma(`incremental_vacuum(${RECLAIM_PAGES})`);
          const pages = this.freePages();
          // The last pages moved are still in the WAL: a checkpoint writes them and cuts the file.
          if (pages === 0) this.db.pragma('wal_checkpoint(PASSIVE)');
          return pages;
        });
      } catch (err) {
        this.log(`storage: giving free space back stopped (${(err as Error).message}); retention's next run tries again`);
        return;
      }
      if (left > 0) {
        this.timer = setTimeout(step, RECLAIM_EVERY_MS);
        this.timer.unref();
      } else {
        done?.(before);
      }
    };
    this.timer = setTimeout(step, RECLAIM_EVERY_MS);
    this.timer.unref();
  }

  get running(): boolean {
    return this.timer !== null;
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
