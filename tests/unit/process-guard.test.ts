import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';

// The guard runs in a child process as it is (transpiled, no bundling): an unhandled rejection there
// is logged and the process goes on to its end, where Node's default would exit 1 at once.
function runChild(withGuard: boolean) {
  const dir = mkdtempSync(join(tmpdir(), 'wl-guard-'));
  try {
    const source = readFileSync(join(__dirname, '../../src/main/process-guard.ts'), 'utf8');
    const js = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } }).outputText;
    writeFileSync(join(dir, 'guard.cjs'), js);
    const script = `
      const { keepRunningOnUnhandledRejection } = require('./guard.cjs');
      if (${withGuard}) keepRunningOnUnhandledRejection((line) => process.stderr.write(line + '\\n'));
      Promise.reject(new Error('disk full in a void promise'));
      setTimeout(() => process.stdout.write('still running\\n'), 50);
    `;
    writeFileSync(join(dir, 'main.cjs'), script);
    return spawnSync(process.execPath, [join(dir, 'main.cjs')], { encoding: 'utf8', timeout: 20_000 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('unhandled rejections', () => {
  it('are logged and the process keeps running', () => {
    const r = runChild(true);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('still running\n');
    expect(r.stderr).toMatch(/unhandled promise rejection was logged and the lab keeps running.*disk full in a void promise/s);
  });

  it('without the guard, Node ends the process (what the guard is for)', () => {
    const r = runChild(false);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
  });
});
