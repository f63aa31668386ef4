import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FolderInUseError, LOCK_FILE, lockDataFolder } from '../../src/main/engine/store/folder-lock';

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const folder = () => {
  const d = mkdtempSync(join(tmpdir(), 'wl-lock-'));
  dirs.push(d);
  return d;
};
const lockedBy = (dir: string, pid: number) => writeFileSync(join(dir, LOCK_FILE), `${pid}\n`);

describe('lockDataFolder (one lab per data folder)', () => {
  it('refuses a folder another running process holds, naming it', () => {
    const dir = folder();
    const other = spawn('sleep', ['30']);
    children.push(other);
    lockedBy(dir, other.pid!);
    expect(() => lockDataFolder(dir)).toThrow(FolderInUseError);
    expect(() => lockDataFolder(dir)).toThrow(`another Webhook Lab (process ${other.pid}) is using this data folder`);
    expect(readFileSync(join(dir, LOCK_FILE), 'utf8')).toBe(`${other.pid}\n`);
  });

  it('takes over a lock whose process is gone, or naming no process; lets go of its own only', async () => {
    const dir = folder();
    const gone = spawn('true');
    await new Promise((resolve) => gone.once('close', resolve));
    lockedBy(dir, gone.pid!);
    const release = lockDataFolder(dir);
    expect(readFileSync(join(dir, LOCK_FILE), 'utf8')).toBe(`${process.pid}\n`);
    release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);

    writeFileSync(join(dir, LOCK_FILE), 'garbage');
    const again = lockDataFolder(dir);
    // Another start took it over meanwhile: releasing leaves that one's lock.
    lockedBy(dir, 999_999_999);
    again();
    expect(readFileSync(join(dir, LOCK_FILE), 'utf8')).toBe('999999999\n');
  });

  it.runIf(existsSync('/proc/self/stat'))('takes over a lock whose process was killed but not yet reaped (a zombie)', async () => {
    const dir = folder();
    // The shell's background child exits and is never waited for: `exec sleep` does not reap it.
    const parent = spawn('sh', ['-c', 'sleep 0.05 & echo $!; exec sleep 30']);
    children.push(parent);
    const pid = Number(await new Promise<string>((resolve) => parent.stdout.once('data', (d) => resolve(String(d).trim()))));
    for (let i = 0; i < 200 && !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8')); i++) await new Promise((r) => setTimeout(r, 25));
    expect(readFileSync(`/proc/${pid}/stat`, 'utf8')).toMatch(/\) Z /);
    lockedBy(dir, pid);
    lockDataFolder(dir)();
  });
});
