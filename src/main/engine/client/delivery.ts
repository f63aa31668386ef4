import { randomUUID } from 'node:crypto';
import type { Clock } from './clock';
import { backoffDelay } from './constants';
import { buildBatchBody } from './batches';
import type { QueueEntry } from './queue-entry';
import type { Transport } from './transport';
import type { BatchResult, RetryEvent } from './types';
import { formatTimestamp } from '../../../shared/timestamp';

export interface DeliveryContext {
  transport: Transport;
  url: string;
  headers: Record<string, string>;
  clock: Clock;
  maxRetries: number;
  httpTimeout: number;
  onRetry(event: RetryEvent): void;
}

type AttemptOutcome =
  | { kind: 'ok'; status: number }
  | { kind: 'retry'; status: number | null; reason: string; cause?: unknown }
  | { kind: 'drop'; status: number; reason: string };

const snippet = (body: string) => (body.length > 200 ? `${body.slice(0, 200)}…` : body);

/** SPEC §5 decision: 5xx, 429 and no response are worth retrying; any other non-2xx never will succeed. */
export function classifyStatus(status: number): 'ok' | 'retry' | 'drop' {
  if (status >= 200 && status < 300) return 'ok';
  if (status >= 500 || status === 429) return 'retry';
  return 'drop';
}

async function attempt(ctx: DeliveryContext, body: Buffer): Promise<AttemptOutcome> {
  try {
    const res = await ctx.transport.send({ url: ctx.url, headers: ctx.headers, body, timeoutMs: ctx.httpTimeout });
    const kind = classifyStatus(res.status);
    if (kind === 'ok') return { kind, status: res.status };
    const reason = `HTTP ${res.status}${res.body ? `: ${snippet(res.body)}` : ''}`;
    return { kind, status: res.status, reason };
  } catch (err) {
    // A transport may reject with anything, null and undefined included: still a failed attempt, never a throw
    // here (that would leave the batch counted in flight for ever, neither sent nor dropped).
    const e = (typeof err === 'object' && err !== null ? err : {}) as { code?: string; message?: string; cause?: { code?: string } };
    const code = e.code ?? e.cause?.code;
    return { kind: 'retry', status: null, reason: `${code ? `${code}: ` : ''}${e.message ?? String(err)}`, cause: err };
  }
}

function sleep(clock: Clock, ms: number): Promise<void> {
  // Not unref'd: a caller awaiting close() must not see the process exit in the middle of a backoff.
  return new Promise((resolve) => clock.setTimeout(resolve, ms));
}

export interface DeliveredBatch extends BatchResult {
  messages: QueueEntry[];
  cause?: unknown;
}

/** Send one batch, retrying with backoff; resolves (never rejects) once it is accepted or dropped. */
export async function deliverBatch(ctx: DeliveryContext, messages: QueueEntry[]): Promise<DeliveredBatch> {
  const batchId = randomUUID();
  const started = ctx.clock.now();
  // Serialized once: every retry sends the same bytes, with the sentAt of the first attempt.
  const body = buildBatchBody(messages, batchId, formatTimestamp(started));
  const bytes = body.length;
  let retries = 0;
  for (;;) {
    const outcome = await attempt(ctx, body);
    const base = { batchId, count: messages.length, bytes, retries, messages };
    if (outcome.kind === 'ok') {
      const end = ctx.clock.now();
      return { ...base, status: outcome.status, ok: true, durationMs: end - started, error: null, at: formatTimestamp(end) };
    }
    if (outcome.kind === 'retry' && retries < ctx.maxRetries) {
      retries++;
      const delayMs = backoffDelay(retries);
      ctx.onRetry({
        batchId,
        count: messages.length,
        bytes,
        retry: retries,
        maxRetries: ctx.maxRetries,
        delayMs,
        status: outcome.status,
        reason: outcome.reason,
      });
      await sleep(ctx.clock, delayMs);
      continue;
    }
    const end = ctx.clock.now();
    const error =
      outcome.kind === 'drop'
        ? `${outcome.reason} (not retried)`
        : `${outcome.reason} (gave up after ${retries} ${retries === 1 ? 'retry' : 'retries'})`;
    const cause = outcome.kind === 'retry' ? outcome.cause : undefined;
    return { ...base, status: outcome.status, ok: false, durationMs: end - started, error, at: formatTimestamp(end), cause };
  }
}
