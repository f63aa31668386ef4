import { apiTarget, parseApiCommand, UsageError } from './cli-api-args';
import { callOp } from './cli-check';
import type { LoadInput, LoadRun, LoadSample } from '../shared/simulation.contract';
import { CALL_TYPES, type CallType } from '../shared/types';

const USAGE = `Usage:
  webhook-lab load --rate N (--duration S | --total N) [options]

Sends calls through a running Webhook Lab (serve or the desktop app) via its control API, printing
progress once a second. Ctrl+C stops the run.

Options:
  --api URL        control API, e.g. http://127.0.0.1:8788/api (default: WEBHOOK_LAB_API)
  --token T        control API token (default: WEBHOOK_LAB_TOKEN)
  --rate N         calls per second
  --duration S     seconds to run
  --total N        calls to send (with --duration too: whichever ends first)
  --type T         ${CALL_TYPES.join(' | ')} (default track)
  --event NAME     event name (track) or page/screen name (default "Load Test")
  --users N        random user ids drawn from N users, user-1 … user-N (default 100)
  --source ID      source to send as (default: the app client's source, else the first)
  --template JSON  extra message fields; "{{userId}}" and "{{i}}" are replaced per call
  -h, --help       this help

Exit status: 0 when the run ended (done, or stopped by Ctrl+C), 1 when it failed, 2 on bad usage.
`;


function positive(value: string | undefined, name: string, integer = false): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    throw new UsageError(`--${name}: expected a positive ${integer ? 'integer' : 'number'}, got "${value}"`);
  }
  return n;
}

function templateFor(type: CallType, name: string, extra: Record<string, unknown>): LoadInput['template'] {
  const base: Record<CallType, Record<string, unknown>> = {
    track: { event: name, properties: { loadIndex: '{{i}}' } },
    identify: { traits: { plan: 'load-test' } },
    page: { name, properties: { path: '/load/{{i}}' } },
    screen: { name },
    group: { groupId: 'load-group', traits: { name: 'Load Group' } },
    alias: { previousId: 'anon-{{i}}' },
  };
  return { type, ...base[type], ...extra };
}

/** The run's request from the command line; throws UsageError naming the flag. */
export function parseLoadArgs(argv: string[], env: Record<string, string | undefined> = process.env) {
  const values = parseApiCommand(argv, {
    rate: { type: 'string' },
    duration: { type: 'string' },
    total: { type: 'string' },
    type: { type: 'string' },
    event: { type: 'string' },
    users: { type: 'string' },
    source: { type: 'string' },
    template: { type: 'string' },
  });
  if (values.help) return { help: true as const };
  const { api, token } = apiTarget(values, env);
  const rate = positive(values.rate, 'rate');
  if (rate === undefined) throw new UsageError('--rate: required (calls per second)');
  const durationS = positive(values.duration, 'duration');
  const total = positive(values.total, 'total', true);
  if (durationS === undefined && total === undefined) throw new UsageError('give --duration S or --total N');
  const type = (values.type ?? 'track') as CallType;
  if (!CALL_TYPES.includes(type)) throw new UsageError(`--type: expected one of ${CALL_TYPES.join(', ')}, got "${values.type}"`);
  let extra: Record<string, unknown> = {};
  if (values.template !== undefined) {
    try {
      extra = JSON.parse(values.template);
    } catch (err) {
      throw new UsageError(`--template: not JSON (${(err as Error).message})`);
    }
    if (!extra || typeof extra !== 'object' || Array.isArray(extra)) throw new UsageError('--template: expected a JSON object');
  }
  const input: LoadInput = { rate, template: templateFor(type, values.event ?? 'Load Test', extra) };
  if (durationS !== undefined) input.durationS = durationS;
  if (total !== undefined) input.total = total;
  const users = positive(values.users, 'users', true);
  if (users !== undefined) input.users = users;
  if (values.source) input.sourceId = values.source;
  // Accept the server root or its /api, with or without a trailing slash.
  return { help: false as const, root: api.replace(/\/+$/, '').replace(/\/api$/, ''), token, input };
}

const ms = (v: number | null) => (v === null ? '-' : `${v}ms`);

export function progressLine(run: LoadRun, s: LoadSample | undefined): string {
  const head = `[${(s?.t ?? 0).toFixed(0).padStart(4)}s]`;
  const counts = `sent ${run.sent}/${run.target} accepted ${run.accepted}`;
  if (!s) return `${head} ${counts}`;
  return `${head} ${counts} delivered ${s.delivered} failed ${s.failed} retrying ${s.retrying} p50 ${ms(s.p50Ms)} p99 ${ms(s.p99Ms)}${run.errors ? ` errors ${run.errors}` : ''}`;
}

const sleep = (n: number) => new Promise((r) => setTimeout(r, n));
const out = (line: string) => process.stdout.write(`${line}\n`);

/** `webhook-lab load ...`: starts a run, prints a progress line a second, stops it on Ctrl+C. */
export async function runLoadCommand(argv: string[]): Promise<void> {
  let args;
  try {
    args = parseLoadArgs(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`webhook-lab load: ${err.message}\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  if (args.help) return void process.stdout.write(USAGE);
  const { root, token, input } = args;
  const fail = (err: unknown) => {
    process.stderr.write(`webhook-lab load: ${(err as Error).message}\n`);
    process.exitCode = 1;
  };

  let run: LoadRun;
  try {
    run = await callOp(root, token, 'startLoad', input);
  } catch (err) {
    return fail(err);
  }
  out(`load run ${run.id}: ${run.target} ${input.template.type} calls at ${run.rate}/s (Ctrl+C stops)`);

  let stopping: Promise<LoadRun | null> | null = null;
  const onSigint = () => {
    if (stopping) process.exit(130);
    out('stopping…');
    stopping = callOp(root, token, 'stopLoad', {});
    stopping.catch(() => undefined);
  };
  process.on('SIGINT', onSigint);
  try {
    let printed = 0;
    for (;;) {
      await sleep(250);
      const latest = stopping ? await stopping : await callOp(root, token, 'getLoad', {});
      if (!latest || latest.id !== run.id) throw new Error('the run is gone (the app restarted or another run replaced it)');
      run = latest;
      const fresh = run.samples.filter((s) => s.t > printed);
      if (fresh.length) {
        printed = fresh[fresh.length - 1].t;
        out(progressLine(run, fresh[fresh.length - 1]));
      }
      if (run.state !== 'running') break;
    }
    run = await settle(root, token, run);
    const last = run.samples[run.samples.length - 1];
    out(`run ${run.id} ${run.state}: ${progressLine(run, last).replace(/^\[\s*\d+s\] /, '')}`);
    if (run.state === 'error') fail(new Error(run.lastError ?? 'the run failed'));
    else if (run.lastError) process.stderr.write(`webhook-lab load: last client error: ${run.lastError}\n`);
  } catch (err) {
    fail(err);
  } finally {
    process.off('SIGINT', onSigint);
  }
}

/**
 * After the last call is sent, its deliveries may still be in flight: wait (briefly) until the
 * samples account for every accepted call, or stop changing.
 */
async function settle(root: string, token: string, run: LoadRun): Promise<LoadRun> {
  const until = Date.now() + 10_000;
  let seen = run.samples.length;
  let changedAt = Date.now();
  for (;;) {
    const s = run.samples[run.samples.length - 1];
    if (s && s.delivered + s.failed + s.retrying >= run.accepted) return run;
    if (Date.now() > until || Date.now() - changedAt > 1500) return run;
    await sleep(250);
    const next = await callOp(root, token, 'getLoad', {});
    if (!next || next.id !== run.id) return run;
    if (next.samples.length !== seen) {
      seen = next.samples.length;
      changedAt = Date.now();
    }
    run = next;
  }
}
