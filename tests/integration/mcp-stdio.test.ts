import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CLI, ensureBuilt, startServe, stopServe, type Serve } from '../helpers/serve';
import { closedPort, startReceiver, type TestReceiver } from '../helpers/receiver';
import { waitFor } from '../helpers/engine';
import { callTool, structured, textOf, TOOL_NAMES } from '../helpers/mcp';
import type { CallDetail, CallSummary } from '../../src/shared/types';

// `webhook-lab mcp` as an agent's client starts it (issue 39): the built CLI as a child process,
// spoken to over stdio by the SDK's own Client. Standalone (no lab running: its own engine on a
// temporary folder) and connected to a running `serve` (--api/--token, or the environment).

const TOKEN = 'mcp-stdio-token-0123456789';
const SHARED = 'stdio-shared-s3cret';
const PASSWORD = 'stdio-pa55word';

let tmp: string;
let rx: TestReceiver;

/** The environment without the lab's variables (a developer's shell may have them). */
function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('WEBHOOK_LAB_')) env[k] = v;
  return { ...env, ...extra };
}

async function stdioClient(args: string[], env: Record<string, string>): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', ...args], env, stderr: 'pipe' });
  let err = '';
  transport.stderr?.on('data', (d) => (err += String(d)));
  const client = new Client({ name: 'webhook-lab-tests', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => err };
}

beforeAll(async () => {
  ensureBuilt();
  tmp = mkdtempSync(join(tmpdir(), 'wl-mcp-stdio-'));
  rx = await startReceiver();
}, 180_000);
afterAll(async () => {
  await rx?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('webhook-lab mcp over stdio', () => {
  it('with no lab running: its own lab; send_call sends a call and get_call reads it back; the temporary folder goes when the client closes', async () => {
    const ownTmp = mkdtempSync(join(tmp, 'tmpdir-'));
    const { client, stderr } = await stdioClient([], cleanEnv({ TMPDIR: ownTmp }));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
      const lab = await structured<{ collectorUrl: string; sources: { name: string; writeKey: string }[] }>(client, 'get_lab');
      expect(lab.sources.map((s) => s.name)).toEqual(['app']);
      expect(lab.collectorUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(readdirSync(ownTmp).filter((f) => f.startsWith('webhook-lab-mcp-'))).toHaveLength(1);

      const sent = await structured<{ status: number; call: CallSummary }>(client, 'send_call', { call: { type: 'track', event: 'Signed Up', userId: 'u_stdio', properties: { plan: 'pro' } } });
      expect(sent.status).toBe(200);
      const got = await structured<{ call: CallDetail }>(client, 'get_call', { id: sent.call.id });
      expect(got.call.call.raw).toMatchObject({ event: 'Signed Up', userId: 'u_stdio', properties: { plan: 'pro' } });
      expect(got.call.call.sourceName).toBe('app');
      // No receiver: not forwarded, and explain_call says why.
      const why = await structured<{ outcome: string; explanation: string[] }>(client, 'explain_call', { id: sent.call.id });
      expect(why.outcome).toBe('not_forwarded');
      expect(why.explanation[0]).toMatch(/Webhooks destination is off/);
    } finally {
      await client.close();
    }
    await waitFor(() => readdirSync(ownTmp).length === 0, 'the temporary lab folder to be removed', 30_000);
    expect(stderr()).toMatch(/its own lab, collector http:\/\/127\.0\.0\.1:\d+/);
  }, 120_000);

  it('stdout carries the protocol only; the server exits 0 when its stdin closes', async () => {
    const child = spawn(process.execPath, [CLI, 'mcp'], { env: cleanEnv({ TMPDIR: mkdtempSync(join(tmp, 'raw-')) }), stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += String(d)));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })}\n`);
    await waitFor(() => out.includes('\n'), 'the initialize answer', 30_000);
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })}\n`);
    await waitFor(() => out.split('\n').filter(Boolean).length >= 2, 'the tools/list answer', 30_000);
    child.stdin.end();
    expect(await exited).toBe(0);
    const lines = out.split('\n').filter(Boolean);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
    expect(lines.map((l) => (JSON.parse(l) as { id: number }).id)).toEqual([1, 2]);
  }, 60_000);

  it('SIGTERM with a tool call under way: it is answered that the lab is stopping, then the server exits 0', async () => {
    const child = spawn(process.execPath, [CLI, 'mcp'], { env: cleanEnv({ TMPDIR: mkdtempSync(join(tmp, 'term-')) }), stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += String(d)));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const answers = () => out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { id?: number; result?: { isError?: boolean; content?: { text: string }[] } });
    const send = (m: object) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`);
    send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    await waitFor(() => answers().some((a) => a.id === 1), 'the initialize answer', 30_000);
    send({ method: 'notifications/initialized' });
    send({ id: 2, method: 'tools/call', params: { name: 'wait_for_call', arguments: { match: { event: 'Never Sent' }, timeoutMs: 60_000 } } });
    // Messages are read in order: once the ping is answered, the wait has begun.
    send({ id: 3, method: 'ping' });
    await waitFor(() => answers().some((a) => a.id === 3), 'the ping answer', 30_000);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const waited = answers().find((a) => a.id === 2);
    expect(waited?.result?.isError).toBe(true);
    expect(waited?.result?.content?.[0].text).toMatch(/^the lab is stopping/);
  }, 60_000);

  it('a client that dies (every pipe closed at once) still gets the lab stopped and its temporary folder removed', async () => {
    // Found by a review: writing "shutting down" to the closed stderr (EPIPE) ended the server with 1
    // before its lab stopped, leaving the folder (the database, the TLS key) behind.
    const own = mkdtempSync(join(tmp, 'dies-'));
    const child = spawn(process.execPath, [CLI, 'mcp'], { env: cleanEnv({ TMPDIR: own }), stdio: ['pipe', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += String(d)));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    await waitFor(() => err.includes('its own lab'), 'its own lab started', 30_000);
    expect(readdirSync(own).filter((f) => f.startsWith('webhook-lab-mcp-'))).toHaveLength(1);
    child.stdout.destroy();
    child.stderr.destroy();
    child.stdin.destroy();
    expect(await exited).toBe(0);
    expect(readdirSync(own)).toEqual([]);
  }, 60_000);

  it('usage: --help; a token without --api, or --api with --data-dir, is exit 2 naming the flag; a lab that is not there is a tool error, not a dead server', async () => {
    const run = (args: string[]) => spawnSync(process.execPath, [CLI, 'mcp', ...args], { env: cleanEnv(), encoding: 'utf8', timeout: 30_000 });
    const help = run(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage:\n {2}webhook-lab mcp \[--api URL --token T \| --data-dir DIR\]/);
    const tokenAlone = run(['--token', TOKEN]);
    expect(tokenAlone.status).toBe(2);
    expect(tokenAlone.stderr).toMatch(/--token: give --api URL too \(a token alone does not connect/);
    const both = run(['--api', 'http://127.0.0.1:1/api', '--token', TOKEN, '--data-dir', tmp]);
    expect(both.status).toBe(2);
    expect(both.stderr).toMatch(/--api and --data-dir: give one/);
    const noToken = run(['--api', 'http://127.0.0.1:1/api']);
    expect(noToken.status).toBe(2);
    expect(noToken.stderr).toMatch(/--token: give the control API token/);

    const port = await closedPort();
    const { client } = await stdioClient(['--api', `http://127.0.0.1:${port}/api`, '--token', TOKEN], cleanEnv());
    try {
      const r = await callTool(client, 'get_lab', {}, { allowError: true });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toMatch(new RegExp(`cannot reach the lab at http://127\\.0\\.0\\.1:${port}/api`));
      expect(textOf(r)).not.toContain(TOKEN);
    } finally {
      await client.close();
    }
  }, 60_000);

  describe('connected to a running lab', () => {
    let serve: Serve;
    beforeAll(async () => {
      const config = join(tmp, 'lab.json');
      writeFileSync(
        config,
        JSON.stringify({ sources: [{ name: 'checkout', writeKey: 'wk_stdio', webhooks: { enabled: true, sharedSecret: SHARED, urls: [{ url: `http://ann:${PASSWORD}@127.0.0.1:${rx.port}/hook`, headers: {} }] } }] }),
      );
      serve = await startServe(['--config', config, '--data-dir', join(tmp, 'serve-data')], TOKEN);
    }, 60_000);
    afterAll(async () => stopServe(serve));

    it('WEBHOOK_LAB_API and WEBHOOK_LAB_TOKEN: the running lab, its secrets masked and its token never shown', async () => {
      const { client } = await stdioClient([], cleanEnv({ WEBHOOK_LAB_API: serve.api, WEBHOOK_LAB_TOKEN: TOKEN }));
      try {
        const lab = await client.callTool({ name: 'get_lab', arguments: {} });
        expect((lab.structuredContent as { collectorUrl: string }).collectorUrl).toBe(serve.collector);
        const sources = await client.callTool({ name: 'list_sources', arguments: {} });
        const src = (sources.structuredContent as { items: { name: string; webhooks: { sharedSecret: string; urls: { url: string }[] } }[] }).items[0];
        expect(src.name).toBe('checkout');
        expect(src.webhooks.sharedSecret).toBe('****');
        expect(src.webhooks.urls[0].url).toBe(`http://ann:****@127.0.0.1:${rx.port}/hook`);
        const all = JSON.stringify([lab, sources]);
        for (const secret of [TOKEN, SHARED, PASSWORD]) expect(all).not.toContain(secret);
      } finally {
        await client.close();
      }
    }, 60_000);

    it('--api --token --show-secrets: secrets and URL passwords shown, the token still never', async () => {
      const { client } = await stdioClient(['--api', serve.api, '--token', TOKEN, '--show-secrets'], cleanEnv());
      try {
        const sources = await client.callTool({ name: 'list_sources', arguments: {} });
        const src = (sources.structuredContent as { items: { webhooks: { sharedSecret: string; urls: { url: string }[] } }[] }).items[0];
        expect(src.webhooks.sharedSecret).toBe(SHARED);
        expect(src.webhooks.urls[0].url).toBe(`http://ann:${PASSWORD}@127.0.0.1:${rx.port}/hook`);
        const lab = await client.callTool({ name: 'get_lab', arguments: {} });
        expect(JSON.stringify([lab, sources])).not.toContain(TOKEN);
      } finally {
        await client.close();
      }
    }, 60_000);

    it('a wrong token: each tool says to check --token or WEBHOOK_LAB_TOKEN (not the testing library\'s connectLab)', async () => {
      const { client } = await stdioClient(['--api', serve.api, '--token', 'not-the-token'], cleanEnv());
      try {
        const r = await callTool(client, 'get_lab', {}, { allowError: true });
        expect(r.isError).toBe(true);
        expect(textOf(r)).toMatch(/unauthorized.*\(check --token or WEBHOOK_LAB_TOKEN\)/);
        expect(textOf(r)).not.toMatch(/connectLab|not-the-token/);
      } finally {
        await client.close();
      }
    }, 60_000);

    it('WEBHOOK_LAB_TOKEN alone does not connect: the server runs its own lab', async () => {
      const { client } = await stdioClient([], cleanEnv({ WEBHOOK_LAB_TOKEN: TOKEN, TMPDIR: mkdtempSync(join(tmp, 'alone-')) }));
      try {
        const lab = await structured<{ collectorUrl: string; sources: { name: string }[] }>(client, 'get_lab');
        expect(lab.collectorUrl).not.toBe(serve.collector);
        expect(lab.sources.map((s) => s.name)).toEqual(['app']);
      } finally {
        await client.close();
      }
    }, 60_000);
  });
});
