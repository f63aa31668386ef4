import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, ensureBuilt } from '../helpers/serve';

// Issue 40 (the first second): a start of `serve` loads only what the first page needs. The MCP SDK
// (the first /mcp request loads it), undici (the first delivery or client send) and selfsigned (the
// first start of a data folder, to make its certificate) were a third of a start's module loading.
// A static import of any of them again would quietly undo that; this fails instead.
const LAZY = ['@modelcontextprotocol/sdk', 'undici', 'selfsigned'];

let tmp: string;
beforeAll(() => {
  ensureBuilt();
  tmp = mkdtempSync(join(tmpdir(), 'start-modules-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Starts serve on `dataDir`, reads its first page of calls, stops it; the files it loaded. */
async function startAndStop(dataDir: string, name: string): Promise<string[]> {
  const file = join(tmp, `${name}.txt`);
  const env: NodeJS.ProcessEnv = { ...process.env, LOADED_MODULES_FILE: file };
  delete env.WEBHOOK_LAB_TOKEN;
  const child = spawn(process.execPath, ['--require', join(__dirname, '../helpers/loaded-modules.cjs'), CLI, 'serve', '--data-dir', dataDir, '--collector-port', '0', '--ui-port', '0', '--token', 'tok'], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((r) => child.once('exit', r));
  const ui = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /^ui: (\S+)/m.exec(out);
      if (m && /^data: /m.test(out)) resolve(new URL(m[1]).origin);
    });
    void exited.then((code) => reject(new Error(`serve exited with ${code}: ${err}`)));
  });
  const res = await fetch(`${ui}/api/messages?limit=100`, { headers: { authorization: 'Bearer tok' } });
  expect(res.status).toBe(200);
  child.kill('SIGTERM');
  expect(await exited).toBe(0);
  return readFileSync(file, 'utf8').split('\n');
}

const loadedOf = (files: string[], pkg: string) => files.filter((f) => f.includes(`/node_modules/${pkg}/`));

describe('a start of serve', () => {
  it('loads neither the MCP SDK, undici nor selfsigned before its first page (selfsigned only to make a certificate)', async () => {
    const dataDir = join(tmp, 'data');
    const first = await startAndStop(dataDir, 'first');
    // The helper works: the first start of a folder makes its certificate with selfsigned.
    expect(loadedOf(first, 'selfsigned').length, 'the first start made a certificate').toBeGreaterThan(0);
    expect(loadedOf(first, 'better-sqlite3').length).toBeGreaterThan(0);
    const again = await startAndStop(dataDir, 'again');
    for (const pkg of LAZY) expect(loadedOf(again, pkg), `${pkg} loaded by a start`).toEqual([]);
    for (const pkg of LAZY.filter((p) => p !== 'selfsigned')) expect(loadedOf(first, pkg), `${pkg} loaded by a first start`).toEqual([]);
  }, 120_000);
});

/** Runs a command that ends by itself; the files it loaded. */
async function loadedBy(args: string[], name: string): Promise<string[]> {
  const file = join(tmp, `${name}.txt`);
  const child = spawn(process.execPath, ['--require', join(__dirname, '../helpers/loaded-modules.cjs'), CLI, ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LOADED_MODULES_FILE: file } });
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  expect(code, `${args.join(' ')}: ${err}`).toBe(0);
  return readFileSync(file, 'utf8').split('\n');
}

// The other commands load only their own modules (cli.ts imports each when it runs): they loaded the
// whole engine, its servers and the database driver first, 0.7 s of CPU before `--help` printed.
describe('the commands other than serve', () => {
  const ENGINE = ['better-sqlite3', 'fastify', '@segment/actions-core', 'ajv', 'piscina'];
  it.each([
    [['--help'], 'help'],
    [['check', '--help'], 'check-help'],
    [['probe', '--help'], 'probe-help'],
    [['load', '--help'], 'load-help'],
  ])('webhook-lab %j loads no engine, server or database driver', async (args, name) => {
    const files = await loadedBy(args, name);
    expect(files.some((f) => f.endsWith('/out/main/cli.js')), 'the helper saw the CLI load').toBe(true);
    for (const pkg of ENGINE) expect(loadedOf(files, pkg), `${pkg} loaded by ${args.join(' ')}`).toEqual([]);
  }, 60_000);
});
