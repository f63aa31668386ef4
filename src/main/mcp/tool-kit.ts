import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { LabApi } from '../testing/transport';
import type { Source } from '../../shared/types';
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
  return ctx.uiBase ? `${ctx.uiBase}/#/inspector/${id}` : `call ${id} in the lab's Inspector (or GET /api/messages/${id})`;
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
      if (err instanceof LabApiError) return failure(ctx, err.message);
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
