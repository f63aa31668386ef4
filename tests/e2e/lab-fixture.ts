import { test as base, expect } from '@playwright/test';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { startReceiver, type TestReceiver } from '../helpers/receiver';
import { guardConsole, type ConsoleGuard } from './console-guard';

// Web mode under test: the real `webhook-lab serve` as a child process with a temporary data dir
// and any free ports, plus three real receivers on loopback: one answers 200, one 500, one waits
// 6 s (longer than the dispatcher's 5 s limit) before answering.

const ROOT = resolve(__dirname, '../..');

export interface Lab {
  uiUrl: string;
  collectorUrl: string;
  apiBase: string;
  token: string;
  dataDir: string;
  /** Control API call with the token, for setup and assertions the UI cannot make. */
  api<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  stderr(): string;
}

export interface Receivers {
  ok: TestReceiver;
  failing: TestReceiver;
  slow: TestReceiver;
}

/** `dataDir`: a folder the caller made and removes (a small file system of its own); default a temporary one. */
export async function startLab(opts: { dataDir?: string } = {}): Promise<{ lab: Lab; stop(): Promise<void> }> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'webhook-lab-e2e-'));
  const token = randomBytes(18).toString('base64url');
  const proc: ChildProcess = spawn(
    process.execPath,
    // `--token=…`: a random base64url token may start with '-', which would read as an option.
    [join(ROOT, 'bin/webhook-lab.js'), 'serve', '--data-dir', dataDir, '--collector-port', '0', '--ui-port', '0', `--token=${token}`],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  proc.stderr!.on('data', (c) => (stderr += c));
  const urls = await new Promise<{ ui: string; collector: string }>((resolvePromise, reject) => {
    const found: { ui?: string; collector?: string } = {};
    const timer = setTimeout(() => reject(new Error(`webhook-lab serve printed no ui:/collector: lines in 30 s\n${stderr}`)), 30_000);
    proc.once('exit', (code) => reject(new Error(`webhook-lab serve exited with ${code}\n${stderr}`)));
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      if (line.startsWith('collector: ')) found.collector = line.slice('collector: '.length).trim();
      if (line.startsWith('ui: ')) found.ui = line.slice('ui: '.length).trim();
      if (found.ui && found.collector) {
        clearTimeout(timer);
        resolvePromise({ ui: found.ui, collector: found.collector });
      }
    });
  });
  const apiBase = new URL(urls.ui).origin;
  const lab: Lab = {
    uiUrl: urls.ui,
    collectorUrl: urls.collector,
    apiBase,
    token,
    dataDir,
    stderr: () => stderr,
    async api<T>(method: string, path: string, body?: unknown): Promise<T> {
      const res = await fetch(`${apiBase}/api${path}`, {
        method,
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
      return (text ? JSON.parse(text) : null) as T;
    },
  };
  return {
    lab,
    async stop() {
      if (proc.exitCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
        if (proc.exitCode === null) proc.kill('SIGKILL');
      }
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The three receivers (200, 500, 6 s), for a spec that wants ones no other spec has used. */
export async function startReceivers(): Promise<{ receivers: Receivers; stop(): Promise<void> }> {
  const ok = await startReceiver((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}'));
  const failing = await startReceiver((_req, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('receiver exploded'));
  const slow = await startReceiver((_req, res) => {
    const t = setTimeout(() => res.writeHead(200).end('late'), 6000);
    res.on('close', () => clearTimeout(t));
  });
  return { receivers: { ok, failing, slow }, stop: () => Promise.all([ok.close(), failing.close(), slow.close()]).then(() => undefined) };
}

/**
 * Every test fails on a console error or an uncaught page error (consoleGuard, automatic); a test
 * that provokes one on purpose names it with `consoleGuard.allow(/…/)`.
 */
export const test = base.extend<{ consoleGuard: ConsoleGuard }, { lab: Lab; receivers: Receivers }>({
  consoleGuard: [
    async ({ page }, use) => {
      const guard = guardConsole(page);
      await use(guard);
      expect(guard.unexpected(), 'console errors').toEqual([]);
    },
    { auto: true },
  ],
  lab: [
    async ({}, use) => {
      const { lab, stop } = await startLab();
      await use(lab);
      await stop();
    },
    { scope: 'worker', timeout: 60_000 },
  ],
  receivers: [
    async ({}, use) => {
      const { receivers, stop } = await startReceivers();
      await use(receivers);
      await stop();
    },
    { scope: 'worker' },
  ],
});

export { expect };

/**
 * A lab of the calling spec's own, started before its first test and stopped after its last: what
 * other specs leave in a shared one (sources, calls) cannot change what this one reads. Call at the
 * top of a spec file; the object forwards to the lab once it runs.
 */
export function ownLab(): Lab {
  return ownForTheFile('lab', async () => {
    const { lab, stop } = await startLab();
    return { value: lab, stop };
  });
}

/** The three receivers of the calling spec's own, the same way (requests other specs made are not in them). */
export function ownReceivers(): Receivers {
  return ownForTheFile('receivers', async () => {
    const { receivers, stop } = await startReceivers();
    return { value: receivers, stop };
  });
}

function ownForTheFile<T extends object>(what: string, start: () => Promise<{ value: T; stop(): Promise<void> }>): T {
  let current: T | undefined;
  let stop: (() => Promise<void>) | undefined;
  test.beforeAll(async () => {
    ({ value: current, stop } = await start());
  });
  test.afterAll(async () => {
    await stop?.();
  });
  return new Proxy({} as T, {
    get: (_, prop) => {
      if (!current) throw new Error(`the spec's ${what} start in beforeAll: use them inside a test or hook`);
      return current[prop as keyof T];
    },
  });
}
