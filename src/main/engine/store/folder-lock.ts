import { linkSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// One lab per data folder. The desktop app and `webhook-lab serve` share the default folder, and the
// engine keeps some of the folder's state in memory (the duplicate window, running totals, the next
// call id): a second lab on it accepted the same messageId as the first, and their call ids could
// meet. A lock file names the process holding the folder; a start that finds it held by a process
// still running is refused (data-problem.ts words it). One whose process is gone (killed, crashed,
// the machine restarted) is taken over: nothing to clean up by hand after a `kill -9`.

export const LOCK_FILE = 'webhook-lab.lock';

export class FolderInUseError extends Error {
  readonly code = 'WL_FOLDER_IN_USE';
  constructor(
    readonly dir: string,
    readonly pid: number,
    readonly path: string,
  ) {
    super(`${dir}: another Webhook Lab (process ${pid}) is using this data folder`);
  }
}

/** Takes the folder for this process; returns what lets it go. Throws FolderInUseError when another running process holds it. */
export function lockDataFolder(dir: string): () => void {
  const path = join(dir, LOCK_FILE);
  const takeover = `${path}.takeover`;
  // The lock appears whole or not at all: made as a file of our own, then hard-linked into place
  // (link fails if the name exists). Opened with 'wx' and written after, a lock read in between
  // was empty, taken for stale and removed: two starts at once both ran (found by review).
  const mine = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(mine, `${process.pid}\n`, { mode: 0o600 });
  } catch (err) {
    // A full disk fails the write, not the open: the empty file is removed, and the error names it
    // (a write's error names no path), so the start says which folder is full (issue 38).
    rmSync(mine, { force: true });
    throw namingPath(err, mine);
  }
  try {
    for (let attempt = 0; attempt < 200; attempt++) {
      if (placed(mine, path)) return () => release(path);
      const holder = holderOf(path);
      // This process itself (a second engine in one process, as tests start them) is not another lab.
      if (typeof holder === 'number' && holder !== process.pid && running(holder)) throw new FolderInUseError(dir, holder, path);
      // Left by a process that is gone. Removing it by name could remove a lock another start has
      // just put in its place (starts at the same instant both ran: found in CI), so only the one
      // start holding the takeover lock may remove a lock another process made, and only while its
      // name still holds the file it judged (a holder lets its own go without the takeover lock).
      if (!placed(mine, takeover)) {
        clearStaleTakeover(takeover);
        pause(5);
        continue;
      }
      let removed = false;
      try {
        // Looked at before it is read: read first, a lock gone at the read and made by another start
        // just after was taken for the stale one and removed, and two starts took the folder (a
        // pinned CI run). Nothing is removed on GONE: there is nothing to remove.
        const seen = lookAt(path);
        const now = holderOf(path);
        const stale = now === GONE ? false : now === EMPTY ? (seen?.ageMs ?? 0) > ORPHAN_MS : now === GARBAGE || now === holder || !running(now);
        if (seen && stale) removed = removeIfSame(path, seen);
      } finally {
        release(takeover);
      }
      // An empty lock too young to judge (a start writing it, without hard links): wait for it.
      if (!removed) pause(5);
    }
    throw new Error(`${path}: the lock kept changing hands; start again`);
  } finally {
    rmSync(mine, { force: true });
  }
}

/**
 * A lock in place this long (since its link: its ctime) is left by a start that is gone when it is
 * empty; a takeover lock held this long is, whatever it names (no start holds it for more than a moment).
 */
const ORPHAN_MS = 10_000;

interface Seen {
  id: string;
  ageMs: number;
}

/** The file's identity (device, inode, change time) and how long since it was put in place, or null when there is none. */
function lookAt(path: string): Seen | null {
  let s;
  try {
    s = statSync(path, { bigint: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw namingPath(err, path);
  }
  return { id: `${s.dev}:${s.ino}:${s.ctimeNs}`, ageMs: Date.now() - Number(s.ctimeMs) };
}

/** Removes the name only if it still holds the file looked at (a start may have put its own in its place since). */
function removeIfSame(path: string, seen: Seen): boolean {
  if (lookAt(path)?.id !== seen.id) return false;
  rmSync(path, { force: true });
  return true;
}

/**
 * @internal Exported for its test. Removes a takeover lock whose start is gone (it crashed within
 * microseconds of taking it), or one held over ORPHAN_MS: looked at before it is read, and removed only
 * while its name still holds the file looked at.
 */
export function clearStaleTakeover(takeover: string): void {
  const seen = lookAt(takeover);
  if (!seen) return;
  const holder = holderOf(takeover);
  if (holder === GONE) return;
  const stale = seen.ageMs > ORPHAN_MS || holder === GARBAGE || (typeof holder === 'number' && holder !== process.pid && !running(holder));
  if (stale) removeIfSame(takeover, seen);
}

function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Puts `from` in place as `to` unless `to` exists (false then). Without hard links (FAT): an exclusive create. */
function placed(from: string, to: string): boolean {
  try {
    linkSync(from, to);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS') throw err;
  }
  try {
    writeFileSync(to, readFileSync(from), { flag: 'wx', mode: 0o600 });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** No lock. */
const GONE = 'gone';
/** An empty lock: without hard links a lock is created, then written (placed()), so it may be a start's, being written. */
const EMPTY = 'empty';
/** A lock that names no process: stale. */
const GARBAGE = 'garbage';

/**
 * The pid a lock names, or what it is instead. A lock this start cannot read (another user's lab)
 * is not stale: the start stops and says which file (data-problem.ts).
 */
function holderOf(path: string): number | typeof GONE | typeof EMPTY | typeof GARBAGE {
  let text: string;
  try {
    text = readFileSync(path, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return GONE;
    throw namingPath(err, path);
  }
  if (text === '') return EMPTY;
  const pid = Number(text);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : GARBAGE;
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it runs, as another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A killed lab whose parent has not reaped it yet is a zombie: signals reach it, but it holds nothing.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The state follows the last ')' (a process's name may hold one).
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no /proc (macOS, Windows): the signal check stands
  }
}

/** Removes the lock if it is still this process's (a start that took it over meanwhile keeps its own). */
function release(path: string): void {
  try {
    if (holderOf(path) === process.pid) rmSync(path, { force: true });
  } catch {
    // Unreadable now: left for the next start to judge, never a failed stop.
  }
}

/** The error with the file it concerns, where Node's (a failed write) names none. */
export function namingPath(err: unknown, path: string): unknown {
  if (typeof err === 'object' && err !== null && (err as NodeJS.ErrnoException).path === undefined) (err as NodeJS.ErrnoException).path = path;
  return err;
}
