import { parseArgs } from 'node:util';
import { keptToken } from './ui-token';
import { keepRunningOnUnhandledRejection } from './process-guard';
import { join } from 'node:path';
import { startEngine } from './engine/engine';
import { startControlServer } from './server/control-server';
import { defaultDataDir } from './data-dir';
import { ConfigError, droppedKeyWarnings, parseConfigText, readConfigText } from './load-config';
import { ConfigRefused } from './engine/apply-config';
import { settingsPatchSchema, type SettingsPatch } from '../shared/settings.schema';
import { describeErrors, fieldErrors } from '../shared/validation-error';
import { VERSION } from './engine/version';
import { runLoadCommand } from './cli-load';
import { runCheckCommand } from './cli-check';
import { runProbeCommand } from './cli-probe';
import { tuneHeap } from './heap-tuning';
import { describeDataProblem, SERVE_EXIT_DATA_PROBLEM } from './engine/store/data-problem';
import { printable, printableLog, printableText } from './printable';

/** What an Authorization header can carry as a token: printable ASCII, no space at either end. */
const HEADER_TOKEN = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

const USAGE = `Webhook Lab ${VERSION} — headless mode

Usage:
  webhook-lab serve [options]
  webhook-lab load --rate N (--duration S | --total N) [options]   (see webhook-lab load --help)
  webhook-lab check --api URL --token T [options]   wait for deliveries, fail if any failed (see webhook-lab check --help)
  webhook-lab probe --url URL --secret S [options]  check a webhook receiver (see webhook-lab probe --help)
  webhook-lab mcp [--api URL --token T | --data-dir DIR]  MCP server over stdio for coding agents (see webhook-lab mcp --help)

Options:
  --config FILE          JSON config: sources, webhook settings, settings (applied idempotently)
  --data-dir DIR         where the SQLite database lives (default: WEBHOOK_LAB_DATA_DIR, else ${defaultDataDir()})
  --collector-port N     collector port (default 8787; 0 = any free port)
  --ui-port N            control API and web UI port (default 8788; 0 = any free port)
  --host ADDR            bind address for both servers (default 127.0.0.1)
  --token T              control API token (default: WEBHOOK_LAB_TOKEN or a random one)
  --time-scale N         retry time-warp factor (1 = real time)
  --strict               strict collector: unknown write key → 401, invalid call → 400
  -h, --help             this help
`;

function fail(message: string, code = 2): never {
  process.stderr.write(`webhook-lab: ${printableText(message)}\n`);
  process.exit(code);
}

function port(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) fail(`--${name}: expected a port number 0-65535, got "${value}"`);
  return n;
}

// Both servers can hit EADDRINUSE; say which one and which flag moves it (only for that port, so
// another listener failing inside the engine is not blamed on the collector).
function failIfPortInUse(err: unknown, what: string, flag: string, host: string, n: number): void {
  const e = err as NodeJS.ErrnoException & { port?: number };
  if (e.code !== 'EADDRINUSE' || e.port !== n) return;
  fail(`the ${what} port ${n} on ${host} is already in use (another program, or another Webhook Lab, listens there); pick another with --${flag} N, or --${flag} 0 for any free port`);
}

// A damaged or read-only database (or a data folder that cannot be made): which file, what is wrong,
// what to do, and its own exit code, instead of a stack trace.
function failIfDataProblem(err: unknown, dataDir: string): void {
  const problem = describeDataProblem(err, dataDir);
  if (problem) fail(`${problem.title}.\n${problem.detail}`, SERVE_EXIT_DATA_PROBLEM);
}

async function serve(argv: string[]): Promise<void> {
  tuneHeap();
  const { values } = parseArgs({
    args: argv,
    options: {
      config: { type: 'string' },
      'data-dir': { type: 'string' },
      'collector-port': { type: 'string' },
      'ui-port': { type: 'string' },
      host: { type: 'string' },
      token: { type: 'string' },
      'time-scale': { type: 'string' },
      strict: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const overrides: SettingsPatch = {};
  if (values['time-scale'] !== undefined) overrides.timeScale = Number(values['time-scale']);
  if (values.strict) overrides.strict = true;
  const checked = settingsPatchSchema.safeParse(overrides);
  if (!checked.success) fail(describeErrors(fieldErrors(checked.error)).replace('timeScale', '--time-scale'));

  // A token that cannot travel in an Authorization header (empty, blank, outer spaces, non-ASCII or
  // controls) would start a lab no request can authenticate to.
  if (values.token === '') fail('--token: must not be empty (leave it out for WEBHOOK_LAB_TOKEN or the token kept in the data folder)');
  // Only the token used is judged: a --token given overrides the variable, whatever it holds.
  const envToken = process.env.WEBHOOK_LAB_TOKEN || undefined;
  const [tokenFrom, given] = values.token !== undefined ? ['--token', values.token] : ['WEBHOOK_LAB_TOKEN', envToken];
  if (given !== undefined && !HEADER_TOKEN.test(given)) fail(`${tokenFrom}: must be printable ASCII without spaces at either end, as an Authorization header carries it`);

  const configText = values.config ? readConfigText(values.config) : undefined;
  const config = configText === undefined ? undefined : parseConfigText(configText, `config file ${values.config}`);
  for (const w of configText === undefined ? [] : droppedKeyWarnings(configText)) process.stderr.write(`${printableLog(`config: warning: ${w.path}: ${w.message}`)}\n`);
  // WEBHOOK_LAB_DATA_DIR as the desktop app reads it (launch-options.ts); the flag wins.
  const givenDataDir = values['data-dir'] ?? (process.env.WEBHOOK_LAB_DATA_DIR || undefined);
  const dataDir = givenDataDir ?? defaultDataDir();
  const host = values.host ?? '127.0.0.1';

  const collectorPort = port(values['collector-port'], 'collector-port', 8787);
  const uiPort = port(values['ui-port'], 'ui-port', 8788);
  let engine;
  try {
    engine = await startEngine({
      dataDir,
      // The default folder is the lab's own; one given with --data-dir may be the user's (data-folder.ts).
      ownedDataDir: givenDataDir === undefined,
      collectorHost: host,
      collectorPort,
      // Known before the control server starts (0: once it has), so a config's URL there is the lab's own.
      apiPort: uiPort,
      config,
      overrides,
      log: (line) => process.stderr.write(`${printableLog(line)}\n`),
    });
  } catch (err) {
    failIfPortInUse(err, 'collector', 'collector-port', host, collectorPort);
    // The file reads well but cannot be applied: it clashes with the data folder (a write key another
    // source has) or holds what only applying finds (a tracking plan rule that does not compile).
    // Nothing of it was applied (one transaction), and this is the user's to fix, as a bad file is.
    if (err instanceof ConfigRefused && values.config) {
      fail(`config file ${values.config} cannot be applied to the data in ${dataDir}; nothing of it was applied:\n  ${err.fields.map((f) => printable(`${f.path}: ${f.message}`)).join('\n  ')}`);
    }
    failIfDataProblem(err, dataDir);
    throw err;
  }
  // After the engine made (or checked) the data folder: the kept token lives there.
  // An empty WEBHOOK_LAB_TOKEN counts as unset, as an empty WEBHOOK_LAB_DATA_DIR does.
  let token: string;
  try {
    token = values.token ?? envToken ?? keptToken(dataDir);
  } catch (err) {
    failIfDataProblem(err, dataDir);
    throw err;
  }
  let server;
  try {
    server = await startControlServer({ engine, host, port: uiPort, token, staticDir: join(__dirname, '../renderer'), log: (line) => process.stderr.write(`${printableLog(line)}\n`) });
  } catch (err) {
    await engine.stop();
    failIfPortInUse(err, 'control API/UI', 'ui-port', host, uiPort);
    throw err;
  }
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      process.stderr.write(`webhook-lab: ${signal} again, exiting now\n`);
      process.exit(130);
    }
    stopping = true;
    process.stderr.write(`webhook-lab: ${signal}, shutting down\n`);
    await server.app.close();
    await engine.stop();
    process.exit(0);
  };
  const onSignal = (signal: NodeJS.Signals) => shutdown(signal).catch((err: unknown) => fail(`shutdown failed: ${(err as Error)?.stack ?? String(err)}`, 1));
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // Printed once the signals are handled: a script that waits for these lines, then stops the lab,
  // could otherwise signal it before the handler was there and kill it without its shutdown.
  process.stdout.write(`collector: ${engine.collectorUrl}\n`);
  process.stdout.write(`ui: ${server.url}/?token=${encodeURIComponent(token)}\n`);
  process.stdout.write(`api: ${server.url}/api (Authorization: Bearer ${token})\n`);
  process.stdout.write(`data: ${dataDir}\n`);
}

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  if (!command || command === '-h' || command === '--help' || command === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  if (command === '--version' || command === '-v') {
    process.stdout.write(`${VERSION}\n`);
    return;
  }
  if (command === 'serve') {
    keepRunningOnUnhandledRejection((line) => process.stderr.write(`${printableLog(line)}\n`));
    return serve(rest);
  }
  if (command === 'load') return runLoadCommand(rest);
  if (command === 'check') return runCheckCommand(rest);
  if (command === 'probe') return runProbeCommand(rest);
  if (command === 'mcp') {
    keepRunningOnUnhandledRejection((line) => process.stderr.write(`${printableLog(line)}\n`));
    // The MCP SDK is loaded only by the command that needs it (a start of serve loads none of it).
    return (await import('./cli-mcp')).runMcpCommand(rest);
  }
  fail(`unknown command "${command}"\n\n${USAGE}`);
}

main().catch((err: NodeJS.ErrnoException) => {
  if (err instanceof ConfigError) fail(err.message);
  if (err.code === 'EADDRINUSE') fail(`${err.message}: another program (or another Webhook Lab) uses that port; pick another with --collector-port/--ui-port, or 0 for any free port`);
  if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') fail(`${err.message}\n\n${USAGE}`);
  fail(err.stack ?? String(err), 1);
});
