import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookSource } from '../helpers/engine';
import { startReceiver, type TestReceiver } from '../helpers/receiver';
import { ROOT } from '../helpers/serve';
import { cleanEnv, installTarball, pack, run, type Packed } from '../helpers/npm-package';
import { until } from '../helpers/until';

/** How long a compile or a Vitest run of the install may take before it counts as hung: slowness is not a failure. */
const SUBPROCESS_BOUND_MS = 10 * 60_000;

// The npm package as a user gets it (tests/helpers/npm-package.ts: pack, then install the tarball
// with --omit=dev into an empty folder); everything below runs from that folder, never from this
// checkout.

const SECRET = 'pkg-secret';
const WRITE_KEY = 'wk_pkg';
const TOKEN = 'pkg-token';

let work: string;
let app: string;
let receiver: TestReceiver;
let packed: Packed;
let serve: ChildProcess | undefined;
let urls: { collector: string; ui: string; api: string };
let serveExit: Promise<{ code: number | null; signal: string | null }>;
let serveStderr = '';

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'wl-npm-package-'));
  const started = Date.now();
  packed = pack(work);
  app = join(work, 'app');
  const installStarted = Date.now();
  installTarball(work, join(work, packed.filename), app);
  console.log(
    `npm package: ${packed.filename} ${(packed.size / 1024).toFixed(0)} KB packed, ${(packed.unpackedSize / 1024).toFixed(0)} KB unpacked, ${packed.entryCount} files; ` +
      `pack ${((installStarted - started) / 1000).toFixed(1)} s, install ${((Date.now() - installStarted) / 1000).toFixed(1)} s`,
  );
  receiver = await startReceiver();
}, 600_000);

afterAll(async () => {
  if (serve && serve.exitCode === null && serve.signalCode === null) {
    serve.kill('SIGKILL');
    await serveExit;
  }
  await receiver?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the npm package, installed from its tarball', () => {
  it('carries the built app, the client, the testing module and their types, and no tests or TypeScript sources', () => {
    const paths = packed.files.map((f) => f.path);
    expect(paths).toEqual(expect.arrayContaining(['package.json', 'README.md', 'bin/webhook-lab.js', 'out/main/cli.js', 'out/main/client.js', 'out/main/testing.js', 'out/renderer/index.html', 'out/types/main/engine/client/index.d.ts', 'out/types/main/testing/index.d.ts']));
    expect(paths.filter((p) => /^(tests|src|scripts|bench|\.ci|\.github)\//.test(p))).toEqual([]);
    // Declarations only of what is published (the two exports and the shared types they name), not the
    // engine's, which tsc writes too as the testing module imports the engine.
    expect(paths.filter((p) => p.startsWith('out/types/') && !/^out\/types\/(shared|main\/engine\/client|main\/testing)\//.test(p))).toEqual([]);
    expect(paths.filter((p) => /\.(ts|tsx|mts|cts)$/.test(p) && !p.endsWith('.d.ts'))).toEqual([]);
    // Images only as the web UI uses them (its icon); no screenshots, databases or tarballs.
    expect(paths.filter((p) => (/\.(png|jpg)$/.test(p) && !p.startsWith('out/renderer/')) || /\.(db|tgz)$/.test(p) || p.startsWith('docs/screenshots'))).toEqual([]);
    // About 0.5 MB today; several MB would mean something that should not travel does.
    expect(packed.size).toBeLessThan(2 * 1024 * 1024);
    // --omit=dev: none of the build or test tools came along.
    for (const dev of ['electron', 'electron-vite', 'vitest', 'typescript', 'react']) expect(existsSync(join(app, 'node_modules', dev)), dev).toBe(false);
  });

  it('runs `webhook-lab serve` from the install: UI page, /api/health, a call delivered signed', async () => {
    const config = join(work, 'config.json');
    writeFileSync(config, JSON.stringify({ sources: [webhookSource('pkg', WRITE_KEY, [`${receiver.url}/hook`], SECRET)] }));
    const bin = join(app, 'node_modules', '.bin', 'webhook-lab');
    serve = spawn(bin, ['serve', '--config', config, '--data-dir', join(work, 'data'), '--collector-port', '0', '--ui-port', '0', '--token', TOKEN], { cwd: app, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    serveExit = new Promise((resolve) => serve!.once('exit', (code, signal) => resolve({ code, signal })));
    let stdout = '';
    serve.stdout!.on('data', (d) => (stdout += String(d)));
    serve.stderr!.on('data', (d) => (serveStderr += String(d)));
    await until(() => /^data: /m.test(stdout) || serve!.exitCode !== null, 30_000);
    expect(serve.exitCode, serveStderr).toBeNull();
    const ui = /^ui: (\S+)\/\?token=/m.exec(stdout)![1];
    urls = { collector: /^collector: (\S+)/m.exec(stdout)![1], ui, api: `${ui}/api` };

    const page = await fetch(`${urls.ui}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<title>Webhook Lab<\/title>/);

    const health = await fetch(`${urls.api}/health`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(health.status).toBe(200);
    const h = (await health.json()) as { ok: boolean; version: string; collectorUrl: string };
    expect(h).toMatchObject({ ok: true, version: '0.1.0', collectorUrl: urls.collector });

    const res = await fetch(`${urls.collector}/v1/track`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}` },
      body: JSON.stringify({ userId: 'pkg-user', event: 'From Package' }),
    });
    expect(res.status).toBe(200);
    const [hook] = await receiver.waitForRequests(1, 15_000);
    expect(JSON.parse(hook.body.toString('utf8'))).toMatchObject({ type: 'track', event: 'From Package', userId: 'pkg-user' });
    expect(hook.headers['x-signature']).toBe(createHmac('sha1', SECRET).update(hook.body).digest('hex'));
  });

  it('exports webhook-lab/client to ESM and CommonJS: both send through the lab', async () => {
    writeFileSync(
      join(app, 'esm.mjs'),
      `import { Analytics } from 'webhook-lab/client';
const a = new Analytics(process.argv[2], { endpoint: process.argv[3], flushAt: 1 });
a.track({ userId: 'esm-user', event: 'From ESM' });
await a.close();
console.log('esm', typeof Analytics);
`,
    );
    writeFileSync(
      join(app, 'cjs.cjs'),
      `const { Analytics } = require('webhook-lab/client');
const a = new Analytics(process.argv[2], { endpoint: process.argv[3], flushAt: 1 });
a.track({ userId: 'cjs-user', event: 'From CJS' });
a.close().then(() => console.log('cjs', typeof Analytics));
`,
    );
    expect(run(process.execPath, ['esm.mjs', WRITE_KEY, urls.collector], app, 30_000)).toBe('esm function\n');
    expect(run(process.execPath, ['cjs.cjs', WRITE_KEY, urls.collector], app, 30_000)).toBe('cjs function\n');
    await until(() => {
      const events = receiver.requests.map((q) => JSON.parse(q.body.toString('utf8')).event);
      expect(events).toEqual(expect.arrayContaining(['From ESM', 'From CJS']));
      for (const q of receiver.requests) expect(q.headers['x-signature']).toBe(createHmac('sha1', SECRET).update(q.body).digest('hex'));
    }, 15_000);
  });

  // A TypeScript compile of the install: 64 s of the default 120 pinned to a core beside a busy loop
  // (issue 44). Its time grows with the machine's; the bound is for a compiler that hangs.
  it("resolves the client's and the testing module's types from the install (ESM and CommonJS, NodeNext)", () => {
    writeFileSync(
      join(app, 'types.mts'),
      `import { Analytics } from 'webhook-lab/client';
const a: Analytics = new Analytics('wk', { endpoint: 'http://127.0.0.1:8787', flushAt: 1 });
const id: string = a.track({ userId: 'u', event: 'e' });
// @ts-expect-error flushAt is a number: fails to compile if the types were missing (any)
new Analytics('wk', { flushAt: 'many' });
await a.close();
export { id };
`,
    );
    writeFileSync(
      join(app, 'types.cts'),
      `import client = require('webhook-lab/client');
const a = new client.Analytics('wk');
// @ts-expect-error no such method
a.noSuchMethod();
export = a;
`,
    );
    writeFileSync(
      join(app, 'testing-types.mts'),
      `import { startLab, connectLab, LabTimeoutError, type Lab, type LabCall, type LabDelivery } from 'webhook-lab/testing';
const lab: Lab = await startLab({ sources: [{ name: 'Web', writeKey: 'wk_web' }], receivers: [{ name: 'r', path: '/r' }], timeScale: 60 });
const call: LabCall = await lab.waitForCall({ type: 'track', properties: { total: 42 } }, { timeoutMs: 1000 });
const total: unknown = call.properties;
const big: LabCall[] = await lab.calls({ properties: { total: (t) => t > 40 } });
const d: LabDelivery = await lab.waitForDelivery({ status: 200, signature: 'valid' });
// @ts-expect-error a misspelt key of a delivery
await lab.deliveries({ reciever: 'r' });
const status: number | null = d.status;
// @ts-expect-error timeScale is a number: fails to compile if the types were missing (any)
await startLab({ timeScale: 'fast' });
// @ts-expect-error count is required by waitForCalls
await lab.waitForCalls({ type: 'track' }, {});
await connectLab({ apiUrl: 'http://127.0.0.1:8788/api', token: 't' });
export { total, status, big, LabTimeoutError };
`,
    );
    writeFileSync(
      join(app, 'testing-types.cts'),
      `import testing = require('webhook-lab/testing');
const started: Promise<testing.Lab> = testing.startLab();
// @ts-expect-error no such export
testing.noSuchExport();
export = started;
`,
    );
    // And a file that must not compile: a wrong type is an error, so the types above were really read.
    writeFileSync(join(app, 'wrong.mts'), `import { Analytics } from 'webhook-lab/client';\nconst n: number = new Analytics('wk');\nexport { n };\n`);
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const args = ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--types', 'node', '--typeRoots', join(ROOT, 'node_modules/@types')];
    // One compiler run (a second would cost as much again: it reads undici's and Node's types too).
    const r = spawnSync(process.execPath, [tsc, ...args, 'types.mts', 'types.cts', 'testing-types.mts', 'testing-types.cts', 'wrong.mts'], { cwd: app, encoding: 'utf8', timeout: SUBPROCESS_BOUND_MS });
    const errors = r.stdout.split('\n').filter((l) => /error TS\d+/.test(l));
    expect(errors, r.stdout + r.stderr).toEqual([expect.stringMatching(/^wrong\.mts\(2,7\): error TS2322: Type 'Analytics' is not assignable to type 'number'/)]);
    expect(r.status).toBe(2);
  }, SUBPROCESS_BOUND_MS);

  it('exports webhook-lab/testing to ESM and CommonJS: each starts a lab, waits for a call, stops, and its process exits by itself', () => {
    const body = (name: string) => `const lab = await startLab();
const res = await fetch(lab.collectorUrl + '/v1/track', { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Basic ' + Buffer.from(lab.writeKey + ':').toString('base64') }, body: JSON.stringify({ userId: '${name}-user', event: 'From ${name}', properties: { n: 1 } }) });
await res.text();
const call = await lab.waitForCall({ event: 'From ${name}', properties: { n: 1 } });
const timedOut = await lab.waitForCall({ properties: { n: 2 } }, { timeoutMs: 50 }).catch((e) => e instanceof LabTimeoutError && e.message.includes('- expected 2'));
await lab.stop();
console.log('${name}', call.userId, timedOut);`;
    writeFileSync(join(app, 'testing-esm.mjs'), `import { startLab, LabTimeoutError } from 'webhook-lab/testing';\n${body('esm')}\n`);
    writeFileSync(join(app, 'testing-cjs.cjs'), `const { startLab, LabTimeoutError } = require('webhook-lab/testing');\n(async () => {\n${body('cjs')}\n})();\n`);
    // run() waits for the process to exit: a handle left open would hold it until the timeout.
    expect(run(process.execPath, ['testing-esm.mjs'], app, 30_000)).toBe('esm esm-user true\n');
    expect(run(process.execPath, ['testing-cjs.cjs'], app, 30_000)).toBe('cjs cjs-user true\n');
  });

  it("runs docs/testing.md's Vitest example as written, against the installed package", () => {
    const m = /```ts vitest-example\n([\s\S]*?)\n```/.exec(readFileSync(join(ROOT, 'docs/testing.md'), 'utf8'));
    expect(m, 'docs/testing.md has a ```ts vitest-example block').not.toBeNull();
    writeFileSync(join(app, 'checkout.test.ts'), m![1]);
    // The project's dev dependencies the example uses, as a user's project has them installed.
    for (const dep of ['vitest', '@segment/analytics-node']) {
      mkdirSync(dirname(join(app, 'node_modules', dep)), { recursive: true });
      if (!existsSync(join(app, 'node_modules', dep))) symlinkSync(join(ROOT, 'node_modules', dep), join(app, 'node_modules', dep), 'dir');
    }
    const env = cleanEnv();
    // Not the outer Vitest's worker settings.
    for (const key of Object.keys(env)) if (key.startsWith('VITEST') || key === 'NODE_ENV' || key === 'TEST' || key === 'FORCE_COLOR') delete env[key];
    env.NO_COLOR = '1';
    const r = spawnSync(process.execPath, [join(app, 'node_modules/vitest/vitest.mjs'), 'run', '--reporter=verbose', 'checkout.test.ts'], { cwd: app, env, encoding: 'utf8', timeout: SUBPROCESS_BOUND_MS });
    const out = (r.stdout + r.stderr).replace(/\x1b\[[0-9;]*m/g, '');
    expect(r.status, out).toBe(0);
    expect(out).toMatch(/✓ .*a checkout tracks Order Completed with its total and products/);
    expect(out).toMatch(/✓ .*an empty cart tracks nothing/);
    expect(out).toMatch(/Tests\s+2 passed \(2\)/);
  }, SUBPROCESS_BOUND_MS);

  it('stops cleanly on SIGTERM', async () => {
    serve!.kill('SIGTERM');
    const { code, signal } = await serveExit;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(serveStderr).toContain('SIGTERM, shutting down');
  });
});
