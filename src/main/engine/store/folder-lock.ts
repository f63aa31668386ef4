import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
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
  // Twice: a lock left by a process that is gone is removed, then made again (if another start made
  // it meanwhile, the second try finds that one).
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      try {
        writeSync(fd, `${process.pid}\n`);
      } finally {
        closeSync(fd);
      }
      return () => release(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err;
    }
    const holder = holderOf(path);
    // This process itself (a second engine in one process, as tests start them) is not another lab.
    if (holder !== null && holder !== process.pid && running(holder)) throw new FolderInUseError(dir, holder, path);
    rmSync(path, { force: true });
  }
}

function holderOf(path: string): number | null {
  try {
    const pid = Number(readFileSync(path, 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
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
    return !/^\d+ \(.*\) Z /s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true; // no /proc (macOS, Windows): the signal check stands
  }
}

/** Removes the lock if it is still this process's (a start that took it over meanwhile keeps its own). */
function release(path: string): void {
  if (holderOf(path) === process.pid) rmSync(path, { force: true });
}
