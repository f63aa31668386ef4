import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { api, callDetailOutput, callFilterSchema, callSummaryOutput, probeReportOutput, replayResultOutput } from '../../shared/api.contract';
import { probeInputSchema, type ProbeReport } from '../../shared/probe.contract';
import { CALL_TYPES, type CallSummary } from '../../shared/types';
import { createHandle, detailOf, LabTimeoutError } from '../testing/handle';
import type { LabCall, Match } from '../testing/types';
import { answer, failure, findSource, guarded, REACHES_RECEIVERS, READ_ONLY, SOURCE_NAMED, sourceIdFor, WRITES_LAB, type ToolContext } from './tool-kit';
import { attemptFacts } from './explain';
import { inputTooDeep } from '../../shared/input-depth';
import { attemptsCutOutput, attemptsCutText, fitAttempts, fitDetail } from './attempts-shown';

// The tools that wait or act (issue 39): wait_for_call (webhook-lab/testing's waitForCall itself),
// send_call (a call through the collector with a source's write key), replay_call, retry_failed
// (a dry run unless told otherwise) and check_receiver (the probe, its progress as MCP progress
// notifications). None deletes anything.

/** wait_for_call's default, as the issue fixes it (the testing module's own is 4 s, for test runners). */
const WAIT_DEFAULT_MS = 10_000;
/** The longest wait one tool call may ask for: an agent's client times requests out too. */
const WAIT_MAX_MS = 120_000;
/**
 * The calls already received a wait looks at (by id), besides those to come. A review found 10,000
 * too many: read oldest first, a short wait never reached the newest, and each wait held the loop
 * about a second reading them.
 */
const WAIT_LOOKBACK = 1_000;
/** A match's size: compared with every call read, a match of 50,000 keys held the lab for a minute. */
const MATCH_MAX_BYTES = 16 * 1024;
const MATCH_MAX_VALUES = 500;
/** How long check_receiver follows a probe before giving up (a probe ends within a minute). */
const PROBE_WAIT_MS = 120_000;
/** How long send_call looks for the stored call once the collector answered (it commits before answering). */
const FIND_SENT_MS = 5_000;

/** Calls' details wait_for_call reads at a time (the handle's default is 200). */
const WAIT_DETAIL_PAGE = 20;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A JSON value a match holds: what waitForCall's partial objects are made of, without predicates or RegExps (JSON has neither). */
const matchSchema = z.record(z.string(), z.unknown()).superRefine((m, ctx) => {
  // Depth first, without recursion: the size checks below recurse (100,000 nested [] answered
  // "Maximum call stack size exceeded": found by a review).
  const tooDeep = inputTooDeep(m);
  if (tooDeep) return ctx.addIssue({ code: 'custom', message: tooDeep.fields[0]?.message ?? tooDeep.message });
  if (JSON.stringify(m).length > MATCH_MAX_BYTES) return ctx.addIssue({ code: 'custom', message: `at most ${MATCH_MAX_BYTES / 1024} KB of JSON: name the fields that tell the call apart` });
  if (valuesIn(m) > MATCH_MAX_VALUES) ctx.addIssue({ code: 'custom', message: `at most ${MATCH_MAX_VALUES} keys and items in all: name the fields that tell the call apart` });
});

/** Keys and array items in a JSON value, all levels. */
function valuesIn(v: unknown): number {
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + 1 + valuesIn(x), 0);
  if (v !== null && typeof v === 'object') return Object.values(v).reduce((n: number, x) => n + 1 + valuesIn(x), 0);
  return 0;
}

export function registerActTools(server: McpServer, ctx: ToolContext): void {
  const { ops } = ctx;

  server.registerTool(
    'wait_for_call',
    {
      title: 'Wait for a call',
      description:
        "The first call matching `match`, among the newest 1,000 received or the next to come, as webhook-lab/testing's waitForCall(match) finds it: a partial object compared deeply with the call as received (keys it names must match, others are ignored; arrays item by item), e.g. { \"type\": \"track\", \"event\": \"Order Completed\", \"properties\": { \"total\": 42 } }. On a timeout (default 10 s) the error lists the closest calls and how each differs. Dropped calls count only with includeDropped.",
      inputSchema: z.strictObject({
        match: matchSchema,
        timeoutMs: z.number().int().min(0).max(WAIT_MAX_MS).default(WAIT_DEFAULT_MS),
        includeDropped: z.boolean().optional(),
      }),
      outputSchema: z.object({ call: callDetailOutput, attemptsCut: attemptsCutOutput, cut: z.array(z.string()) }),
      annotations: READ_ONLY,
    },
    (input) =>
      guarded(ctx, async () => {
        const health = await ops('health', {});
        const sources = (await ops('listSources', {})).map((s) => ({ id: s.id, name: s.name, writeKey: s.writeKey }));
        // One handle per wait, reading the newest WAIT_LOOKBACK calls and those to come: a lab holding
        // 200,000 calls is not read whole for each wait (connectLab's handle reads from the first).
        const newest = (await ops('listMessages', { limit: 1 })).items[0]?.id ?? 0;
        const lab = createHandle({
          api: ops,
          collectorUrl: health.collectorUrl,
          writeKey: sources[0]?.writeKey ?? '',
          sources,
          apiUrl: null,
          token: null,
          uiUrl: null,
          pollMs: ctx.pollMs,
          startAfter: Math.max(0, newest - WAIT_LOOKBACK),
          // A page of 200 calls of 30 KB held the lab's loop for half a second (found by a review).
          detailPage: WAIT_DETAIL_PAGE,
        });
        try {
          // JSON carries no predicate or RegExp: the match is the partial object waitForCall compares.
          const found = await lab.waitForCall(input.match as Match<LabCall>, { timeoutMs: input.timeoutMs, includeDropped: input.includeDropped });
          const whole = detailOf(found);
          if (!whole) throw new Error('the matched call has no detail (not read by this handle)');
          const { detail, attemptsCut, cut } = fitDetail(whole);
          const text = `Call #${detail.call.id} matched (${detail.call.type}${detail.call.label ? ` ${JSON.stringify(detail.call.label)}` : ''}, received ${detail.call.receivedAt}, ${detail.call.status}).${attemptsCutText(attemptsCut, cut)}`;
          return answer(ctx, { call: detail, attemptsCut, cut }, text, detail.call.id);
        } catch (err) {
          if (err instanceof LabTimeoutError || err instanceof TypeError) return failure(ctx, err.message);
          throw err;
        } finally {
          await lab.stop();
        }
      }),
  );

  server.registerTool(
    'send_call',
    {
      title: 'Send a call',
      description:
        "Sends one call (identify, track, page, screen, group or alias: the JSON a client sends, with its `type`) to the lab's collector with a source's write key, as an app would; the answer is the collector's and the call as stored (a call it refuses is an error in its words). `source`: a source's name, id or write key (default: the first source).",
      inputSchema: z.strictObject({
        source: z.string().min(1).optional(),
        call: z.looseObject({ type: z.enum(CALL_TYPES) }),
      }),
      outputSchema: z.object({ status: z.number().int(), answer: z.unknown(), messageId: z.string(), call: callSummaryOutput.nullable() }),
      annotations: WRITES_LAB,
    },
    (input) =>
      guarded(ctx, async () => {
        const health = await ops('health', {});
        const source = input.source === undefined ? ((await ops('listSources', {}))[0] ?? 'the lab has no source: create one first (the UI, a config file)') : await findSource(ops, input.source);
        if (typeof source === 'string') return failure(ctx, source);
        const { type, ...rest } = input.call;
        const messageId = typeof rest.messageId === 'string' && rest.messageId !== '' ? rest.messageId : `mcp-${randomUUID()}`;
        let res: Response;
        try {
          res = await fetch(`${health.collectorUrl}/v1/${type}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}`, 'user-agent': 'webhook-lab mcp' },
            body: JSON.stringify({ ...rest, messageId }),
            signal: AbortSignal.timeout(10_000),
          });
        } catch (err) {
          const why = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
          return failure(ctx, `cannot reach the lab's collector at ${health.collectorUrl} (${why}): nothing was sent`);
        }
        const text = await res.text();
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON: its text
        }
        if (!res.ok) {
          // The collector's refusal in its own words (it names the field); nothing was stored.
          const said = (body as { message?: unknown } | null)?.message;
          return failure(ctx, `the collector refused the call with ${res.status}: ${typeof said === 'string' ? said : text.slice(0, 500)}; nothing was stored`);
        }
        let call: CallSummary | null = null;
        const until = Date.now() + FIND_SENT_MS;
        while (call === null) {
          call = (await ops('listMessages', { q: messageId, sourceId: source.id, limit: 5 })).items.find((c) => c.messageId === messageId) ?? null;
          if (call || Date.now() > until) break;
          await sleep(ctx.pollMs);
        }
        const said = call ? `stored as call #${call.id} (${call.status}${call.dropReason ? `: ${call.dropReason}` : ''})` : 'not found stored';
        return answer(ctx, { status: res.status, answer: body, messageId, call }, `The collector answered ${res.status} ${text.slice(0, 200)}; ${said}.`, call?.id);
      }),
  );

  server.registerTool(
    'replay_call',
    {
      title: 'Replay a call',
      description: "Sends a call's stored body again (re-signed with the source's current secret) to its URLs, or one URL (urlIndex), or with an edited body, as a new manual attempt; earlier attempts are kept as they were.",
      inputSchema: api.replayMessage.input,
      outputSchema: replayResultOutput,
      annotations: REACHES_RECEIVERS,
    },
    (input) =>
      guarded(ctx, async () => {
        const r = await ops('replayMessage', input);
        return answer(ctx, { ...r, attempts: fitAttempts(r.attempts) }, [`Replayed call #${input.id} (delivery ${r.deliveryId}):`, ...r.attempts.map((a) => `- ${attemptFacts(a)}`)].join('\n'), input.id);
      }),
  );

  server.registerTool(
    'retry_failed',
    {
      title: 'Retry failed calls',
      description:
        'Sends every failed or expired call matching the filters (those of list_calls, `source` by name, id or write key) again to all its URLs, in the background. dryRun (default true) only counts them: call again with dryRun false to send.',
      inputSchema: callFilterSchema.extend({ dryRun: z.boolean().default(true), source: SOURCE_NAMED }),
      outputSchema: z.object({ matched: z.number().int(), retried: z.number().int(), dryRun: z.boolean() }),
      annotations: REACHES_RECEIVERS,
    },
    (input) =>
      guarded(ctx, async () => {
        const { source, ...filters } = input;
        const sourceId = await sourceIdFor(ops, source, filters.sourceId, true);
        if (typeof sourceId === 'object') return failure(ctx, sourceId.problem);
        const r = await ops('retryMatching', { ...filters, sourceId });
        const text = input.dryRun ? `${r.matched} failed or expired calls match; nothing sent (dry run: call with dryRun false to send them).` : `${r.matched} failed or expired calls match; ${r.retried} are being sent again.`;
        return answer(ctx, { ...r, dryRun: input.dryRun }, text);
      }),
  );

  server.registerTool(
    'check_receiver',
    {
      title: 'Check a receiver',
      description:
        "Checks a webhook receiver as `webhook-lab probe` does: sends it what Segment's Webhooks destination sends (every call type, signed), what it must refuse (tampered or missing signatures), duplicates, calls out of order, large bodies, 20 at once, and judges each answer; the report says check by check whether it is ready and how to fix a failure. Progress goes out as MCP progress notifications when the request has a progress token. About a minute at most.",
      inputSchema: probeInputSchema,
      outputSchema: probeReportOutput,
      annotations: REACHES_RECEIVERS,
    },
    (input, extra) =>
      guarded(ctx, async () => {
        const progressToken = extra._meta?.progressToken;
        let report: ProbeReport = await ops('startProbe', input);
        let told = -1;
        const until = Date.now() + PROBE_WAIT_MS;
        for (;;) {
          const done = report.checks.filter((c) => c.verdict !== 'pending' && c.verdict !== 'running');
          if (progressToken !== undefined && done.length !== told) {
            told = done.length;
            const last = done.at(-1);
            await extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken, progress: done.length, total: report.checks.length, message: last ? `${last.name}: ${last.verdict}` : 'started' },
            });
          }
          if (report.state === 'done') break;
          if (Date.now() > until || extra.signal.aborted) return failure(ctx, `the check of ${input.url} did not finish within ${PROBE_WAIT_MS / 1000} s (probe ${report.id})`);
          await sleep(Math.max(ctx.pollMs, 100));
          report = await ops('getProbe', { id: report.id });
        }
        const lines = [
          `${report.url}: ${report.unreachable ? 'unreachable (no TCP/TLS connection)' : report.ok ? 'ready: every check passed' : 'NOT ready'}.`,
          ...report.checks.map((c) => `- ${c.verdict.toUpperCase()} ${c.name}: ${c.detail}${c.ok ? '' : ` (${c.why})`}`),
        ];
        return answer(ctx, { ...report }, lines.join('\n'));
      }),
  );
}
