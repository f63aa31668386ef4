import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { cleanEnv, installTarball, pack } from '../helpers/npm-package';
import { httpMcpClient, structured } from '../helpers/mcp';
import type { CallDetail, CallSummary } from '../../src/shared/types';

// `webhook-lab mcp` from the npm package as a user installs it (issue 39, "done when"): both
// transports, run from the installed package's bin, never from this checkout.

const TOKEN = 'mcp-pkg-token-0123456789';
let work: string;
let app: string;
let serve: ChildProcess | undefined;

const env = () => Object.fromEntries(Object.entries(cleanEnv()).filter((e): e is [string, string] => e[1] !== undefined && !e[0].startsWith('WEBHOOK_LAB_')));

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'wl-mcp-npm-'));
  const packed = pack(work);
  app = join(work, 'app');
  installTarball(work, join(work, packed.filename), app);
}, 600_000);

afterAll(async () => {
  if (serve && serve.exitCode === null && serve.signalCode === null) {
    const exited = new Promise((r) => serve!.once('exit', r));
    serve.kill('SIGTERM');
    await exited;
  }
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('webhook-lab mcp from the installed npm package', () => {
  it('over stdio: its own lab, a call sent and read back', async () => {
    const client = new Client({ name: 'pkg-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: join(app, 'node_modules/.bin/webhook-lab'), args: ['mcp'], cwd: app, env: { ...env(), TMPDIR: mkdtempSync(join(work, 'tmp-')) }, stderr: 'ignore' }));
    try {
      expect((await client.listTools()).tools).toHaveLength(12);
      const sent = await structured<{ status: number; call: CallSummary }>(client, 'send_call', { call: { type: 'identify', userId: 'u_pkg', traits: { plan: 'pro' } } });
      expect(sent.status).toBe(200);
      const got = await structured<{ call: CallDetail }>(client, 'get_call', { id: sent.call.id });
      expect(got.call.call.raw).toMatchObject({ userId: 'u_pkg', traits: { plan: 'pro' } });
    } finally {
      await client.close();
    }
  }, 120_000);

  it('over Streamable HTTP at /mcp of `webhook-lab serve`', async () => {
    serve = spawn(join(app, 'node_modules/.bin/webhook-lab'), ['serve', '--data-dir', join(work, 'data'), '--collector-port', '0', '--ui-port', '0', '--token', TOKEN], { cwd: app, env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
    const base = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`serve did not start: ${out}`)), 60_000);
      serve!.stdout!.on('data', (d) => {
        out += String(d);
        const m = /^ui: (http:\/\/[^/]+)\//m.exec(out);
        if (m && /^data: /m.test(out)) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
    });
    const client = await httpMcpClient(base, TOKEN);
    try {
      const lab = await structured<{ collectorUrl: string; uiUrl: string }>(client, 'get_lab');
      expect(lab.collectorUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(lab.uiUrl).toBe(base);
    } finally {
      await client.close();
    }
  }, 120_000);
});
