import {
  DEFAULT_FAILURE_STATUS,
  DEFAULT_STATUS,
  SUCCESS_STATUS,
  type MockBehavior,
  type MockResponseRecord,
} from '../../../../shared/mock-receiver.schema';
import { mulberry32, randomSeed, type Random } from '../../seeded-random';

// The pure part of a mock receiver: given its behavior and its running state, what to do with the
// next request. Precedence (documented in docs/mock-receivers.md):
//  1. failFirst, then failPercent, decide whether this request is a failure (only when either is set);
//  2. the failure answer is reset if set, else hang if set, else `status` (default 500);
//     a passing request is answered 200;
//  3. without failFirst/failPercent every request gets reset, else hang, else `status` (default 200);
//  4. the delay (fixed or random) applies before every answer or reset; a hang has no delay;
//  5. body and headers apply to every answer.

export interface BehaviorState {
  /** Requests seen since the state was created (failFirst counts against it). */
  requests: number;
  /** Pass/fail stream for failPercent; consumed only by requests past failFirst. */
  gate: Random;
  /** Separate stream, so random delays do not shift the pass/fail sequence. */
  delay: Random;
}

export interface Decision extends Pick<MockResponseRecord, 'action' | 'status' | 'delayMs' | 'failed' | 'headers' | 'body'> {
  seq: number;
}

export function createBehaviorState(behavior: MockBehavior, seedSource: () => number = randomSeed): BehaviorState {
  const seed = behavior.seed ?? seedSource();
  return { requests: 0, gate: mulberry32(seed), delay: mulberry32((seed ^ 0x9e3779b9) >>> 0) };
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
  if (action !== 'status') return { seq, action, status: null, delayMs, failed, headers: null, body: null };

  const status = !gated ? (behavior.status ?? DEFAULT_STATUS) : failed ? (behavior.status ?? DEFAULT_FAILURE_STATUS) : SUCCESS_STATUS;
  const body = behavior.body ?? JSON.stringify({ ok: status < 400, receiver: receiverName, seq });
  return { seq, action, status, delayMs, failed, headers: responseHeaders(behavior.headers ?? {}, body), body };
}

function pickDelay(behavior: MockBehavior, random: Random): number {
  if (behavior.delayMs !== undefined) return behavior.delayMs;
  if (!behavior.delay) return 0;
  const { minMs, maxMs } = behavior.delay;
  return minMs + Math.floor(random() * (maxMs - minMs + 1));
}

function responseHeaders(headers: Record<string, string>, body: string): Record<string, string> {
  if (Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) return { ...headers };
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
