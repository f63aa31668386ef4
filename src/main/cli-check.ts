import { isoTimeSchema } from '../shared/iso-time';
import { apiTarget, parseApiCommand, UsageError } from './cli-api-args';
import type { OpInput, OpName, OpOutput } from '../shared/api.contract';
import type { CallStats } from '../shared/call-stats';
import { answerShapeProblem, OpTransportError, redirectedAway, REQUEST_TIMEOUT_MS, refusalMessage, sendOp, type OpHttpAnswer } from './http-op';
import type { CallSummary } from '../shared/types';
import type { ViolationSummary } from '../shared/tracking-plans.contract';
import { formatTimestamp } from '../shared/timestamp';
import { hasUrlCredentials, maskUrlPassword, maskUrlPasswordsIn } from '../shared/url-credentials';
import { printable } from './printable';

const USAGE = `Usage:
  webhook-lab check --api URL --token T [--since ISO] [--source NAME] [--timeout S] [--json] [--fail-on-violations]

For pipelines: waits until no delivery is pending, in flight or retrying (nor any call waiting in
an Actions batch), prints what became of the calls (delivered, failed, expired, canceled, dropped
with reasons, not forwarded) and fails when a receiver did not get its webhooks. Deliveries are
counted per call they carry, Classic and Webhooks (Actions) alike.

Options:
  --api URL        control API, e.g. http://127.0.0.1:8788/api (default: WEBHOOK_LAB_API)
  --token T        control API token (default: WEBHOOK_LAB_TOKEN)
  --since ISO      only calls received at or after this time, e.g. 2025-01-31T12:00:00Z
  --source NAME    only calls of this source (its name or id)
  --timeout S      seconds to wait for unfinished deliveries (default 60; 0 = do not wait)
  --json           print the result as one JSON object instead of the summary (with the tracking
                   plan violations per source, event and kind)
  --fail-on-violations
                   exit 1 when a call had tracking plan violations (docs/tracking-plans.md), or
                   when a source's plan does not compile (its calls are not checked); calls a
                   plan blocked are reported, and fail the check only with this flag
  -h, --help       this help

Exit status:
  0  nothing failed: every forwarded call was delivered (canceled and not forwarded are reported only)
  1  a delivery failed or expired, or a call was dropped (or, with --fail-on-violations, a call
     had tracking plan violations, or a source's plan does not compile)
  2  bad usage (a flag, or a --source that does not exist)
  3  timed out: deliveries still pending, in flight or retrying after --timeout, none failed so far
  4  the control API could not be reached, refused the token, answered with an error, or what
     answered at --api is not a Webhook Lab control API (HTML, other JSON, a body that stalls)
`;

export const CHECK_EXIT = { ok: 0, failures: 1, usage: 2, timeout: 3, api: 4 } as const;

/** The control API could not be reached or answered with an error (exit 4). */
export class ApiFailure extends Error {}

export interface CheckArgs {
  api: string;
  token: string;
  since?: string;
  source?: string;
  timeoutMs: number;
  json: boolean;
  failOnViolations?: boolean;
}

/** The check's request from the command line; throws UsageError naming the flag. */
export function parseCheckArgs(argv: string[], env: Record<string, string | undefined> = process.env): CheckArgs | { help: true } {
  const values = parseApiCommand(argv, {
    since: { type: 'string' },
    source: { type: 'string' },
    timeout: { type: 'string' },
    json: { type: 'boolean' },
    'fail-on-violations': { type: 'boolean' },
  });
  if (values.help) return { help: true };
  const { api: apiUrl, token } = apiTarget(values, env);
  let since: string | undefined;
  if (values.since !== undefined) {
    // The API's own rule for a time (an ISO date-time with its offset), so what passes here passes there:
    // Date.parse alone took "1" for 2001, "Nov 26" and 2026-02-30 for 2 March.
    const t = isoTimeSchema.safeParse(values.since).success ? Date.parse(values.since) : NaN;
    if (Number.isNaN(t)) throw new UsageError(`--since: expected an ISO time such as 2025-01-31T12:00:00Z, got "${values.since}"`);
    since = formatTimestamp(t);
  }
  // Number('') and Number(' ') are 0: an empty value would silently mean "do not wait".
  const timeoutS = values.timeout === undefined ? 60 : /^\s*\d+(?:\.\d+)?\s*$/.test(values.timeout) ? Number(values.timeout) : NaN;
  if (!Number.isFinite(timeoutS)) throw new UsageError(`--timeout: expected seconds (0 or more), got "${values.timeout}"`);
  // An empty name would silently mean "every source".
  if (values.source !== undefined && values.source.trim() === '') throw new UsageError('--source: expected a source name or id, got an empty value');
  // The server root or its /api, with or without a trailing slash: requests carry /api themselves.
  const root = apiUrl.replace(/\/+$/, '').replace(/\/api$/, '');
  let parsed: URL | null = null;
  try {
    parsed = new URL(root);
  } catch {
    // refused below
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw new UsageError(`--api: expected the control API's http:// URL (the "api:" line webhook-lab serve prints), got "${maskUrlPassword(apiUrl)}"`);
  }
  // The control API takes the token, never a user name or password in its URL (and fetch refuses one).
  if (hasUrlCredentials(root)) throw new UsageError(`--api: leave the user name and password out of the URL (the API takes --token): ${maskUrlPassword(apiUrl)}`);
  return { api: root, token, since, source: values.source, timeoutMs: Math.round(timeoutS * 1000), json: values.json ?? false, failOnViolations: values['fail-on-violations'] === true };
}

/**
 * One operation of the contract over HTTP (same mapping as the server's routes). Whatever answers
 * at --api, the outcome is the operation's result or an ApiFailure naming the URL and what came
 * back: an HTML page, JSON of another shape or a body that stalls is not taken for the lab's answer.
 */
export async function callOp<K extends OpName>(root: string, token: string, name: K, input: OpInput<K>): Promise<OpOutput<K>> {
  let answer: OpHttpAnswer;
  try {
    answer = await sendOp(root, token, name, input);
  } catch (err) {
    if (!(err instanceof OpTransportError)) throw err;
    if (err.stage === 'connect' || !err.res) throw new ApiFailure(`cannot reach ${maskUrlPassword(root)}/api (${maskUrlPasswordsIn(err.why)}); is webhook-lab serve running?`);
    const { where, type } = answered(root, err.url, err.res);
    throw new ApiFailure(`${where} answered ${err.res.status} (${type}) but its body did not arrive within ${REQUEST_TIMEOUT_MS / 1000} s; is --api the "api:" line webhook-lab serve printed?`);
  }
  const { res, text, json } = answer;
  const { where, type } = answered(root, answer.url, res);
  if (json === undefined) {
    const hint = res.status === 401 ? tokenHint(root, res) : '';
    throw new ApiFailure(`${where} answered ${res.status} (${type}), not the control API's JSON${hint}; is --api the "api:" line webhook-lab serve printed?`);
  }
  if (res.ok) {
    const problem = answerShapeProblem(name, json);
    if (problem) throw new ApiFailure(`${where} answered ${res.status} with JSON that is not the control API's answer (${problem}); is --api the "api:" line webhook-lab serve printed?`);
    return json as OpOutput<K>;
  }
  let message = refusalMessage(json, `${type} ${oneLine(text)}`);
  if (res.status === 401) message = `${message}${tokenHint(root, res)}`;
  const via = res.redirected ? ` (redirected to ${maskUrlPassword(res.url.split('?')[0])})` : '';
  throw new ApiFailure(`${answer.method} ${answer.url}${via} → ${res.status}: ${oneLine(maskUrlPasswordsIn(message))}`);
}

/** What to do about a 401: behind a redirect to another origin the token was never shown (redirectedAway). */
function tokenHint(root: string, res: Response): string {
  return redirectedAway(root, res) ? ' (the token is not sent on to another address: give --api the URL it was redirected to)' : ' (check --token / WEBHOOK_LAB_TOKEN)';
}

/** Where an answer came from (fetch follows redirects: named when it is not where we asked) and its content type. */
function answered(root: string, url: string, res: Response): { where: string; type: string } {
  let where = maskUrlPassword(root + url.split('?')[0]);
  if (res.redirected) where += ` (redirected to ${maskUrlPassword(res.url.split('?')[0])})`;
  return { where, type: res.headers.get('content-type')?.split(';')[0].trim() || 'no content type' };
}

/** Text on one line, at most 200 characters: an answer quoted in the one line check prints. */
function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 200)}…` : flat;
}

/** A call that makes the check fail, as listed under the summary. */
export interface CheckProblem {
  id: number;
  receivedAt: string;
  type: string;
  label: string | null;
  state: 'failed' | 'expired' | 'dropped';
  dropReason: string | null;
  /** Each request of the call: Classic URLs, then Actions ones (`mapping` set). */
  urls: { url: string; state: string; lastStatus: number | null; attempts: number; mapping?: string }[];
  /**
   * The call in the lab's web UI (the same server as --api): `http://127.0.0.1:8788/#/inspector/5006`.
   * Without the token, which the page keeps per tab: open it in the lab's tab, or after the ui: address.
   */
  link: string;
}

/** What `--json` prints. */
export interface CheckResult {
  status: 'ok' | 'failures' | 'timeout';
  exitCode: number;
  waitedMs: number;
  stats: CallStats;
  /** Up to PROBLEM_EXAMPLES calls of each failing kind, newest first. */
  problems: CheckProblem[];
  /** Tracking plan violations of the calls checked (GET /api/violations); null from a lab without tracking plans. */
  violations: ViolationSummary | null;
  /** Present (true) when --fail-on-violations made the check fail. */
  violationsFailed?: true;
}

const PROBLEM_EXAMPLES = 5;

export function failureCount(s: CallStats): number {
  return s.deliveries.failed + s.deliveries.expired + s.dropped;
}

function toProblem(c: CallSummary, state: CheckProblem['state'], root: string): CheckProblem {
  return {
    id: c.id,
    receivedAt: c.receivedAt,
    type: c.type,
    label: c.label,
    state,
    dropReason: c.dropReason,
    urls: c.urls.map((u) => ({ url: u.url, state: u.state, lastStatus: u.lastStatus, attempts: u.attempts, ...(u.via ? { mapping: u.via.mapping } : {}) })),
    link: `${maskUrlPassword(root)}/#/inspector/${c.id}`,
  };
}

async function examples(args: CheckArgs, sourceId: string | undefined, stats: CallStats): Promise<CheckProblem[]> {
  const out: CheckProblem[] = [];
  const since = args.since ? Date.parse(args.since) : undefined;
  for (const state of ['failed', 'expired', 'dropped'] as const) {
    if ((state === 'dropped' ? stats.dropped : stats.deliveries[state]) === 0) continue;
    // A call's status is its Classic delivery's: one whose Actions request failed beside a delivered
    // Classic one is found by the URL state (which covers Actions requests too).
    const pages = [await callOp(args.api, args.token, 'listMessages', { status: state, sourceId, limit: 100 })];
    if (state !== 'dropped') pages.push(await callOp(args.api, args.token, 'listMessages', { urlState: state, sourceId, limit: 100 }));
    const found = new Map<number, CallSummary>();
    for (const c of pages.flatMap((p) => p.items)) if (since === undefined || Date.parse(c.receivedAt) >= since) found.set(c.id, c);
    out.push(...[...found.values()].sort((a, b) => b.id - a.id).slice(0, PROBLEM_EXAMPLES).map((c) => toProblem(c, state, args.api)));
  }
  return out;
}

const pad = (label: string, n: number) => `  ${label.padEnd(15)}${String(n).padStart(7)}`;

/** The human summary: counts, a verdict line, then the calls that failed. */
export function formatSummary(r: CheckResult, sourceLabel?: string): string {
  const s = r.stats;
  const scope = [s.since ? `since ${s.since}` : 'all', sourceLabel ? `source "${sourceLabel}"` : ''].filter(Boolean).join(', ');
  const reasons = s.dropReasons.map((d) => `${d.reason}: ${d.count}`).join(', ');
  const lines = [
    `webhook-lab check: ${s.calls} call${s.calls === 1 ? '' : 's'} (${scope})`,
    pad('delivered', s.deliveries.delivered),
    pad('failed', s.deliveries.failed),
    pad('expired', s.deliveries.expired),
    pad('canceled', s.deliveries.canceled),
    `${pad('dropped', s.dropped)}${reasons ? `   (${reasons})` : ''}`,
    pad('not forwarded', s.notForwarded),
    // Blocked by a tracking plan: the plan working, not a failure (docs/tracking-plans.md).
    ...(s.blocked ? [pad('blocked by plan', s.blocked)] : []),
    ...(r.violations?.checked ? [pad('with violations', r.violations.withViolations)] : []),
    `${pad('unfinished', s.unfinished)}${s.unfinished ? `   (pending ${s.deliveries.pending}, in flight ${s.deliveries.in_flight}, retrying ${s.deliveries.retrying})` : ''}`,
  ];
  const parts: string[] = [];
  if (s.deliveries.failed) parts.push(`${s.deliveries.failed} failed`);
  if (s.deliveries.expired) parts.push(`${s.deliveries.expired} expired`);
  if (s.dropped) parts.push(`${s.dropped} dropped`);
  const v = r.violations;
  const unchecked = uncheckedOf(v);
  if (v && r.violationsFailed && v.withViolations) parts.push(`${v.withViolations} with tracking plan violations`);
  if (r.violationsFailed && unchecked.length) parts.push(`${unchecked.length} source${unchecked.length === 1 ? '' : 's'} not checked (tracking plan does not compile)`);
  if (r.status === 'ok') lines.push('OK: nothing failed, expired or was dropped');
  else if (r.status === 'failures') lines.push(`FAILED: ${parts.join(', ')}`);
  else lines.push(`TIMED OUT after ${(r.waitedMs / 1000).toFixed(1)}s: ${s.unfinished} deliver${s.unfinished === 1 ? 'y' : 'ies'} not finished`);
  for (const p of r.problems) {
    const what = `call ${p.id} ${p.type}${p.label ? ` "${p.label}"` : ''}`;
    if (p.state === 'dropped') lines.push(`  ${what}: dropped (${p.dropReason ?? 'no reason'})`);
    else {
      const urls = p.urls.map(
        (u) => `${u.mapping === undefined ? '' : `Actions "${u.mapping}" `}${u.url} → ${u.lastStatus ?? 'no answer'}, ${u.attempts} attempt${u.attempts === 1 ? '' : 's'} (${u.state})`,
      );
      lines.push(`  ${what}: ${p.state} — ${urls.join('; ')}`);
    }
    lines.push(`    ${p.link}`);
  }
  for (const u of unchecked) lines.push(`  source "${u.sourceName ?? u.sourceId}" not checked: tracking plan "${u.plan}" does not compile (${u.problem}); save it again with rules that compile`);
  // Tracking plan violations per event and kind, most frequent first (docs/tracking-plans.md).
  for (const i of r.violations?.items.slice(0, 10) ?? []) {
    // count is calls; a call can have several violations of a kind (one per property): said apart.
    const many = i.violations > i.count ? `, ${i.violations} violations` : '';
    lines.push(`  ${i.sourceName ?? i.sourceId} ${i.type}${i.event ? ` "${i.event}"` : ''}: ${i.kind.replace(/_/g, ' ')} in ${i.count} call${i.count === 1 ? '' : 's'}${many} (e.g. call ${i.exampleCallId})`);
  }
  const left = (r.violations?.itemsTotal ?? r.violations?.items.length ?? 0) - 10;
  if (left > 0) lines.push(`  … and ${left} more kind${left === 1 ? '' : 's'} of violation by event (--json lists the ${r.violations!.items.length} most frequent)`);
  // Each line is one line of the log: a newline, terminal escape or bidi control inside an event or
  // source name (anyone who can send to the collector chooses those) is shown escaped, not obeyed.
  return `${lines.map(printable).join('\n')}\n`;
}

const sleep = (n: number) => new Promise((r) => setTimeout(r, n));

/** Polls getStats until nothing is unfinished or the timeout passes; the result and its exit code. */
export async function runCheck(args: CheckArgs, sourceId: string | undefined): Promise<CheckResult> {
  const started = Date.now();
  const input = { since: args.since, sourceId };
  let stats = await callOp(args.api, args.token, 'getStats', input);
  let interval = 100;
  while (stats.unfinished > 0 && Date.now() - started < args.timeoutMs) {
    await sleep(Math.min(interval, Math.max(0, args.timeoutMs - (Date.now() - started))));
    interval = Math.min(interval * 2, 1000);
    stats = await callOp(args.api, args.token, 'getStats', input);
  }
  const waitedMs = Date.now() - started;
  const violations = await violationsOf(args, sourceId);
  // A source whose plan does not compile is not checked: its violations cannot be known, so it fails too.
  const violationsFailed = args.failOnViolations === true && ((violations?.withViolations ?? 0) > 0 || uncheckedOf(violations).length > 0);
  const failures = failureCount(stats) + (violationsFailed ? 1 : 0);
  const status = failures > 0 ? 'failures' : stats.unfinished > 0 ? 'timeout' : 'ok';
  const exitCode = status === 'ok' ? CHECK_EXIT.ok : status === 'failures' ? CHECK_EXIT.failures : CHECK_EXIT.timeout;
  return { status, exitCode, waitedMs, stats, problems: failureCount(stats) ? await examples(args, sourceId, stats) : [], violations, ...(violationsFailed ? { violationsFailed: true as const } : {}) };
}

/** Sources whose tracking plan does not compile (none from a lab older than this field). */
function uncheckedOf(v: ViolationSummary | null): ViolationSummary['unchecked'] {
  return v?.unchecked ?? [];
}

/**
 * The violations summary since --since (all calls without it). Without --fail-on-violations it is
 * only reported: a lab that cannot answer it (older, without tracking plans) gives null, not exit 4.
 */
async function violationsOf(args: CheckArgs, sourceId: string | undefined): Promise<ViolationSummary | null> {
  try {
    return await callOp(args.api, args.token, 'getViolations', { since: args.since ?? formatTimestamp(0), sourceId });
  } catch (err) {
    if (!args.failOnViolations && err instanceof ApiFailure) return null;
    throw err;
  }
}

/** `webhook-lab check ...`: sets process.exitCode as documented in USAGE. */
export async function runCheckCommand(argv: string[]): Promise<void> {
  let args: CheckArgs;
  let sourceId: string | undefined;
  let sourceLabel: string | undefined;
  try {
    const parsed = parseCheckArgs(argv);
    if ('help' in parsed) return void process.stdout.write(USAGE);
    args = parsed;
    if (args.source) {
      const sources = await callOp(args.api, args.token, 'listSources', {});
      const found = sources.find((s) => s.name === args.source) ?? sources.find((s) => s.id === args.source);
      if (!found) throw new UsageError(`--source: no source named "${args.source}" (sources: ${sources.map((s) => s.name).join(', ') || 'none'})`);
      sourceId = found.id;
      sourceLabel = found.name;
    }
    const result = await runCheck(args, sourceId);
    process.stdout.write(args.json ? `${JSON.stringify(result, null, 2)}\n` : formatSummary(result, sourceLabel));
    process.exitCode = result.exitCode;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`webhook-lab check: ${err.message}\n\n${USAGE}`);
      process.exitCode = CHECK_EXIT.usage;
    } else if (err instanceof ApiFailure) {
      process.stderr.write(`webhook-lab check: ${err.message}\n`);
      process.exitCode = CHECK_EXIT.api;
    } else throw err;
  }
}
