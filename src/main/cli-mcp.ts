import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { parseApiCommand, UsageError } from './cli-api-args';
import { apiRoot, httpApi, inProcessApi, type LabApi } from './testing/transport';
import { createLabMcpServer } from './mcp/server';
import { describeDataProblem } from './engine/store/data-problem';
import { maskUrlPassword } from '../shared/url-credentials';
import { printableLog } from './printable';
import { ConfigError, parseConfigText, readConfigText } from './load-config';
import { ConfigRefused } from './engine/apply-config';
import { DEFAULT_COLLECTOR_PORT } from '../shared/ports';

const USAGE = `Usage:
  webhook-lab mcp [--api URL --token T | --data-dir DIR] [--config FILE] [--show-secrets]

A Model Context Protocol server over stdio, for coding agents (Claude Code, Cursor, VS Code): the
agent starts it and calls its tools (get_lab, list_sources, list_calls, get_call, wait_for_call,
send_call, replay_call, retry_failed, check_receiver, verify_signature, list_violations,
explain_call). Stdout carries the protocol only; logs go to stderr. docs/agents.md has the setup.

With --api (or WEBHOOK_LAB_API) it uses that running lab (serve, web mode) through its control API,
with --token or WEBHOOK_LAB_TOKEN (a token alone does not connect). Without, it starts its own lab on
--data-dir or a temporary folder (removed when it exits), its collector on 8787 when that port is
free, else on any free port (get_lab says which). A temporary lab without --config has one source,
"app", to send calls with (send_call, or your app with its write key: get_lab gives it).

Options:
  --api URL        the control API of a running lab (the "api:" line webhook-lab serve prints)
  --token T        its token (default WEBHOOK_LAB_TOKEN)
  --data-dir DIR   run its own lab on this data folder (default: a temporary one)
  --config FILE    its own lab: a JSON config (sources, receivers, settings) applied at start, as serve does
  --show-secrets   answer with shared secrets, Standard Webhooks secrets and URL passwords unmasked
                   (the control API token is never shown)
  -h, --help       this help
`;

export interface McpArgs {
  api?: { root: string; token: string };
  dataDir?: string;
  config?: string;
  showSecrets: boolean;
}

export function parseMcpArgs(argv: string[], env: Record<string, string | undefined> = process.env): McpArgs | { help: true } {
  const values = parseApiCommand(argv, { 'data-dir': { type: 'string' }, config: { type: 'string' }, 'show-secrets': { type: 'boolean' } });
  if (values.help) return { help: true };
  const apiUrl = values.api ?? (env.WEBHOOK_LAB_API || undefined);
  if (apiUrl === undefined) {
    if (values.token !== undefined) throw new UsageError('--token: give --api URL too (a token alone does not connect to a lab; without --api the server starts its own)');
    return { dataDir: values['data-dir'], config: values.config, showSecrets: values['show-secrets'] ?? false };
  }
  if (values['data-dir'] !== undefined || values.config !== undefined) throw new UsageError(`--api and ${values.config !== undefined ? '--config' : '--data-dir'}: give one (use a running lab, or run one of its own)`);
  const token = values.token ?? (env.WEBHOOK_LAB_TOKEN || undefined);
  if (!token) throw new UsageError('--token: give the control API token (or set WEBHOOK_LAB_TOKEN)');
  let root: string;
  try {
    root = apiRoot(apiUrl);
  } catch (err) {
    throw new UsageError(`--api: ${(err as Error).message.replace(/^connectLab: apiUrl: /, '')}`);
  }
  return { api: { root, token }, showSecrets: values['show-secrets'] ?? false };
}

/** Whether nothing listens on the port (on loopback) now. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

const log = (line: string) => process.stderr.write(`${printableLog(line)}\n`);

export async function runMcpCommand(argv: string[]): Promise<void> {
  let args: McpArgs;
  try {
    const parsed = parseMcpArgs(argv);
    if ('help' in parsed) return void process.stdout.write(USAGE);
    args = parsed;
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`webhook-lab mcp: ${err.message}\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  // Stdout is the protocol's: a stray console.log of any module would break the agent's client.
  console.log = console.info = console.debug = (...a: unknown[]) => console.error(...a);

  let ops: LabApi;
  let uiBase: string | null = null;
  let close = async () => {};
  if (args.api) {
    ops = httpApi(args.api.root, args.api.token, { token: '--token or WEBHOOK_LAB_TOKEN', url: 'give --api that URL', urlName: '--api' });
    uiBase = args.api.root;
    log(`webhook-lab mcp: using the lab at ${maskUrlPassword(args.api.root)}/api`);
  } else {
    // Imported here: a connected server never loads SQLite.
    const { startEngine } = await import('./engine/engine');
    let config;
    try {
      config = args.config === undefined ? undefined : parseConfigText(readConfigText(args.config), `config file ${args.config}`);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      process.stderr.write(`webhook-lab mcp: ${err.message}\n`);
      process.exitCode = 2;
      return;
    }
    const dir = args.dataDir ?? mkdtempSync(join(tmpdir(), 'webhook-lab-mcp-'));
    const collectorPort = (await portFree(DEFAULT_COLLECTOR_PORT)) ? DEFAULT_COLLECTOR_PORT : 0;
    let engine;
    try {
      const start = (port: number) => startEngine({ dataDir: dir, collectorHost: '127.0.0.1', collectorPort: port, mockReceiverPorts: args.dataDir ? undefined : { http: 0, https: 0 }, config, log });
      try {
        engine = await start(collectorPort);
      } catch (err) {
        // Taken between the look and the start (another lab starting beside this one): any free port.
        const e = err as { code?: string; port?: number };
        if (collectorPort === 0 || e.code !== 'EADDRINUSE' || e.port !== collectorPort) throw err;
        engine = await start(0);
      }
    } catch (err) {
      if (!args.dataDir) rmSync(dir, { recursive: true, force: true });
      if (err instanceof ConfigRefused) {
        process.stderr.write(`webhook-lab mcp: config file ${args.config} cannot be applied; nothing of it was applied:\n  ${err.fields.map((f) => `${f.path}: ${f.message}`).join('\n  ')}\n`);
        process.exitCode = 2;
        return;
      }
      const problem = args.dataDir !== undefined ? describeDataProblem(err, args.dataDir) : null;
      if (!problem) throw err;
      const inUse = (err as { code?: unknown }).code === 'WL_FOLDER_IN_USE' ? '\nOr use that lab instead: --api URL --token T (its api: line).' : '';
      process.stderr.write(`webhook-lab mcp: ${problem.title}.\n${problem.detail}${inUse}\n`);
      process.exitCode = 2;
      return;
    }
    ops = inProcessApi(engine.handlers);
    // A new lab with nothing to send with: one source, so send_call and an app have a write key.
    if (!args.dataDir && !config && (await ops('listSources', {})).length === 0) await ops('createSource', { name: 'app' });
    log(`webhook-lab mcp: its own lab, collector ${engine.collectorUrl}, data ${dir}${args.dataDir ? '' : ' (temporary)'}`);
    const started = engine;
    close = async () => {
      await started.stop();
      if (!args.dataDir) rmSync(dir, { recursive: true, force: true });
    };
  }

  const stopping = new AbortController();
  const server = createLabMcpServer({ ops, showSecrets: args.showSecrets, token: args.api?.token, uiBase, stopping: stopping.signal });
  const transport = new StdioServerTransport();
  let closing = false;
  const shutdown = async (why: string) => {
    if (closing) return;
    closing = true;
    log(`webhook-lab mcp: ${why}, shutting down`);
    // A tool call under way answers that the lab is stopping (to a client still listening: a signal).
    stopping.abort();
    await new Promise((r) => setImmediate(r));
    await server.close().catch(() => undefined);
    await close();
    process.exit(0);
  };
  const onEnd = (why: string) => () => void shutdown(why).catch((err: unknown) => (log(`webhook-lab mcp: shutdown failed: ${String(err)}`), process.exit(1)));
  // The agent's client ends the server by closing its stdin (or with a signal). A client that died
  // closed our pipes too: writing to them fails (EPIPE), which must not end us before the lab stops
  // and its temporary folder goes.
  process.stderr.on('error', () => undefined);
  process.stdout.on('error', onEnd('stdout closed'));
  process.stdin.once('end', onEnd('stdin closed'));
  process.once('SIGINT', onEnd('SIGINT'));
  process.once('SIGTERM', onEnd('SIGTERM'));
  await server.connect(transport);
}
