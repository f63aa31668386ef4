import type { AttemptTrigger, Settings, Source, DeliveryState } from '../../../shared/types';
import { nextRetry } from '../../../shared/retry-schedule';
import { buildRequestHeaders } from '../../../shared/webhook-request';
import { currentRequest } from './request-headers';
import { classify, type Classification } from './classify';
import type { HttpSender, SendResult } from './http-sender';
import type { ActiveDelivery, DeliveryUpdate, NewAttempt } from '../store/delivery.types';
import { urlStatesAfter, type StoredUrlState } from '../store/url-states';

export interface RoundResult {
  attempts: NewAttempt[];
  classifications: Classification[];
}

/**
 * Sends one round: every given URL in parallel, the same bytes, each with its own static headers. A
 * scheduled round resends the delivery's own request (User-Agent and signature fixed at creation); a
 * manual or replay round is the one way to send with the source's current secret and settings.
 */
export async function sendRound(
  sender: HttpSender,
  d: ActiveDelivery,
  urlIndexes: number[],
  source: Source | undefined,
  settings: Settings,
  round: number,
  trigger: AttemptTrigger,
  now: () => number,
  bodyOverride?: Buffer,
  /** Each URL as it answers, before the round is over (what the inspector shows in flight). */
  onAnswer?: (urlIndex: number, r: SendResult, c: Classification) => void,
): Promise<RoundResult> {
  const body = bodyOverride ?? d.body;
  const { userAgent, signature } =
    trigger === 'scheduled' && d.frozen ? d.frozen : currentRequest(settings.userAgentProduct, source?.webhooks.sharedSecret, body);
  const results = await Promise.all(
    urlIndexes.map(async (i) => {
      const target = d.urls[i];
      const headers = buildRequestHeaders({ userAgent, signature, urlHeaders: target.headers, body });
      const r = await sender.send({ url: target.url, headers, body });
      onAnswer?.(i, r, classify(r, now()));
      return { i, target, headers, signature, r };
    }),
  );
  const t = now();
  const attempts: NewAttempt[] = [];
  const classifications: Classification[] = [];
  for (const { i, target, headers, signature, r } of results) {
    const c = classify(r, t);
    classifications.push(c);
    attempts.push(toAttempt(d.id, round, i, target.url, trigger, headers, bodyOverride && !bodyOverride.equals(d.body) ? bodyOverride : null, signature, r, c));
  }
  return { attempts, classifications };
}

/** The delivery's URL states once this round is recorded with the delivery's new state. */
export function roundUrlStates(prev: StoredUrlState[], round: RoundResult, after: Pick<DeliveryUpdate, 'state' | 'pendingUrls'>): StoredUrlState[] {
  const answers = round.attempts.map((a, k) => ({ urlIndex: a.urlIndex, status: a.responseStatus, outcome: round.classifications[k].outcome }));
  return urlStatesAfter(prev, answers, after);
}

function toAttempt(
  deliveryId: number,
  round: number,
  urlIndex: number,
  url: string,
  trigger: AttemptTrigger,
  requestHeaders: Record<string, string>,
  body: Buffer | null,
  signature: string | null,
  r: SendResult,
  c: Classification,
): NewAttempt {
  return {
    deliveryId,
    round,
    urlIndex,
    url,
    trigger,
    startedAt: r.startedAt,
    durationMs: r.durationMs,
    requestHeaders,
    body,
    signature,
    responseStatus: r.status,
    responseHeaders: r.responseHeaders,
    responseBody: r.responseBody,
    responseTruncated: r.responseTruncated,
    errorCode: r.errorCode,
    errorMessage: r.errorMessage ?? (c.outcome === 'success' ? null : c.reason),
    timedOut: r.timedOut,
    outcome: c.outcome,
    timing: r.timing,
  };
}

/**
 * The state machine of SPEC §4 after a scheduled round: any success → delivered (the URLs that
 * failed in this round are not retried); otherwise the next round goes to the URLs whose failure
 * is retryable, at the schedule's next delay divided by the time-warp factor, unless the window is over.
 */
export function afterRound(
  d: ActiveDelivery,
  round: RoundResult,
  settings: Settings,
  roundStartedAt: number,
  finishedAt: number,
  random: () => number,
): DeliveryUpdate {
  const u = stateAfterRound(d, round, settings, roundStartedAt, finishedAt, random);
  return { ...u, urlStates: roundUrlStates(d.urlStates, round, u) };
}

function stateAfterRound(
  d: ActiveDelivery,
  round: RoundResult,
  settings: Settings,
  roundStartedAt: number,
  finishedAt: number,
  random: () => number,
): Omit<DeliveryUpdate, 'urlStates'> {
  const roundNo = d.round + 1;
  const durationMs = Math.max(0, finishedAt - roundStartedAt);
  const base = {
    id: d.id,
    round: roundNo,
    attemptCount: d.attemptCount + round.attempts.length,
    firstAttemptAt: d.firstAttemptAt ?? roundStartedAt,
    lastAttemptAt: roundStartedAt,
    lastDurationMs: Math.max(...round.attempts.map((a) => a.durationMs)),
  };
  const lastError = summarize(round);
  if (round.classifications.some((c) => c.outcome === 'success')) {
    return { ...base, state: 'delivered', pendingUrls: [], nextAttemptAt: null, nextSimOffsetMs: null, simElapsedMs: d.simElapsedMs + durationMs, deliveredAt: finishedAt, lastError: null };
  }
  const retryable = round.attempts.filter((_, k) => round.classifications[k].outcome === 'retryable').map((a) => a.urlIndex);
  if (retryable.length === 0) {
    return end(base, 'failed', d.simElapsedMs + durationMs, lastError);
  }
  const retryAfter = Math.max(0, ...round.classifications.map((c) => c.retryAfterMs ?? 0));
  // Simulated time: the delays are warped, the attempt itself took real time.
  const elapsed = d.simElapsedMs + durationMs;
  const next = nextRetry(settings.retrySchedule, roundNo, elapsed, random, retryAfter);
  if (!next) return end(base, 'expired', elapsed, `${lastError}; retry window of ${formatWindow(settings.retrySchedule.windowMs)} is over`);
  return {
    ...base,
    state: 'retrying',
    pendingUrls: retryable,
    nextAttemptAt: finishedAt + Math.round(next.delayMs / settings.timeScale),
    nextSimOffsetMs: next.offsetMs,
    simElapsedMs: next.offsetMs,
    deliveredAt: null,
    lastError,
  };
}

function end(base: Omit<DeliveryUpdate, 'state' | 'pendingUrls' | 'nextAttemptAt' | 'nextSimOffsetMs' | 'simElapsedMs' | 'deliveredAt' | 'lastError' | 'urlStates'>, state: DeliveryState, sim: number, lastError: string): Omit<DeliveryUpdate, 'urlStates'> {
  return { ...base, state, pendingUrls: [], nextAttemptAt: null, nextSimOffsetMs: null, simElapsedMs: sim, deliveredAt: null, lastError };
}

function summarize(round: RoundResult): string {
  return round.attempts.map((a, k) => `${a.url}: ${round.classifications[k].reason}`).join('; ');
}

function formatWindow(ms: number): string {
  return ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : ms % 60_000 === 0 ? `${ms / 60_000} min` : `${ms / 1000} s`;
}
