import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, statSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const ROOT = resolve(__dirname, '../..');
export const CLI = join(ROOT, 'out/main/cli.js');

/** The newest modification time of any file below `dir` (is a build older than its sources?). */
export function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/** Builds out/ when it is missing or older than src/ (tests run the real CLI). */
export function ensureBuilt(): void {
  if (existsSync(CLI) && statSync(CLI).mtimeMs >= newestMtime(join(ROOT, 'src'))) return;
  execFileSync(process.execPath, [join(ROOT, 'node_modules/electron-vite/bin/electron-vite.js'), 'build'], { cwd: ROOT, stdio: 'ignore' });
}

export interface Serve {
  child: ChildProcess;
  collector: string;
  ui: string;
  api: string;
  token: string;
  stdout: string[];
  stderr: string[];
}

/** Starts `webhook-lab serve` on free ports and resolves once it printed its URLs; `token` null: none given (the lab's own, read from its output). */
export function startServe(args: string[], token: string | null = 'test-token'): Promise<Serve> {
  const env = { ...process.env };
  delete env.WEBHOOK_LAB_TOKEN;
  const child = spawn(process.execPath, [CLI, 'serve', '--collector-port', '0', '--ui-port', '0', ...(token === null ? [] : ['--token', token]), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  return new Promise((resolvePromise, reject) => {
    let buf = '';
    // Generous (issue 44: a cold start on a busy machine took over 15 s); a serve that fails exits first.
    const timer = setTimeout(() => reject(new Error(`serve did not start within 90 s: ${stderr.join('')}`)), 90_000);
    child.stderr!.on('data', (d) => stderr.push(String(d)));
    child.stdout!.on('data', (d) => {
      buf += String(d);
      stdout.push(String(d));
      const collector = /^collector: (\S+)/m.exec(buf)?.[1];
      const ui = /^ui: (\S+)/m.exec(buf)?.[1];
      if (collector && ui && /^data: /m.test(buf)) {
        clearTimeout(timer);
        const base = ui.replace(/\/\?token=.*$/, '');
        resolvePromise({ child, collector, ui, api: `${base}/api`, token: token ?? /^api: .*Bearer (\S+)\)/m.exec(buf)![1], stdout, stderr });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}: ${stderr.join('')}`));
    });
  });
}

/** Stops a serve started by startServe (SIGTERM, as a user's Ctrl-C) and waits for it to exit. */
export async function stopServe(serve: Serve | undefined): Promise<void> {
  if (!serve || serve.child.exitCode !== null || serve.child.signalCode !== null) return;
  const exited = new Promise((r) => serve.child.once('exit', r));
  serve.child.kill('SIGTERM');
  await exited;
}
