import { parseArgs } from 'node:util';
import { keptToken } from './ui-token';
import { startEngine } from './engine/engine';
import { startControlServer } from './server/control-server';
import { defaultDataDir } from './data-dir';
import { ConfigError, droppedKeyWarnings, parseConfigText, readConfigText } from './load-config';
import { ConfigRefused } from './engine/apply-config';
import { settingsPatchSchema, type SettingsPatch } from '../shared/settings.schema';
import { describeErrors, fieldErrors } from '../shared/validation-error';
import { tuneHeap } from './heap-tuning';
import { describeDataProblem, SERVE_EXIT_DATA_PROBLEM } from './engine/store/data-problem';
import { printable, printableLog } from './printable';
import { fail, USAGE } from './cli-usage';
import { DEFAULT_COLLECTOR_PORT, DEFAULT_UI_PORT } from '../shared/ports';

// `webhook-lab serve`: the engine and the control API/web UI in this process, until a signal.

/** What an Authorization header can carry as a token: printable ASCII, no space at either end. */
const HEADER_TOKEN = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

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

async function serve(argv: string[], staticDir: string): Promise<void> {
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

  const collectorPort = port(values['collector-port'], 'collector-port', DEFAULT_COLLECTOR_PORT);
  const uiPort = port(values['ui-port'], 'ui-port', DEFAULT_UI_PORT);
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
    server = await startControlServer({ engine, host, port: uiPort, token, staticDir, log: (line) => process.stderr.write(`${printableLog(line)}\n`) });
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

/** `serve`, with a config file's own errors said as such; `staticDir` holds the built web UI. */
export async function runServeCommand(argv: string[], staticDir: string): Promise<void> {
  try {
    await serve(argv, staticDir);
  } catch (err) {
    if (err instanceof ConfigError) fail(err.message);
    throw err;
  }
}
