import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCK_FILE } from '../../src/main/engine/store/folder-lock';

// Several labs started at the same instant on one data folder: exactly one may hold it. Found by
// review: a lock read while its maker had created it but not yet written its pid was taken for
// stale and removed, and two starts that both found the same stale lock could both remove and
// remake it — both labs then ran. Real processes (the lock names a pid), each taking the lock at
// the same millisecond and holding it a while, as a lab would.

const root = mkdtempSync(join(tmpdir(), 'wl-lock-race-'));
const moduleFile = join(root, 'folder-lock.cjs');
const childFile = join(root, 'child.cjs');
const clearFile = join(root, 'clear.cjs');
afterAll(() => rmSync(root, { recursive: true, force: true }));

beforeAll(() => {
  const source = readFileSync(join(__dirname, '../../src/main/engine/store/folder-lock.ts'), 'utf8');
  writeFileSync(moduleFile, ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } }).outputText);
  writeFileSync(
    childFile,
    `const { lockDataFolder } = require(${JSON.stringify(moduleFile)});
     const [dir, at] = [process.argv[2], Number(process.argv[3])];
     while (Date.now() < at);
     // Held until the test ends the round (or, should the test die first, for 2 minutes at most).
     try { lockDataFolder(dir); process.stdout.write('held'); setTimeout(() => process.exit(0), 120_000); }
     catch (e) { process.stdout.write(e.code === 'WL_FOLDER_IN_USE' ? 'refused' : 'error: ' + e.message); }`,
  );
  // One start, with another start's moves slipped in between its own file reads (the parent test
  // process stands for that other start: it runs). Modes:
  //   appears:  no takeover lock; another start makes one just after this one first looks at it.
  //   replaced: a takeover lock of a process gone; just after this start reads it, another start
  //             has removed it and made its own.
  //   as-is:    the takeover lock as the test left it, put in place now (its change time).
  //   empty-young, empty-old: the folder's lock is empty (a start writing it, without hard links),
  //             put in place now, or (the clock moved on 11 s) long ago.
  //   unreadable: the folder's lock cannot be read (another user's lab wrote it, owner-only).
  //   steal:    the folder's lock names a process gone; another start removes it just before this
  //             one reads it, and makes its own just after this one reads it again under the takeover.
  writeFileSync(
    clearFile,
    `const fs = require('node:fs');
     const { clearStaleTakeover, lockDataFolder } = require(${JSON.stringify(moduleFile)});
     const [target, mode] = [process.argv[2], process.argv[3]];
     const other = String(process.ppid) + '\\n';
     const realStat = fs.statSync, realRead = fs.readFileSync;
     let looks = 0, reads = 0;
     fs.statSync = (p, ...rest) => {
       if (p !== target || mode !== 'appears' || looks++ > 0) return realStat(p, ...rest);
       try { return realStat(p, ...rest); } finally { fs.writeFileSync(p, other); }
     };
     fs.readFileSync = (p, ...rest) => {
       if (p !== target) return realRead(p, ...rest);
       reads++;
       if (mode === 'appears' && looks === 0) { looks++; try { return realRead(p, ...rest); } finally { fs.writeFileSync(p, other); } }
       if (mode === 'replaced' && reads === 1) { try { return realRead(p, ...rest); } finally { fs.rmSync(p); fs.writeFileSync(p, other); } }
       if (mode === 'unreadable') throw Object.assign(new Error('EACCES: permission denied, open ' + p), { code: 'EACCES' });
       if (mode === 'steal' && reads === 1) { fs.rmSync(p); return realRead(p, ...rest); }
       if (mode === 'steal' && reads === 2) { try { return realRead(p, ...rest); } finally { fs.writeFileSync(p, other); } }
       return realRead(p, ...rest);
     };
     if (mode === 'empty-old') { const realNow = Date.now; Date.now = () => realNow() + 11_000; }
     if (mode === 'steal' || mode === 'unreadable' || mode.startsWith('empty-')) {
       try { lockDataFolder(require('node:path').dirname(target)); process.stdout.write('held'); }
       catch (e) { process.stdout.write(e.code === 'WL_FOLDER_IN_USE' ? 'refused' : e.code ? 'error: ' + e.code + ' ' + e.path : 'error: ' + e.message); }
     } else {
       if (mode === 'as-is') fs.utimesSync(target, new Date(), new Date());
       clearStaleTakeover(target);
       process.stdout.write(fs.existsSync(target) ? 'kept' : 'removed');
     }`,
  );
});

/**
 * A start at `at`: what it said. One that holds the folder keeps it (it runs) until the round ends:
 * held for a fixed while, a start delayed past it on a busy machine found the holder gone and rightly
 * took the folder over, which read as two holders.
 */
function start(dir: string, at: number, holders: ChildProcess[]): Promise<string> {
  const child = spawn(process.execPath, [childFile, dir, String(at)], { stdio: ['ignore', 'pipe', 'inherit'] });
  holders.push(child);
  let out = '';
  return new Promise((resolve) => {
    child.stdout.on('data', (d) => {
      out += String(d);
      resolve(out);
    });
    child.once('close', () => resolve(out));
  });
}

async function endAll(children: ChildProcess[]): Promise<void> {
  await Promise.all(children.map((c) => (c.exitCode !== null || c.signalCode !== null ? undefined : new Promise((r) => (c.once('close', r), c.kill('SIGKILL'))))));
}

function run(file: string, ...args: string[]): Promise<string> {
  const child = spawn(process.execPath, [file, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += String(d)));
  return new Promise((resolve) => child.once('close', () => resolve(out)));
}

async function deadPid(): Promise<number> {
  const gone = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => gone.once('close', resolve));
  return gone.pid!;
}

describe('the data folder lock, taken by several starts at once', () => {
  for (const stale of [false, true]) {
    it(`exactly one of four holds a folder ${stale ? 'with a lock left by a process gone' : 'with no lock'}, in each of 10 rounds`, async () => {
      const dead = await deadPid();
      for (let round = 0; round < 10; round++) {
        const dir = join(root, `${stale ? 's' : 'f'}${round}`);
        mkdirSync(dir);
        if (stale) writeFileSync(join(dir, LOCK_FILE), `${dead}\n`);
        // Far enough ahead for four Node processes to start on a busy machine.
        const at = Date.now() + 700;
        const children: ChildProcess[] = [];
        const outcomes = (await Promise.all([0, 1, 2, 3].map(() => start(dir, at, children)))).sort();
        await endAll(children);
        expect(outcomes, `round ${round}`).toEqual(['held', 'refused', 'refused', 'refused']);
      }
    }, 120_000);
  }
});

describe('a stale lock taken over while other starts move', () => {
  it('a takeover lock made just after the first look is kept (no holder read first is not stale)', async () => {
    const takeover = join(root, 'appears.takeover');
    expect(await run(clearFile, takeover, 'appears')).toBe('kept');
    expect(readFileSync(takeover, 'utf8').trim()).toBe(String(process.pid));
  });

  it('a takeover lock read as stale but replaced by a running start before the removal is kept', async () => {
    const takeover = join(root, 'replaced.takeover');
    writeFileSync(takeover, `${await deadPid()}\n`);
    expect(await run(clearFile, takeover, 'replaced')).toBe('kept');
    expect(readFileSync(takeover, 'utf8').trim()).toBe(String(process.pid));
  });

  it('a takeover lock whose start is gone is removed; one whose start runs is kept', async () => {
    const gone = join(root, 'gone.takeover');
    writeFileSync(gone, `${await deadPid()}\n`);
    expect(await run(clearFile, gone, 'as-is')).toBe('removed');
    const held = join(root, 'held.takeover');
    writeFileSync(held, `${process.pid}\n`);
    expect(await run(clearFile, held, 'as-is')).toBe('kept');
  });

  it('a lock another start makes while this one holds the takeover is not removed: this start is refused', async () => {
    const dir = join(root, 'steal');
    mkdirSync(dir);
    writeFileSync(join(dir, LOCK_FILE), `${await deadPid()}\n`);
    expect(await run(clearFile, join(dir, LOCK_FILE), 'steal')).toBe('refused');
    expect(readFileSync(join(dir, LOCK_FILE), 'utf8').trim()).toBe(String(process.pid));
  });

  it("a lock this start cannot read (another user's lab) is neither removed nor taken: the start stops, naming it", async () => {
    const dir = join(root, 'unreadable');
    mkdirSync(dir);
    writeFileSync(join(dir, LOCK_FILE), `${process.pid}\n`);
    expect(await run(clearFile, join(dir, LOCK_FILE), 'unreadable')).toBe(`error: EACCES ${join(dir, LOCK_FILE)}`);
    expect(readFileSync(join(dir, LOCK_FILE), 'utf8').trim()).toBe(String(process.pid));
  });

  it('an empty lock is waited for while young (a start may be writing it) and taken over once old', async () => {
    for (const [mode, outcome] of [['empty-young', `error: ${'the lock kept changing hands; start again'}`], ['empty-old', 'held']] as const) {
      const dir = join(root, mode);
      mkdirSync(dir);
      writeFileSync(join(dir, LOCK_FILE), '');
      const said = await run(clearFile, join(dir, LOCK_FILE), mode);
      expect(said.startsWith('error: ') ? `error: ${said.split(': ').pop()}` : said, mode).toBe(outcome);
      if (mode === 'empty-young') expect(readFileSync(join(dir, LOCK_FILE), 'utf8'), 'the young empty lock is left').toBe('');
    }
  });
});
