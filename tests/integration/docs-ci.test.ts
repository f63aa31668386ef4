import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { cleanEnv, localPrebuildEnv, pack } from '../helpers/npm-package';
import { startReceiver, type TestReceiver } from '../helpers/receiver';
import { ROOT } from '../helpers/serve';
import { until } from '../helpers/until';

// docs/ci.md's job, its shell steps run as written by bash the way GitHub's runner runs a `run:`
// step (bash --noprofile --norc -eo pipefail), in order, in a folder holding the doc's config file.
// Not the YAML runner itself: `uses:` steps are left out (Node is already here). Replaced, and only
// these: the job's env values (the package is this checkout's tarball, free ports instead of
// 8787/8788, RUNNER_TEMP a temporary folder, npm's global prefix a temporary folder) and, in the
// config, the receiver's URL http://127.0.0.1:3000/webhooks/segment.

const DOC = readFileSync(join(ROOT, 'docs/ci.md'), 'utf8');
const RECEIVER_PLACEHOLDER = 'http://127.0.0.1:3000/webhooks/segment';

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
}

function fenced(lang: string): string {
  const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)\\n```').exec(DOC);
  if (!m) throw new Error(`docs/ci.md has no \`\`\`${lang} block`);
  return m[1];
}

const workflow = parse(fenced('yaml')) as { jobs: Record<string, { env: Record<string, string | number>; steps: Step[] }> };
const job = Object.values(workflow.jobs)[0];

let work: string;
let tarball: string;
let prefix: string;
let baseEnv: NodeJS.ProcessEnv;
const groups: number[] = [];

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

interface StepResult {
  name: string;
  code: number | null;
  output: string;
}

/** Runs one `run:` script as GitHub does, in its own process group (the lab it starts in the background stays in it). */
function runStep(step: Step, cwd: string, env: NodeJS.ProcessEnv): Promise<StepResult> {
  const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', step.run!], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  groups.push(child.pid!);
  let output = '';
  child.stdout.on('data', (d) => (output += String(d)));
  child.stderr.on('data', (d) => (output += String(d)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`step "${step.name}" did not end: ${output}`)), 300_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ name: step.name ?? step.run!.slice(0, 40), code, output });
    });
  });
}

/** The job's steps in order: after a failure, only `if: always()` steps run, as on GitHub. */
async function runJob(receiver: TestReceiver, opts: { skipInstall?: boolean } = {}): Promise<StepResult[]> {
  const dir = mkdtempSync(join(work, 'job-'));
  mkdirSync(join(dir, '.github'));
  const config = fenced('json');
  expect(config).toContain(RECEIVER_PLACEHOLDER);
  writeFileSync(join(dir, '.github/webhook-lab.json'), config.replace(RECEIVER_PLACEHOLDER, `${receiver.url}/webhooks/segment`));
  const runnerTemp = join(dir, 'runner-temp');
  mkdirSync(runnerTemp);
  const [ui, collector] = [await freePort(), await freePort()];
  const env: NodeJS.ProcessEnv = {
    ...baseEnv,
    ...Object.fromEntries(Object.entries(job.env).map(([k, v]) => [k, String(v)])),
    WEBHOOK_LAB_PACKAGE: tarball,
    WEBHOOK_LAB_API: `http://127.0.0.1:${ui}/api`,
    LAB_UI_PORT: String(ui),
    LAB_COLLECTOR_PORT: String(collector),
    COLLECTOR_URL: `http://127.0.0.1:${collector}`,
    RUNNER_TEMP: runnerTemp,
  };
  const results: StepResult[] = [];
  let failed = false;
  for (const step of job.steps) {
    if (!step.run) continue;
    if (opts.skipInstall && step.name === 'Install Webhook Lab') continue;
    if (failed && step.if !== 'always()') continue;
    const r = await runStep(step, dir, env);
    results.push(r);
    if (r.code !== 0) failed = true;
  }
  return results;
}

/** Stops what the steps left running (the background lab), and waits until it is gone. */
async function stopGroups(): Promise<void> {
  const alive = (pgid: number) => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  };
  for (const pgid of groups.splice(0)) {
    if (!alive(pgid)) continue;
    process.kill(-pgid, 'SIGTERM');
    await until(() => !alive(pgid), 15_000);
  }
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'wl-docs-ci-'));
  tarball = join(work, pack(work).filename);
  prefix = join(work, 'npm-global');
  // `npm install --global` goes to a folder of its own, whose bin/ is on PATH like the runner's.
  baseEnv = { ...cleanEnv(), ...localPrebuildEnv(work), npm_config_prefix: prefix, PATH: `${join(prefix, 'bin')}${delimiter}${process.env.PATH}` };
}, 300_000);

afterEach(stopGroups);

afterAll(async () => {
  await stopGroups();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('docs/ci.md', () => {
  it('has the job the page describes: setup-node, install, serve --config, health wait, tests, check last', () => {
    expect(job.steps.map((s) => s.uses ?? s.name)).toEqual([
      'actions/checkout@v4',
      'actions/setup-node@v4',
      'Install Webhook Lab',
      'Start Webhook Lab',
      'Your tests',
      'Check the webhooks',
      'Webhook Lab log',
    ]);
    const run = (name: string) => job.steps.find((s) => s.name === name)!.run!;
    expect(run('Start Webhook Lab')).toMatch(/^webhook-lab serve --config [\s\S]*? 2>&1 &\n/);
    expect(run('Start Webhook Lab')).toContain('$WEBHOOK_LAB_API/health');
    expect(run('Check the webhooks')).toMatch(/^webhook-lab check /);
  });

  it('runs as written: the lab starts, the call reaches the receiver signed, check exits 0', async () => {
    const receiver = await startReceiver();
    try {
      const results = await runJob(receiver);
      expect(results.map((r) => [r.name, r.code]), results.map((r) => `--- ${r.name}\n${r.output}`).join('\n')).toEqual([
        ['Install Webhook Lab', 0],
        ['Start Webhook Lab', 0],
        ['Your tests', 0],
        ['Check the webhooks', 0],
        ['Webhook Lab log', 0],
      ]);
      expect(results[1].output).toMatch(/"ok":true/);
      expect(results[3].output).toMatch(/^webhook-lab check: 1 call \(all\)\n/);
      expect(results[3].output).toContain('OK: nothing failed');
      expect(results[4].output).toMatch(/^collector: http:\/\/127\.0\.0\.1:\d+$/m);
      const [hook] = await receiver.waitForRequests(1);
      expect(hook.url).toBe('/webhooks/segment');
      expect(JSON.parse(hook.body.toString('utf8'))).toMatchObject({ type: 'track', event: 'Order Completed', userId: 'ci-user' });
      expect(hook.headers['x-signature']).toBe(createHmac('sha1', 'ci-secret').update(hook.body).digest('hex'));
    } finally {
      await receiver.close();
    }
  }, 300_000);

  it('fails the job at the check step when the receiver answers 404, and still prints the log', async () => {
    const receiver = await startReceiver((_req, res) => res.writeHead(404).end('no such route'));
    try {
      const results = await runJob(receiver, { skipInstall: true });
      expect(results.map((r) => [r.name, r.code])).toEqual([
        ['Start Webhook Lab', 0],
        ['Your tests', 0],
        ['Check the webhooks', 1],
        ['Webhook Lab log', 0],
      ]);
      expect(results[2].output).toContain('FAILED: 1 failed');
      expect(results[2].output).toMatch(/call \d+ track "Order Completed": failed — http:\/\/127\.0\.0\.1:\d+\/webhooks\/segment → 404, 1 attempt \(failed\)/);
    } finally {
      await receiver.close();
    }
  }, 300_000);
});
