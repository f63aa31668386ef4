import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// A real, small file system (tmpfs) to fill: a full disk as the kernel reports it (ENOSPC,
// SQLITE_FULL), not a stand-in. Mounting needs root on Linux (CI has it); elsewhere the test that
// asks says why it did not run, and names what covers the same path.

/** A tmpfs of `size` (`24m`) mounted on a new folder, or null (said on stdout) where none can be mounted. */
export function smallDisk(size: string, who: string, coveredBy: string): { dir: string; unmount: () => void } | null {
  const skip = (why: string) => {
    process.stdout.write(`${who}: real full-disk test skipped: ${why}; ${coveredBy}\n`);
    return null;
  };
  if (process.platform !== 'linux') return skip('not Linux');
  const dir = mkdtempSync(join(tmpdir(), 'wl-fulldisk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    return skip(`cannot mount a tmpfs here (${(err as Error).message.split('\n')[0]})`);
  }
  return {
    dir,
    unmount: () => {
      execFileSync('umount', ['-l', dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Writes zeros until the file system is full; returns the filler's path. */
export function fillDisk(dir: string): string {
  const path = join(dir, 'filler');
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
  return path;
}
