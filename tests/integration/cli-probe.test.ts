import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, ensureBuilt, startServe, stopServe, type Serve } from '../helpers/serve';
import { closedPort, startReceiver, type TestReceiver } from '../helpers/receiver';

// `webhook-lab probe` as a pipeline runs it: the built CLI, its exit status, --json and --junit,
// standalone (its own engine on a temporary store) and against a running lab (--api).

const SECRET = 'cli-probe-secret';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function probe(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const child = spawn(process.execPath, [CLI, 'probe', ...args], { env: { ...process.env, WEBHOOK_LAB_TOKEN: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += String(d)));
  child.stderr.on('data', (d) => (stderr += String(d)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error(`probe did not exit: ${stdout}${stderr}`))), 90_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

let careful: TestReceiver;
let sloppy: TestReceiver;
let tmp: string;

beforeAll(async () => {
  ensureBuilt();
  tmp = mkdtempSync(join(tmpdir(), 'wl-cli-probe-'));
  careful = await startReceiver((req, res) => {
    const ok = req.headers['x-signature'] === createHmac('sha1', SECRET).update(req.body).digest('hex');
    res.writeHead(ok ? 200 : 401).end();
  });
  sloppy = await startReceiver();
}, 120_000);
afterAll(async () => {
  await careful?.close();
  await sloppy?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('webhook-lab probe', () => {
  it('standalone, a careful receiver: exit 0, --json and --junit, and no temporary store left behind', async () => {
    const junit = join(tmp, 'probe.xml');
    // Its own temporary folder (TMPDIR): the machine's is shared with whatever else runs, another
    // probe included, whose store would come and go in the count.
    const probeTmp = mkdtempSync(join(tmp, 'tmpdir-'));
    const r = await probe(['--url', `${careful.url}/hook`, '--secret', SECRET, '--json', '--junit', junit], { TMPDIR: probeTmp });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { ok: boolean; checks: { name: string; ok: boolean; verdict: string; detail: string; evidence: unknown[] }[] };
    expect(report.ok).toBe(true);
    expect(Object.keys(report)[0]).toBe('ok');
    expect(report.checks.map((c) => c.name)).toContain('signature');
    for (const c of report.checks) expect(Object.keys(c)).toEqual(expect.arrayContaining(['name', 'ok', 'verdict', 'detail', 'evidence']));
    const xml = readFileSync(junit, 'utf8');
    expect(xml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="webhook-lab probe" tests="10" failures="0" skipped="2"/);
    expect(xml.match(/<testcase /g)).toHaveLength(10);
    expect(xml).toContain('<testcase classname="webhook-lab.probe" name="signature: Signature enforced"');
    expect(readdirSync(probeTmp)).toEqual([]);
  }, 90_000);

  it('a receiver that accepts any signature: exit 1, the check named in the summary and as a JUnit failure', async () => {
    const junit = join(tmp, 'sloppy.xml');
    const r = await probe(['--url', `${sloppy.url}/hook`, '--secret', SECRET, '--junit', junit]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^FAIL {2}signature +anyone can post to it/m);
    expect(r.stdout).toMatch(/^probe: \d+ passed, 1 failed, [12] warned, 2 skipped in \d+\.\d s$/m);
    expect(readFileSync(junit, 'utf8')).toMatch(/<failure message="anyone can post to it[^"]*" type="signature">/);
  }, 90_000);

  it('nothing listening: exit 4', async () => {
    const r = await probe(['--url', `http://127.0.0.1:${await closedPort()}/hook`, '--secret', SECRET]);
    expect(r.code).toBe(4);
    expect(r.stdout).toMatch(/the receiver could not be reached/);
  }, 90_000);

  it('bad usage: exit 2, naming the flag', async () => {
    const cases: [string[], RegExp][] = [
      [['--secret', 's'], /--url: give the receiver URL/],
      [['--url', 'ftp://x/y'], /--url: must be an absolute http: or https: URL/],
      // The rules of a source's receiver URL (found by a review: the port went unnamed, a tab was dropped silently).
      [['--url', 'http://127.0.0.1:99999/hook'], /--url: port 99999 is out of range: give one from 1 to 65535/],
      [['--url', 'http://127.0.0.1:9/ho\tok'], /--url: must not contain control characters/],
      [['--url', 'http://127.0.0.1:1/', '--only', 'signature,speed'], /--only: no check named "speed"/],
      [['--url', 'http://127.0.0.1:1/', '--api', 'http://127.0.0.1:1/api', '--data-dir', tmp], /--api and --data-dir: give one/],
      [['--url', 'http://127.0.0.1:1/', '--api', 'http://127.0.0.1:1/api'], /--token: give the control API token/],
      [['--url', 'http://127.0.0.1:1/', '--mode', 'actions'], /--mode actions: give --source NAME and --mapping NAME/],
      [['--url', 'http://127.0.0.1:1/', '--source', 'shop'], /--source: only in actions mode/],
      [['--url', 'http://127.0.0.1:1/', '--mode', 'actions', '--source', 'shop', '--mapping', 'orders'], /--source: no source named "shop" \(sources: none\) \(a standalone probe starts on an empty store/],
    ];
    for (const [args, message] of cases) {
      const r = await probe(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  }, 90_000);
});

describe('webhook-lab probe --api', () => {
  let serve: Serve | undefined;
  afterAll(() => stopServe(serve));

  it("runs in the lab: its inspector holds the probe's requests under the source \"probe\"", async () => {
    serve = await startServe(['--data-dir', join(tmp, 'lab')], 'probe-token');
    const r = await probe(['--url', `${careful.url}/hook`, '--secret', SECRET, '--only', 'call-types,duplicates', '--api', serve.api], { WEBHOOK_LAB_TOKEN: 'probe-token' });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('every request is in the inspector under the source "probe"');
    const auth = { authorization: 'Bearer probe-token' };
    const sources = (await (await fetch(`${serve.api}/sources`, { headers: auth })).json()) as { id: string; name: string }[];
    const source = sources.find((s) => s.name === 'probe')!;
    const page = (await (await fetch(`${serve.api}/messages?sourceId=${source.id}`, { headers: auth })).json()) as { total: number };
    // call-types' 7, duplicates' 2 and the first request.
    expect(page.total).toBe(10);
    expect(existsSync(join(tmp, 'lab'))).toBe(true);
  }, 90_000);

  it("--data-dir of a folder the running lab holds: exit 2, the data folder's message and --api instead, no stack trace", async () => {
    serve ??= await startServe(['--data-dir', join(tmp, 'lab')], 'probe-token');
    const r = await probe(['--url', `${careful.url}/hook`, '--secret', SECRET, '--data-dir', join(tmp, 'lab')]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^webhook-lab probe: Webhook Lab's data folder is in use\.$/m);
    expect(r.stderr).toContain(`another Webhook Lab (process ${serve.child.pid}) is using it`);
    expect(r.stderr).toContain('run the probe in that lab instead: --api URL --token T');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  }, 60_000);

  it('a lab that is not there: exit 4', async () => {
    const r = await probe(['--url', `${careful.url}/hook`, '--api', `http://127.0.0.1:${await closedPort()}/api`, '--token', 't']);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/cannot reach/);
  }, 30_000);
});
