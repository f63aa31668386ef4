import { spawn } from 'node:child_process';
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
     try { lockDataFolder(dir); process.stdout.write('held'); setTimeout(() => {}, 600); }
     catch (e) { process.stdout.write(e.code === 'WL_FOLDER_IN_USE' ? 'refused' : 'error: ' + e.message); }`,
  );
  // Clears a takeover lock the way a start that could not take it does. With "appears", no lock is
  // there when it is called, and another start (the parent here, which runs) makes one just after the
  // clearing first looks at the file: the interleaving a pinned CI run met once (issue 44).
  writeFileSync(
    clearFile,
    `const fs = require('node:fs');
     const { clearStaleTakeover } = require(${JSON.stringify(moduleFile)});
     const [takeover, mode] = [process.argv[2], process.argv[3]];
     let made = mode !== 'appears';
     for (const name of ['statSync', 'readFileSync']) {
       const real = fs[name];
       fs[name] = (p, ...rest) => {
         if (p !== takeover || made) return real(p, ...rest);
         made = true;
         try { return real(p, ...rest); } finally { fs.writeFileSync(p, process.ppid + '\\n'); }
       };
     }
     clearStaleTakeover(takeover);
     process.stdout.write(fs.existsSync(takeover) ? 'kept' : 'removed');`,
  );
});

function start(dir: string, at: number): Promise<string> {
  return run(childFile, dir, String(at));
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
        // Far enough ahead for three Node processes to start on a busy machine.
        const at = Date.now() + 700;
        const outcomes = (await Promise.all([start(dir, at), start(dir, at), start(dir, at), start(dir, at)])).sort();
        expect(outcomes, `round ${round}`).toEqual(['held', 'refused', 'refused', 'refused']);
      }
    }, 120_000);
  }
});

describe('clearing a takeover lock left behind', () => {
  it('keeps one another start made while it looked (no holder read first must not mean stale)', async () => {
    const takeover = join(root, 'appears.takeover');
    expect(await run(clearFile, takeover, 'appears')).toBe('kept');
    expect(readFileSync(takeover, 'utf8').trim()).toBe(String(process.pid));
  });

  it('removes one whose start is gone, and keeps one whose start runs', async () => {
    const gone = join(root, 'gone.takeover');
    writeFileSync(gone, `${await deadPid()}\n`);
    expect(await run(clearFile, gone, 'as is')).toBe('removed');
    const held = join(root, 'held.takeover');
    writeFileSync(held, `${process.pid}\n`);
    expect(await run(clearFile, held, 'as is')).toBe('kept');
  });
});
