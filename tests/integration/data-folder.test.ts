import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startEngine } from '../../src/main/engine/engine';
import type { Engine, EngineOptions } from '../../src/main/engine/engine.types';
import { describeDataProblem } from '../../src/main/engine/store/data-problem';
import { makeFolder, prepareDataFolder } from '../../src/main/engine/store/data-folder';

// The data folder holds every shared secret and payload (issue 22, item 7): owner-only folder (0700)
// and files (0600), an existing folder tightened only when it is the lab's; and a damaged or
// read-only database stops the start with which file, what is wrong and what to do.

const posix = process.platform !== 'win32';
const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
const DB = 'webhook-lab.db';

const dirs: string[] = [];
const immutable: string[] = [];
let engine: Engine | undefined;
afterEach(async () => {
  await engine?.stop();
  engine = undefined;
  for (const p of immutable.splice(0)) execFileSync('chattr', ['-i', p]);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'wl-folder-'));
  dirs.push(d);
  return d;
}

async function start(dataDir: string, extra: Partial<EngineOptions> = {}): Promise<{ engine: Engine; log: string[] }> {
  const log: string[] = [];
  engine = await startEngine({ dataDir, collectorPort: 0, mockReceiverPorts: { http: 0, https: 0 }, log: (l) => log.push(l), ...extra });
  return { engine, log };
}

async function stop(): Promise<void> {
  await engine?.stop();
  engine = undefined;
}

/** Sends one call, so the database has a WAL with frames in it. */
async function storeOneCall(e: Engine): Promise<void> {
  const source = await e.handlers.createSource({ name: `s${Date.now()}` } as never);
  const res = await fetch(`${e.collectorUrl}/v1/track`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}`, 'content-type': 'application/json' },
    body: JSON.stringify({ userId: 'u', event: 'E', properties: { secret: 's3cret' } }),
  });
  expect(res.status).toBe(200);
}

/** A data folder as an older lab left it: 0755, its files 0644. */
async function oldLabFolder(dir: string, other?: string): Promise<void> {
  const { engine: e } = await start(dir);
  await storeOneCall(e);
  await stop();
  chmodSync(dir, 0o755);
  for (const f of readdirSync(dir)) chmodSync(join(dir, f), 0o644);
  if (other) writeFileSync(join(dir, other), 'the user’s own file\n');
}

/** Makes a file or folder read-only even for root: the immutable attribute; null with the reason where it can't. */
function makeImmutable(path: string): string | null {
  if (process.getuid?.() !== 0) {
    chmodSync(path, statSync(path).isDirectory() ? 0o500 : 0o400);
    return null;
  }
  try {
    execFileSync('chattr', ['+i', path], { stdio: 'pipe' });
    immutable.push(path);
    return null;
  } catch (err) {
    return `chattr +i failed (${(err as Error).message.split('\n')[0]}): root ignores permissions, so no read-only case can be made here`;
  }
}

describe.runIf(posix)('modes', () => {
  it('a new data folder is 0700, and the database, its -wal and -shm are 0600 while the lab runs', async () => {
    const dir = join(tempDir(), 'nested', 'lab');
    const { engine: e, log } = await start(dir);
    await storeOneCall(e);
    expect(mode(dir)).toBe('700');
    for (const f of [DB, `${DB}-wal`, `${DB}-shm`]) {
      expect(existsSync(join(dir, f)), f).toBe(true);
      expect(mode(join(dir, f)), f).toBe('600');
    }
    // Nothing to say about a folder the lab made itself.
    expect(log.filter((l) => l.startsWith('data folder'))).toEqual([]);
  });

  it('an old lab folder (0755, files 0644) is tightened at start, said in one log line', async () => {
    const dir = join(tempDir(), 'lab');
    mkdirSync(dir, { mode: 0o755 });
    await oldLabFolder(dir);
    const { engine: e, log } = await start(dir);
    await storeOneCall(e);
    expect(mode(dir)).toBe('700');
    expect(readdirSync(dir)).toEqual(expect.arrayContaining([DB, 'key.pem', 'cert.pem']));
    for (const f of readdirSync(dir)) expect(mode(join(dir, f)), f).toBe(f === 'cert.pem' ? '644' : '600');
    const lines = log.filter((l) => l.startsWith('data folder'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(dir);
    expect(lines[0]).toMatch(/open to other users \(0755\): now owner-only \(0700\)/);
    expect(lines[0]).toMatch(/webhook-lab\.db 0644.*made owner-only \(0600\)/);
    // The next start has nothing to say.
    await stop();
    expect((await start(dir)).log.filter((l) => l.startsWith('data folder'))).toEqual([]);
  });

  it('a symlink or a folder under a lab file name is not followed nor chmodded (a link to a device or to someone’s key)', () => {
    const dir = join(tempDir(), 'links');
    mkdirSync(dir, { mode: 0o700 });
    const outside = join(tempDir(), 'someones-key.pem');
    writeFileSync(outside, 'secret', { mode: 0o640 });
    chmodSync(outside, 0o640);
    symlinkSync(outside, join(dir, 'key.pem'));
    mkdirSync(join(dir, `${DB}-journal`), { mode: 0o755 });
    chmodSync(join(dir, `${DB}-journal`), 0o755);
    expect(prepareDataFolder(dir)).toBeNull();
    expect(mode(outside)).toBe('640');
    expect(mode(join(dir, `${DB}-journal`))).toBe('755');
  });

  it('a folder of the user’s (--data-dir .) is never chmodded; the lab’s own files in it are 0600, said once', async () => {
    const dir = join(tempDir(), 'project');
    mkdirSync(dir, { mode: 0o755 });
    await oldLabFolder(dir, 'notes.txt');
    const { log } = await start(dir);
    expect(mode(dir)).toBe('755');
    expect(mode(join(dir, 'notes.txt'))).toBe('644');
    expect(mode(join(dir, DB))).toBe('600');
    const lines = log.filter((l) => l.startsWith('data folder'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/holds other files than the lab's, so it is left as it is/);
  });

  it('the default folder (owned) is tightened whatever else it holds (the desktop app keeps its Electron files there)', async () => {
    const dir = join(tempDir(), 'webhook-lab');
    mkdirSync(dir, { mode: 0o755 });
    await oldLabFolder(dir, 'Preferences');
    await start(dir, { ownedDataDir: true });
    expect(mode(dir)).toBe('700');
    expect(mode(join(dir, 'Preferences'))).toBe('644');
  });
});

describe('a database that cannot be used stops the start with which file, what is wrong and what to do', () => {
  /** Starts on `dir`, expects a refusal, and returns the text the user would read. */
  async function refusal(dir: string): Promise<string> {
    const err = await start(dir).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err, 'the start should have failed').not.toBeNull();
    const problem = describeDataProblem(err, dir);
    expect(problem, `not explained: ${String(err)}`).not.toBeNull();
    const text = `${problem!.title}\n${problem!.detail}`;
    expect(text).not.toMatch(/SqliteError|\n\s+at /);
    return text;
  }

  it('garbage bytes: "not a SQLite database", move it aside; the file is left as it was', async () => {
    const dir = tempDir();
    const garbage = Buffer.from(Array.from({ length: 100_000 }, (_, i) => (i * 7919) % 251));
    writeFileSync(join(dir, DB), garbage);
    const text = await refusal(dir);
    expect(text).toContain(join(dir, DB));
    expect(text).toMatch(/is not a SQLite database/);
    expect(text).toMatch(/Move it aside/);
    expect(text).toMatch(/never deletes, moves or repairs your data by itself/);
    expect(readFileSync(join(dir, DB)).equals(garbage)).toBe(true);
  });

  it('a truncated database (a lab file cut short): "is damaged", move it aside', async () => {
    const dir = tempDir();
    const { engine: e } = await start(dir);
    for (let i = 0; i < 5; i++) await storeOneCall(e);
    await stop();
    truncateSync(join(dir, DB), 16_384); // its first page only: the schema names pages that are gone
    const text = await refusal(dir);
    expect(text).toContain(join(dir, DB));
    expect(text).toMatch(/is damaged/);
    expect(text).toMatch(/Move it aside/);
  });

  it('a read-only database file: "cannot be written", make it writable', async (ctx) => {
    const dir = tempDir();
    await start(dir);
    await stop();
    const reason = makeImmutable(join(dir, DB));
    if (reason) {
      console.log(`skipped: ${reason}`);
      return ctx.skip();
    }
    const text = await refusal(dir);
    expect(text).toContain(join(dir, DB));
    expect(text).toMatch(/cannot be written: the file or its folder is read-only/);
  });

  it('a read-only data folder: says which and what to do', async (ctx) => {
    const dir = tempDir();
    await start(dir);
    await stop();
    const reason = makeImmutable(dir);
    if (reason) {
      console.log(`skipped: ${reason}`);
      return ctx.skip();
    }
    const text = await refusal(dir);
    expect(text).toContain(dir);
    // The folder lock (folder-lock.ts) is the first file the lab writes there.
    expect(text).toMatch(/permission denied/);
    expect(text).toMatch(/Give this user write access/);
  });

  it('a folder where the database file should be: "is a folder"', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, DB));
    const text = await refusal(dir);
    expect(text).toContain(join(dir, DB));
    expect(text).toMatch(/cannot be opened: it is a folder/);
  });

  it('a data folder path that is a file: "is not a folder"', async () => {
    const file = join(tempDir(), 'not-a-folder');
    writeFileSync(file, 'x');
    const text = await refusal(file);
    expect(text).toContain(file);
    expect(text).toMatch(/is not a folder/);
  });
});

describe('makeFolder', () => {
  it('makes every missing level owner-only, leaves an existing folder as it is, and refuses a file in the way', () => {
    const root = tempDir();
    const deep = join(root, 'a', 'b', 'c');
    makeFolder(deep);
    expect(statSync(deep).isDirectory()).toBe(true);
    if (posix) for (const p of [join(root, 'a'), join(root, 'a', 'b'), deep]) expect(mode(p)).toBe('700');
    writeFileSync(join(deep, 'kept'), 'x');
    makeFolder(deep);
    expect(readdirSync(deep)).toEqual(['kept']);
    const file = join(root, 'file');
    writeFileSync(file, 'x');
    expect(() => makeFolder(file)).toThrow(/EEXIST/);
    expect(() => makeFolder(join(file, 'below'))).toThrow(/ENOTDIR/);
  });
});
