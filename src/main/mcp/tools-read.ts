import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { api, callSummaryOutput, listMessagesSchema, pageOutput, sourceOutput, storageOutput } from '../../shared/api.contract';
import type { CallDetail, CallSummary, Source } from '../../shared/types';
import { signatureOps } from '../../shared/signature-verify.contract';
import { answer, failure, guarded, READ_ONLY, SOURCE_NAMED, sourceIdFor, type ToolContext } from './tool-kit';
import { explainCall, explanationOutput } from './explain';
import { signatureVerdictOutput, signatureVerdicts } from './verdicts';
import { attemptsCutOutput, attemptsCutText, fitDetail } from './attempts-shown';

// The tools that only read what the lab knows (issue 39): get_lab, list_sources, list_calls,
// get_call, list_violations, explain_call, verify_signature. Inputs are the control API's own
// schemas where an operation has one; outputs are the contract's output schemas.

/** A page of calls an agent reads at once: at most 100 (the control API allows 500). */
const MAX_PAGE = 100;
/** list_violations reads each call's detail: fewer a page. */
const MAX_VIOLATIONS_PAGE = 25;

function callLine(c: CallSummary): string {
  const what = c.label ? `${c.type} ${JSON.stringify(c.label)}` : c.type;
  const who = c.userId ?? c.anonymousId ?? 'no user';
  const outcome = c.status !== 'accepted' ? `${c.status}${c.dropReason ? ` (${c.dropReason})` : ''}` : (c.deliveryState ?? 'not forwarded');
  return `#${c.id} ${c.receivedAt} ${c.sourceName ?? 'unknown source'}: ${what} from ${who} → ${outcome}`;
}

function sourceLine(s: Source): string {
  const urls = s.webhooks.urls.length;
  return `${s.name} (id ${s.id}, write key ${s.writeKey}): Webhooks ${s.webhooks.enabled ? 'on' : 'off'}, ${urls} URL${urls === 1 ? '' : 's'}`;
}

export function registerReadTools(server: McpServer, ctx: ToolContext): void {
  const { ops } = ctx;
  const sourceIdOf = (source: string | undefined, sourceId: string | undefined) => sourceIdFor(ops, source, sourceId);

  server.registerTool(
    'get_lab',
    {
      title: 'The lab',
      description: "The lab's version, the collector URL to send calls to, its sources with their write keys, and whether it can store calls now.",
      inputSchema: z.strictObject({}),
      outputSchema: z.object({
        version: z.string(),
        collectorUrl: z.string(),
        uiUrl: z.string().nullable(),
        storage: storageOutput,
        calls: z.number().int(),
        pendingDeliveries: z.number().int(),
        sources: z.array(z.object({ id: z.string(), name: z.string(), writeKey: z.string(), webhooksEnabled: z.boolean(), urls: z.array(z.string()) })),
      }),
      annotations: READ_ONLY,
    },
    () =>
      guarded(ctx, async () => {
        const [health, sources] = await Promise.all([ops('health', {}), ops('listSources', {})]);
        const lab = {
          version: health.version,
          collectorUrl: health.collectorUrl,
          uiUrl: ctx.uiBase,
          storage: health.storage,
          calls: health.calls,
          pendingDeliveries: health.pendingDeliveries,
          sources: sources.map((s) => ({ id: s.id, name: s.name, writeKey: s.writeKey, webhooksEnabled: s.webhooks.enabled, urls: s.webhooks.urls.map((u) => u.url) })),
        };
        const text = [
          `Webhook Lab ${lab.version}: collector ${lab.collectorUrl}; ${lab.calls} calls stored, ${lab.pendingDeliveries} deliveries unfinished; storage ${lab.storage.ok ? 'ok' : `failing: ${lab.storage.message}`}.`,
          ...sources.map((s) => `- ${sourceLine(s)}`),
        ].join('\n');
        return answer(ctx, lab, text);
      }),
  );

  server.registerTool(
    'list_sources',
    {
      title: 'Sources',
      description: 'The sources with their write keys and Webhooks settings (secrets masked), a page at a time (`next`: the offset of the next page).',
      inputSchema: z.strictObject({ offset: z.number().int().min(0).default(0), limit: z.number().int().min(1).max(MAX_PAGE).default(MAX_PAGE) }),
      outputSchema: z.object({ items: z.array(sourceOutput), total: z.number().int(), next: z.number().int().nullable() }),
      annotations: READ_ONLY,
    },
    (input) =>
      guarded(ctx, async () => {
        const all = await ops('listSources', {});
        const items = all.slice(input.offset, input.offset + input.limit);
        const next = input.offset + items.length < all.length ? input.offset + items.length : null;
        return answer(ctx, { items, total: all.length, next }, [`${all.length} sources${next === null ? '' : ` (this page: ${items.length}; next offset ${next})`}:`, ...items.map((s) => `- ${sourceLine(s)}`)].join('\n'));
      }),
  );

  server.registerTool(
    'list_calls',
    {
      title: 'Calls',
      description:
        'Calls the lab received, newest first, with the filters of GET /api/messages (sourceId, type, status, urlState, userId, q, body, violations), at most 100 a page; pass `next` as `before` for the next page. `source`: a source by its name, id or write key.',
      inputSchema: listMessagesSchema.extend({ limit: z.coerce.number().int().min(1).max(MAX_PAGE).default(25), source: SOURCE_NAMED }),
      outputSchema: pageOutput(callSummaryOutput),
      annotations: READ_ONLY,
    },
    (input) =>
      guarded(ctx, async () => {
        const { source, ...filters } = input;
        const sourceId = await sourceIdOf(source, filters.sourceId);
        if (typeof sourceId === 'object') return failure(ctx, sourceId.problem);
        const page = await ops('listMessages', { ...filters, sourceId });
        const text = [`${page.total} calls match; ${page.items.length} here${page.next === null ? '' : ` (next page: before ${page.next})`}:`, ...page.items.map((c) => `- ${callLine(c)}`)].join('\n');
        return answer(ctx, { ...page }, text);
      }),
  );

  server.registerTool(
    'get_call',
    {
      title: 'A call',
      description:
        "One call's detail by its id (list_calls gives it): as received and normalized, its deliveries with every attempt's facts (request, signature, answer, timing, errors), per-URL outcomes, `forwarding` (why it was or was not forwarded) and tracking plan violations; `signatureVerdicts`: what the lab's own mock receivers found checking each attempt's signatures. For each URL its first attempt and its last four are shown (`attemptsCut` says where more were made); a detail over 32 KB of JSON is cut further (`cut` says how). verify_signature checks an attempt by `callId` and `attemptId`.",
      inputSchema: api.getMessage.input,
      outputSchema: z.object({ call: api.getMessage.output, signatureVerdicts: z.array(signatureVerdictOutput), attemptsCut: attemptsCutOutput, cut: z.array(z.string()) }),
      annotations: READ_ONLY,
    },
    (input) =>
      guarded(ctx, async () => {
        const whole = await ops('getMessage', input);
        const e = explainCall(whole);
        const { detail, attemptsCut, cut } = fitDetail(whole);
        // From the bytes as sent (an older attempt's are cut here), for the attempts shown.
        const shownIds = new Set(detail.deliveries.flatMap((d) => d.attempts.map((a) => a.id)));
        const verdicts = (await signatureVerdicts(ops, whole)).filter((v) => shownIds.has(v.attemptId));
        const checked = verdicts.map((v) => ` Receiver ${JSON.stringify(v.receiver)} found X-Signature ${v.signature}, webhook-signature ${v.standardWebhooks}${v.reason ? ` (${v.reason})` : ''}.`).join('');
        const text = `Call #${detail.call.id} (${detail.call.type}, ${detail.call.status}): ${e.outcome}. ${e.explanation.join(' ')}${checked}${attemptsCutText(attemptsCut, cut)}`;
        return answer(ctx, { call: detail, signatureVerdicts: verdicts, attemptsCut, cut }, text, detail.call.id);
      }),
  );

  server.registerTool(
    'explain_call',
    {
      title: 'Why a call went where it went',
      description: 'Why a call was not forwarded, failed, expired or is retrying (or that it was delivered), from the facts the lab keeps: drop reason, forwarding verdict, tracking plan, each delivery and its last attempt.',
      inputSchema: api.getMessage.input,
      outputSchema: explanationOutput,
      annotations: READ_ONLY,
    },
    (input) =>
      guarded(ctx, async () => {
        const e = explainCall(await ops('getMessage', input));
        return answer(ctx, e, `Call #${e.id}: ${e.outcome}.\n${e.explanation.map((l) => `- ${l}`).join('\n')}`, e.id);
      }),
  );

  server.registerTool(
    'list_violations',
    {
      title: 'Tracking plan violations',
      description: 'Calls their source\'s tracking plan found violations in (or blocked), newest first, each with what the plan found; pass `next` as `before` for the next page.',
      inputSchema: z.strictObject({
        sourceId: z.string().optional(),
        source: SOURCE_NAMED,
        before: listMessagesSchema.shape.before,
        limit: z.coerce.number().int().min(1).max(MAX_VIOLATIONS_PAGE).default(10),
      }),
      outputSchema: z.object({
        items: z.array(
          z.object({
            id: z.number().int(),
            receivedAt: z.string(),
            type: z.string(),
            label: z.string().nullable(),
            sourceName: z.string().nullable(),
            plan: z.string().nullable(),
            blocked: z.string().nullable(),
            violations: z.array(z.looseObject({ kind: z.string(), path: z.string(), message: z.string() })),
          }),
        ),
        total: z.number().int(),
        next: z.number().int().nullable(),
      }),
      annotations: READ_ONLY,
    },
    (input) =>
      guarded(ctx, async () => {
        const sourceId = await sourceIdOf(input.source, input.sourceId);
        if (typeof sourceId === 'object') return failure(ctx, sourceId.problem);
        const page = await ops('listMessages', { violations: true, sourceId, before: input.before, limit: input.limit });
        const details: CallDetail[] = [];
        for (const c of page.items) details.push(await ops('getMessage', { id: c.id }));
        const items = details.map((d) => ({
          id: d.call.id,
          receivedAt: d.call.receivedAt,
          type: d.call.type,
          label: d.call.label,
          sourceName: d.call.sourceName,
          plan: d.planCheck?.planName ?? null,
          blocked: d.planCheck?.blocked ?? null,
          violations: d.violations ?? [],
        }));
        const text = [
          `${page.total} calls with violations; ${items.length} here${page.next === null ? '' : ` (next page: before ${page.next})`}:`,
          ...items.map((i) => `- #${i.id} ${i.type}${i.label ? ` ${JSON.stringify(i.label)}` : ''}${i.blocked ? ' (blocked)' : ''}: ${i.violations.map((v) => `${v.path || '(the call)'}: ${v.message}`).join('; ')}`),
        ].join('\n');
        return answer(ctx, { items, total: page.total, next: page.next }, text);
      }),
  );

  server.registerTool(
    'verify_signature',
    {
      title: 'Verify a signature',
      description:
        'A body, a secret and the signatures a receiver got → which matched: Classic (X-Signature, HMAC-SHA1 hex over the body) and Standard Webhooks (webhook-signature over `webhook-id.webhook-timestamp.body`), and what was signed. With `source`, every version of its secrets the lab keeps is tried and the matching version named (after a rotation, the old one still signs for the rotation window).',
      inputSchema: signatureOps.verifySignature.input,
      outputSchema: signatureOps.verifySignature.output,
      annotations: READ_ONLY,
    },
    (input) =>
      guarded(ctx, async () => {
        const r = await ops('verifySignature', input);
        const by = (m: { version: number | null; current: boolean; given: boolean } | null) =>
          m === null ? 'no secret tried' : m.version === null ? 'the secret given' : `version ${m.version}${m.current ? ' (current)' : ' (not current)'}${m.given ? ', the secret given' : ''}`;
        const lines: string[] = [];
        if (r.classic) lines.push(`X-Signature: ${r.classic.state}${r.classic.matched ? `, made with ${by(r.classic.matched)}` : r.classic.reason ? `: ${r.classic.reason}` : ''}. Signed: ${r.classic.signed}.`);
        if (r.standardWebhooks) {
          const sw = r.standardWebhooks;
          lines.push(`webhook-signature: ${sw.state}${sw.reason ? ` (${sw.reason})` : ''}. Signed: ${sw.signed}.`);
          sw.signatures.forEach((s, i) => lines.push(`- signature ${i + 1}: ${s.matched ? `matches ${by(s.matched)}` : 'matches no secret tried'}`));
        }
        return answer(ctx, r, lines.join('\n'));
      }),
  );
}
