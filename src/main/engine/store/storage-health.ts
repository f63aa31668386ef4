import type { StorageState } from '../../../shared/types';
import { formatTimestamp } from '../../../shared/timestamp';

// Whether the store can write (issue 22: a full disk must never end the process). A write that fails
// for lack of space, a read-only or vanished data folder or an I/O error marks storage as failing;
// the collector then answers 503 with Retry-After, the dispatcher pauses, and a probe write (Store)
// retries every PROBE_EVERY_MS until one commits. Any committed write marks it ok again.

/** How often a failing store tries a probe write. */
export const PROBE_EVERY_MS = 1000;

/**
 * The code of a write refused because the database file is no longer where the lab opened it (its
 * folder deleted or moved): SQLite would go on writing into a file nobody will open again.
 */
export const DATA_GONE = 'EDATAGONE';

export function dataGoneError(path: string): Error & { code: string } {
  return Object.assign(new Error(`${path} was deleted or moved while the lab was running`), { code: DATA_GONE });
}

// SQLite's primary result codes that mean "cannot write here now", whatever the extended code
// (SQLITE_IOERR_WRITE, SQLITE_READONLY_DBMOVED, ...); and the same from the file system.
const SQLITE_STORAGE = /^SQLITE_(FULL|IOERR|READONLY|CANTOPEN|NOTADB|CORRUPT)/;
const FS_STORAGE = new Set(['ENOSPC', 'EDQUOT', 'EROFS', DATA_GONE]);

export function isStorageError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return SQLITE_STORAGE.test(code) || FS_STORAGE.has(code);
}

/** One sentence for people: what failed and what to do. */
export function describeStorageError(err: unknown): string {
  const code = String((err as { code?: unknown }).code);
  const detail = err instanceof Error ? err.message : String(err);
  if (code === DATA_GONE) {
    return `the database file was deleted or moved (${detail}); calls are refused with 503 and deliveries paused: put the folder back where it was, or restart the lab to begin a new one there`;
  }
  const what = /^SQLITE_FULL|^ENOSPC|^EDQUOT/.test(code)
    ? 'the disk holding the data folder is full'
    : /^SQLITE_READONLY|^EROFS/.test(code)
      ? 'the data folder or its database is read-only'
      : /^SQLITE_CANTOPEN/.test(code)
        ? 'the database file cannot be opened (was the data folder moved or deleted?)'
        : 'the database cannot be written';
  return `${what} (${code}: ${detail}); calls are refused with 503 and deliveries paused until a write succeeds again`;
}

export class StorageHealth {
  private state: StorageState = { ok: true, code: null, message: null, since: null };
  private readonly listeners = new Set<(s: StorageState) => void>();

  constructor(private readonly now: () => number) {}

  get(): StorageState {
    return this.state;
  }

  get ok(): boolean {
    return this.state.ok;
  }

  /** Records a failed write; true when it was a storage failure (the caller answers 503 or pauses). */
  noteError(err: unknown): boolean {
    if (!isStorageError(err)) return false;
    if (this.state.ok) this.set({ ok: false, code: String((err as { code: string }).code), message: describeStorageError(err), since: formatTimestamp(this.now()) });
    return true;
  }

  /** A write committed: storage works (again). */
  noteSuccess(): void {
    if (!this.state.ok) this.set({ ok: true, code: null, message: null, since: null });
  }

  onChange(listener: (s: StorageState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private set(s: StorageState): void {
    this.state = s;
    for (const l of this.listeners) {
      try {
        l(s);
      } catch {
        // a listener's failure is its own; the others still hear of the change
      }
    }
  }
}
