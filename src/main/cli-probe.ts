import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PROBE_CHECKS, PROBE_EXIT, probeInputSchema, type ProbeReport } from '../shared/probe.contract';
import { describeErrors, fieldErrors, ValidationError } from '../shared/validation-error';
import { hasUrlCredentials, maskUrlPassword } from '../shared/url-credentials';
import { ApiFailure, callOp } from './cli-check';
import { formatProbeReport, probeJson, probeJunit } from './probe-report-format';
import { describeDataProblem } from './engine/store/data-problem';
import { printableText } from './printable';

const USAGE = `Usage:
  webhook-lab probe --url URL --secret S [--standard-webhooks-secret whsec_…]
                    [--mode classic|actions --source NAME --mapping NAME] [--only check,…]
                    [--api URL --token T | --data-dir DIR] [--json] [--junit FILE]

Checks a webhook receiver: sends it what Segment's Webhooks destination sends (every call type,
signed), the requests it must refuse (tampered, wrong or missing signature), duplicates, calls out
of order, large and unusual bodies, 20 at once, and judges each answer. Every request is one attempt
(no retries); a run ends within a minute even when nothing answers. docs/receiver-check.md explains
each check and how to fix a failure.

Options:
  --url URL                      the receiver (http or https)
  --secret S                     the source's shared secret (X-Signature)
  --standard-webhooks-secret W   a whsec_ secret: also checks webhook-signature and webhook-timestamp
  --mode classic|actions         classic (default), or a source's Actions mapping (--source, --mapping):
                                 its request is sent to --url; the Classic body checks are skipped
  --only LIST                    only these checks, comma-separated: ${PROBE_CHECKS.join(', ')}
  --api URL --token T            run in that lab (its inspector shows the requests under "probe");
                                 the token defaults to WEBHOOK_LAB_TOKEN
  --data-dir DIR                 run standalone on this data folder (default: a temporary one, removed after)
  --json                         print the report as JSON: { "ok", "checks": [{ "name", "ok", "verdict", "detail", "evidence" }] }
  --junit FILE                   also write JUnit XML, one test case per check
  -h, --help                     this help

Exit status:
  0  every check passed (warnings and skipped checks allowed)
  1  a check failed (a receiver that answers too slowly or not at all, once connected, fails latency)
  2  bad usage (also a --source or --mapping the lab does not have)
  4  no TCP/TLS connection could be made to the receiver (or, with --api, to the lab)
`;

class UsageError extends Error {}

export interface ProbeArgs {
  input: ReturnType<typeof probeInputSchema.parse>;
  api?: { root: string; token: string };
  dataDir?: string;
  json: boolean;
  junit?: string;
}

export function parseProbeArgs(argv: string[], env: Record<string, string | undefined> = process.env): ProbeArgs | { help: true } {
  let values;
  try {
    values = parseArgs({
      args: argv,
      strict: true,
      options: {
        url: { type: 'string' },
        secret: { type: 'string' },
        'standard-webhooks-secret': { type: 'string' },
        mode: { type: 'string' },
        source: { type: 'string' },
        mapping: { type: 'string' },
        only: { type: 'string' },
        api: { type: 'string' },
        token: { type: 'string' },
        'data-dir': { type: 'string' },
        json: { type: 'boolean' },
        junit: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values.help) return { help: true };
  if (!values.url) throw new UsageError('--url: give the receiver URL to check');
  if (values.api !== undefined && values['data-dir'] !== undefined) throw new UsageError('--api and --data-dir: give one (run in a lab, or standalone on a data folder)');
  if (values.mode === 'actions' && (!values.source || !values.mapping)) throw new UsageError('--mode actions: give --source NAME and --mapping NAME');
  const only = values.only?.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = only?.filter((o) => !(PROBE_CHECKS as readonly string[]).includes(o));
  if (unknown?.length) throw new UsageError(`--only: no check named ${unknown.map((u) => `"${u}"`).join(', ')} (checks: ${PROBE_CHECKS.join(', ')})`);
  const parsed = probeInputSchema.safeParse({
    url: values.url,
    secret: values.secret,
    standardWebhooksSecret: values['standard-webhooks-secret'],
    mode: values.mode,
    source: values.source,
    mapping: values.mapping,
    only,
  });
  if (!parsed.success) {
    const flags: Record<string, string> = { standardWebhooksSecret: 'standard-webhooks-secret' };
    throw new UsageError(describeErrors(fieldErrors(parsed.error).map((f) => ({ ...f, path: `--${flags[f.path] ?? f.path}` }))));
  }
  let api: ProbeArgs['api'];
  if (values.api !== undefined) {
    const token = values.token ?? env.WEBHOOK_LAB_TOKEN;
    if (!token) throw new UsageError('--token: give the control API token (or set WEBHOOK_LAB_TOKEN)');
    const root = values.api.replace(/\/+$/, '').replace(/\/api$/, '');
    if (!URL.canParse(root) || !/^https?:$/.test(new URL(root).protocol)) throw new UsageError(`--api: expected the control API's http:// URL (the "api:" line webhook-lab serve prints), got "${maskUrlPassword(values.api)}"`);
    if (hasUrlCredentials(root)) throw new UsageError(`--api: leave the user name and password out of the URL (the API takes --token): ${maskUrlPassword(values.api)}`);
    api = { root, token };
  }
  return { input: parsed.data, api, dataDir: values['data-dir'], json: values.json ?? false, junit: values.junit };
}

/** How long a probe may take before the CLI gives up waiting for its report (a run ends within 60 s). */
const WAIT_MS = 120_000;

async function untilDone(read: () => Promise<ProbeReport>): Promise<ProbeReport> {
  const until = Date.now() + WAIT_MS;
  for (;;) {
    const r = await read();
    if (r.state === 'done') return r;
    if (Date.now() > until) throw new Error(`the probe did not finish within ${WAIT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Runs the probe in its own engine on a temporary store (never the default data folder), or in --data-dir. */
async function standalone(args: ProbeArgs): Promise<ProbeReport> {
  // Imported here: `probe --api` never loads SQLite.
  const { startEngine } = await import('./engine/engine');
  const dir = args.dataDir ?? mkdtempSync(join(tmpdir(), 'webhook-lab-probe-'));
  const engine = await startEngine({ dataDir: dir, collectorPort: 0, mockReceiverPorts: { http: 0, https: 0 } });
  try {
    const started = await engine.handlers.startProbe(args.input);
    return await untilDone(async () => engine.handlers.getProbe({ id: started.id }));
  } finally {
    await engine.stop();
    if (!args.dataDir) rmSync(dir, { recursive: true, force: true });
  }
}

async function inLab(args: ProbeArgs & { api: NonNullable<ProbeArgs['api']> }): Promise<ProbeReport> {
  const { root, token } = args.api;
  const started = await callOp(root, token, 'startProbe', args.input);
  return untilDone(() => callOp(root, token, 'getProbe', { id: started.id }));
}

export function probeExitCode(r: ProbeReport): number {
  if (r.unreachable) return PROBE_EXIT.unreachable;
  return r.ok ? PROBE_EXIT.ok : PROBE_EXIT.failed;
}

export async function runProbeCommand(argv: string[]): Promise<void> {
  let args: ProbeArgs;
  try {
    const parsed = parseProbeArgs(argv);
    if ('help' in parsed) return void process.stdout.write(USAGE);
    args = parsed;
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`webhook-lab probe: ${err.message}\n\n${USAGE}`);
    process.exitCode = PROBE_EXIT.usage;
    return;
  }
  let report: ProbeReport;
  try {
    report = args.api ? await inLab({ ...args, api: args.api }) : await standalone(args);
  } catch (err) {
    if (err instanceof ValidationError) {
      // A source or mapping (--mode actions) that the store does not have.
      const hint = args.api || args.dataDir ? '' : ' (a standalone probe starts on an empty store: give --api, or --data-dir of a lab that has it)';
      process.stderr.write(`webhook-lab probe: ${err.fields.map((f) => `--${f.path}: ${f.message}`).join('; ')}${hint}\n`);
      process.exitCode = PROBE_EXIT.usage;
      return;
    }
    // --data-dir names a folder the probe cannot use (another lab holds it, a damaged database…).
    const problem = args.dataDir !== undefined ? describeDataProblem(err, args.dataDir) : null;
    if (problem) {
      const inUse = (err as { code?: unknown }).code === 'WL_FOLDER_IN_USE' ? '\nOr run the probe in that lab instead: --api URL --token T (its api: line).' : '';
      process.stderr.write(`webhook-lab probe: ${problem.title}.\n${problem.detail}${inUse}\n`);
      process.exitCode = PROBE_EXIT.usage;
      return;
    }
    if (!(err instanceof ApiFailure)) throw err;
    process.stderr.write(`webhook-lab probe: ${err.message}\n`);
    // The lab answered 400: what was asked of it is wrong (a source or mapping it does not have).
    process.exitCode = / → 400: /.test(err.message) ? PROBE_EXIT.usage : PROBE_EXIT.unreachable;
    return;
  }
  if (args.junit) writeFileSync(args.junit, probeJunit(report));
  process.stdout.write(args.json ? probeJson(report) : printableText(formatProbeReport(report, !!(args.api || args.dataDir))));
  process.exitCode = probeExitCode(report);
}
