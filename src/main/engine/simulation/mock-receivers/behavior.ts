import {
  DEFAULT_FAILURE_STATUS,
  DEFAULT_ITEM_FAILURE_STATUS,
  DEFAULT_STATUS,
  ITEMS_ALL_OK_STATUS,
  ITEMS_MIXED_STATUS,
  SUCCESS_STATUS,
  type MockBehavior,
  type MockResponseRecord,
} from '../../../../shared/mock-receiver.schema';
import { mulberry32, randomSeed, type Random } from '../../seeded-random';
import { headerValue } from '../../../../shared/header-value';

// The pure part of a mock receiver: given its behavior and its running state, what to do with the
// next request. Precedence (documented in docs/mock-receivers.md):
//  1. failFirst, then failPercent, decide whether this request is a failure (only when either is set);
//  2. the failure answer is reset if set, else hang if set, else `status` (default 500);
//     a passing request is answered 200;
//  3. without failFirst/failPercent every request gets reset, else hang, else `status` (default 200);
//  4. the delay (fixed or random) applies before every answer or reset; a hang has no delay;
//  5. body and headers apply to every answer;
//  6. with itemStatuses/itemFailPercent, an answer that is not a failure (every answer, without
//     failFirst/failPercent) is a per-item answer, made once the body is in (answerItems).

export interface BehaviorState {
  /** Requests seen since the state was created (failFirst counts against it). */
  requests: number;
  /** Pass/fail stream for failPercent; consumed only by requests past failFirst. */
  gate: Random;
  /** Separate stream, so random delays do not shift the pass/fail sequence. */
  delay: Random;
  /** Per-item pass/fail for itemFailPercent, drawn item by item in the order bodies complete. */
  items: Random;
  /** messageIds accepted, for rejectDuplicates (screening.ts). */
  seen: Set<string>;
}

export interface Decision extends Pick<MockResponseRecord, 'action' | 'status' | 'delayMs' | 'failed' | 'headers' | 'body'> {
  seq: number;
  /** A per-item answer: status and body are made from the request body when it is in (answerItems). */
  perItem: boolean;
}

/** A per-item answer: the HTTP status, the JSON array body and each item's status. */
export interface ItemsAnswer {
  status: number;
  body: string;
  itemStatuses: number[];
}

export function createBehaviorState(behavior: MockBehavior, seedSource: () => number = randomSeed): BehaviorState {
  const seed = behavior.seed ?? seedSource();
  return { requests: 0, gate: mulberry32(seed), delay: mulberry32((seed ^ 0x9e3779b9) >>> 0), items: mulberry32((seed ^ 0x85ebca6b) >>> 0), seen: new Set() };
}

export function decide(behavior: MockBehavior, state: BehaviorState, receiverName: string): Decision {
  const seq = ++state.requests;
  const gated = behavior.failFirst !== undefined || behavior.failPercent !== undefined;
  let failed = false;
  if (behavior.failFirst !== undefined && seq <= behavior.failFirst) failed = true;
  else if (behavior.failPercent !== undefined) failed = state.gate() * 100 < behavior.failPercent;

  const special = !gated || failed;
  const action: Decision['action'] = special && behavior.reset ? 'reset' : special && behavior.hang ? 'hang' : 'status';
  const delayMs = action === 'hang' ? 0 : pickDelay(behavior, state.delay);
  if (action !== 'status') return { seq, action, status: null, delayMs, failed, headers: null, body: null, perItem: false };

  if (!failed && isPerItem(behavior)) {
    // Status and body wait for the request body; the headers are known (the body will be JSON).
    return { seq, action, status: null, delayMs, failed, headers: responseHeaders(behavior.headers ?? {}, '[]'), body: null, perItem: true };
  }
  const status = !gated ? (behavior.status ?? DEFAULT_STATUS) : failed ? (behavior.status ?? DEFAULT_FAILURE_STATUS) : SUCCESS_STATUS;
  const body = behavior.body ?? JSON.stringify({ ok: status < 400, receiver: receiverName, seq });
  return { seq, action, status, delayMs, failed, headers: responseHeaders(behavior.headers ?? {}, body), body, perItem: false };
}

export function isPerItem(behavior: MockBehavior): boolean {
  return behavior.itemStatuses !== undefined || behavior.itemFailPercent !== undefined;
}

/**
 * The per-item answer to a request body (null when it could not be read whole): a JSON array gets
 * one status per item, item i from itemStatuses[i % length] or, with itemFailPercent, from the
 * seeded stream (failing: itemFailStatus, default 500; passing: 200). The HTTP status is batchStatus,
 * or 200 when every item got a 2xx and 207 Multi-Status when any did not. Anything else (one event,
 * not JSON, too large) is one item, answered with that item's status.
 */
export function answerItems(behavior: MockBehavior, state: BehaviorState, body: Buffer | null): ItemsAnswer {
  let items: unknown[] | null = null;
  if (body !== null) {
    try {
      const parsed: unknown = JSON.parse(body.toString('utf8'));
      if (Array.isArray(parsed)) items = parsed;
    } catch {
      // not JSON: one item
    }
  }
  const count = items === null ? 1 : items.length;
  const itemStatuses: number[] = [];
  for (let i = 0; i < count; i++) itemStatuses.push(itemStatus(behavior, state, i));
  if (items === null) return { status: itemStatuses[0], body: JSON.stringify({ status: itemStatuses[0] }), itemStatuses };
  const allOk = itemStatuses.every((s) => s >= 200 && s < 300);
  const status = behavior.batchStatus ?? (allOk ? ITEMS_ALL_OK_STATUS : ITEMS_MIXED_STATUS);
  return { status, body: JSON.stringify(itemStatuses.map((s) => ({ status: s }))), itemStatuses };
}

function itemStatus(behavior: MockBehavior, state: BehaviorState, i: number): number {
  const cycle = behavior.itemStatuses;
  if (cycle !== undefined) return cycle[i % cycle.length];
  const fails = state.items() * 100 < (behavior.itemFailPercent ?? 0);
  return fails ? (behavior.itemFailStatus ?? DEFAULT_ITEM_FAILURE_STATUS) : SUCCESS_STATUS;
}

function pickDelay(behavior: MockBehavior, random: Random): number {
  if (behavior.delayMs !== undefined) return behavior.delayMs;
  if (!behavior.delay) return 0;
  const { minMs, maxMs } = behavior.delay;
  return minMs + Math.floor(random() * (maxMs - minMs + 1));
}

function responseHeaders(headers: Record<string, string>, body: string): Record<string, string> {
  if (headerValue(headers, 'content-type') !== undefined) return { ...headers };
  return { 'content-type': looksLikeJson(body) ? 'application/json' : 'text/plain; charset=utf-8', ...headers };
}

function looksLikeJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
