import { spawn } from 'node:child_process';
import { CLI } from './serve';

export interface CheckRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built `webhook-lab check` with these arguments (WEBHOOK_LAB_API/TOKEN cleared unless given); killed after 30 s. */
export function runCheck(args: string[], env: Record<string, string> = {}): Promise<CheckRun> {
  const child = spawn(process.execPath, [CLI, 'check', ...args], { env: { ...process.env, WEBHOOK_LAB_API: '', WEBHOOK_LAB_TOKEN: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += String(d)));
  child.stderr.on('data', (d) => (stderr += String(d)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error(`check did not exit: ${stdout}${stderr}`))), 30_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
