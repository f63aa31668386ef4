import { z } from 'zod';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { LabApi } from '../testing/transport';
import type { Source } from '../../shared/types';
import { OP_NAMES } from '../../shared/api.contract';
import { LabApiError } from '../testing/transport';
import { redact, redactText, type RedactOptions } from './redact';

// What every tool of the MCP server shares: the operations it calls (in this process or over a lab's
// control API), how its answers are made (structured content with a short text, redacted), and the
// annotations the issue fixes for each kind of tool.

export interface ToolContext {
  /** The API contract's operations: the engine's handlers, or a running lab's control API. */
  ops: LabApi;
  redaction: Omit<RedactOptions, 'whereWhole'>;
  /** The web UI's root (no trailing slash) for a call's permalink; null when the lab has none. */
  uiBase: string | null;
  /** How often a wait (wait_for_call, check_receiver) looks again. */
  pollMs: number;
  /** Aborted when the lab stops (see guarded). */
  stopping?: AbortSignal;
}

/** Reads only: the lab is left as it was. */
export const READ_ONLY: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
/** Adds to the lab (a call) and reaches nothing outside it. */
export const WRITES_LAB: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
/** Sends requests to receivers: outside the lab. */
export const REACHES_RECEIVERS: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };

/** Where a call can be seen whole: its permalink in the lab's UI, else how to read it. */
export function whereCall(ctx: ToolContext, id: number | undefined): string | undefined {
  if (id === undefined) return undefined;
  // A lab of the server's own has no UI or control API to point at (found by a review).
  return ctx.uiBase ? `${ctx.uiBase}/#/inspector/${id}` : `stored with call ${id}, but this lab has no UI to show it in`;
}

/** A tool's answer: `structured` (redacted) as structuredContent, the short text first, then the JSON for clients that read text only. */
export function answer(ctx: ToolContext, structured: Record<string, unknown>, text: string, callId?: number): CallToolResult {
  const o = { ...ctx.redaction, whereWhole: whereCall(ctx, callId) };
  const safe = redact(structured, o);
  return {
    structuredContent: safe,
    content: [
      { type: 'text', text: redactText(text, o) },
      { type: 'text', text: JSON.stringify(safe) },
    ],
  };
}

/** A tool that could not do what was asked: isError, with the reason in words (redacted). */
export function failure(ctx: ToolContext, message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: redactText(message, { ...ctx.redaction }) }] };
}

/**
 * A refusal of the lab in the tools' words: without the operation's name it begins with (getMessage:),
 * and a stored call is a call, as the tools say, not a "message" as the control API's paths do.
 */
export function inToolWords(message: string): string {
  const op = /^([a-z][A-Za-z]+): /.exec(message)?.[1];
  const rest = op !== undefined && (OP_NAMES as string[]).includes(op) ? message.slice(op.length + 2) : message;
  return rest.replace(/\bmessage (-?\d+)/g, 'call $1');
}

/** What a tool call still under way answers when the lab stops. */
export const STOPPING = 'the lab is stopping: this was not finished; call it again once the lab is back';

/**
 * Runs a tool's body: a refusal of the lab (LabApiError: not found, invalid input, unreachable) or
 * anything else that went wrong becomes a tool error the agent reads (redacted, as every answer is).
 * When the lab stops meanwhile it answers that at once, so a wait of 10 s (wait_for_call) gets an
 * answer before the session's stream is closed rather than an empty stream.
 */
export async function guarded(ctx: ToolContext, run: () => Promise<CallToolResult>): Promise<CallToolResult> {
  const stopping = ctx.stopping;
  if (stopping?.aborted) return failure(ctx, STOPPING);
  let onStop: (() => void) | undefined;
  const stopped = new Promise<CallToolResult>((resolve) => {
    onStop = () => resolve(failure(ctx, STOPPING));
    stopping?.addEventListener('abort', onStop, { once: true });
  });
  const work = (async () => {
    try {
      return await run();
    } catch (err) {
      if (stopping?.aborted) return failure(ctx, STOPPING);
      if (err instanceof LabApiError) return failure(ctx, inToolWords(err.message));
      return failure(ctx, `the lab could not do it: ${err instanceof Error ? err.message : String(err)}`);
    }
  })();
  try {
    return await Promise.race([work, stopped]);
  } finally {
    if (onStop) stopping?.removeEventListener('abort', onStop);
  }
}

/** A source as an agent names it: its name, id or write key; else why not, listing the names there are. */
export async function findSource(ops: LabApi, given: string): Promise<Source | string> {
  const sources = await ops('listSources', {});
  return sources.find((s) => s.name === given || s.id === given || s.writeKey === given) ?? `no source named ${JSON.stringify(given)} (sources: ${sources.map((s) => s.name).join(', ') || 'none'})`;
}

/** A source as an agent names it (the control API's filters take its id only). */
export const SOURCE_NAMED = z.string().min(1).max(200).optional().describe("a source's name, id or write key");

/**
 * The sourceId to filter by: the one `source` names, or the one given; both given must agree. A
 * deleted source's calls stay (list_calls finds them by its id); `mustExist` refuses such an id
 * where nothing can be done with them (retry_failed: "0 match" said nothing of why).
 */
export async function sourceIdFor(ops: LabApi, source: string | undefined, sourceId: string | undefined, mustExist = false): Promise<string | undefined | { problem: string }> {
  if (source === undefined && (sourceId === undefined || !mustExist)) return sourceId;
  if (source === undefined) {
    const known = await ops('listSources', {});
    return known.some((s) => s.id === sourceId) ? sourceId : { problem: `no source has id ${JSON.stringify(sourceId)}: a deleted source's calls are not sent again (sources: ${known.map((s) => `${s.name} ${s.id}`).join(', ') || 'none'})` };
  }
  const found = await findSource(ops, source);
  if (typeof found === 'string') return { problem: found };
  if (sourceId !== undefined && sourceId !== found.id) return { problem: `source ${JSON.stringify(source)} is ${found.id}, not sourceId ${sourceId}: give one of them` };
  return found.id;
}
