import type { AttemptTrigger, DeliveryState, Settings } from '../../../shared/types';
import { MAX_ROUNDS, nextRetry } from '../../../shared/retry-schedule';
import type { ActiveDelivery, DeliveryUpdate, NewAttempt } from './delivery.types';
import { canceledUrlStates, urlStatesAfter, type StoredUrlState } from './url-states';

// A delivery's life (issue 41): every change of a delivery's state is chosen here, from what
// happened to it, and nowhere else (tests/unit/delivery-transition.test.ts holds the table, and
// fails on a state written elsewhere). The ledger writes what this returns; the dispatcher, the
// manual rounds and the receiver check only say what happened. docs/architecture.md has the table.

/** How one URL's answer was judged (dispatcher/classify.ts makes it). */
export interface AttemptVerdict {
  outcome: 'success' | 'retryable' | 'failed';
  reason: string;
  /** From Retry-After, relative to the answer; the schedule decides whether it fits the window. */
  retryAfterMs?: number;
}

/** A round's attempts, each with its verdict, in the same order. */
export interface RoundAnswers {
  attempts: NewAttempt[];
  classifications: AttemptVerdict[];
}

/** What happened to a delivery. */
export type DeliveryEvent =
  /**
   * A round ended. `deferred`: URLs of a scheduled round that waited for a slot in their lane and were
   * not sent. `canceledWhileOut`: its delivery was canceled while the round was out.
   */
  | {
      kind: 'round';
      trigger: AttemptTrigger;
      answers: RoundAnswers;
      startedAt: number;
      finishedAt: number;
      /** The retry schedule a scheduled round's failures are retried on. */
      schedule: RetryContext;
      deferred?: number[];
      canceledWhileOut?: boolean;
    }
  /** Made but not sendable (its mapping's URL or body did not resolve): failed with the reason, never sent. */
  | { kind: 'not-sendable'; reason: string };

export interface RetryContext {
  settings: Settings;
  /** The retry schedule's jitter. */
  random: () => number;
}

/**
 * The delivery's next state and bookkeeping after `e`:
 *
 * | event | trigger | outcome | next state |
 * |---|---|---|---|
 * | round | scheduled | any URL 2xx | delivered (URLs that failed or waited are not sent again) |
 * | round | scheduled | retryable failures, window left | retrying (those URLs and the deferred ones, at the schedule's next delay) |
 * | round | scheduled | retryable failures, window over or 1,000 rounds | expired |
 * | round | scheduled | only deferred URLs left | retrying, at once |
 * | round | scheduled | non-retryable failures only | failed |
 * | round | scheduled, canceled while out | not delivered | canceled (what was sent is recorded) |
 * | round | manual, replay | any URL 2xx | delivered |
 * | round | manual, replay | none | unchanged (state, pending URLs and schedule stay) |
 * | round | probe | 2xx | delivered; else failed (one attempt, never retried) |
 * | not-sendable | — | — | failed, 0 attempts |
 *
 * A cancel (its source deleted or turned off, its calls cleared, while unfinished) changes only the
 * fields canceledFields() gives, on rows the ledger selects in bulk.
 */
export function transition(d: ActiveDelivery, e: DeliveryEvent): DeliveryUpdate {
  if (e.kind === 'not-sendable') {
    const urlStates: StoredUrlState[] = d.urls.map(() => ['failed', null, 0]);
    return {
      id: d.id, state: 'failed', pendingUrls: [], round: 0, attemptCount: 0, nextAttemptAt: null, nextSimOffsetMs: null, simElapsedMs: 0,
      firstAttemptAt: null, lastAttemptAt: null, lastDurationMs: null, deliveredAt: null, lastError: e.reason, urlStates,
    };
  }
  const u = afterAnswers(d, e);
  const update = { ...u, urlStates: roundUrlStates(d.urlStates, e.answers, u) };
  // What it sent is recorded, but nothing more is scheduled, unless it delivered the call (then the truth).
  return e.canceledWhileOut && e.trigger === 'scheduled' && update.state !== 'delivered' ? { ...update, ...canceledFields(update.urlStates, update.lastError) } : update;
}

/**
 * A delivery made for a replay asked for by hand (manual-rounds.ts): born failed with nothing pending,
 * so that if the replay fails nothing sends it again, at the next start or ever (README, Decisions).
 */
export function bornForReplay(d: ActiveDelivery): ActiveDelivery {
  return { ...d, state: 'failed', pendingUrls: [] };
}

/**
 * The state a scheduled retry's row takes while its round is out, so a start after a crash resumes
 * it (a first round is not written: it ends within milliseconds and `pending` resumes the same). A
 * canceled row keeps its state: the ledger writes this only over an unfinished one.
 */
export const OUT_STATE = 'in_flight' satisfies DeliveryState;

/** The fields a cancel sets: canceled, nothing pending or scheduled, each unfinished URL canceled. */
export function canceledFields(urlStates: StoredUrlState[], lastError: string | null): Pick<DeliveryUpdate, 'state' | 'pendingUrls' | 'nextAttemptAt' | 'nextSimOffsetMs' | 'lastError' | 'urlStates'> {
  return { state: 'canceled', pendingUrls: [], nextAttemptAt: null, nextSimOffsetMs: null, lastError, urlStates: canceledUrlStates(urlStates) };
}

/** The delivery's URL states once a round is recorded with the delivery's new state. */
function roundUrlStates(prev: StoredUrlState[], round: RoundAnswers, after: Pick<DeliveryUpdate, 'state' | 'pendingUrls'>): StoredUrlState[] {
  const answers = round.attempts.map((a, k) => ({ urlIndex: a.urlIndex, status: a.responseStatus, outcome: round.classifications[k].outcome }));
  return urlStatesAfter(prev, answers, after);
}

type Answered = Extract<DeliveryEvent, { kind: 'round' }>;

function afterAnswers(d: ActiveDelivery, e: Answered): Omit<DeliveryUpdate, 'urlStates'> {
  const { answers, startedAt, finishedAt } = e;
  const ok = answers.classifications.some((c) => c.outcome === 'success');
  const base = {
    id: d.id,
    round: d.round + 1,
    attemptCount: d.attemptCount + answers.attempts.length,
    firstAttemptAt: d.firstAttemptAt ?? startedAt,
    lastAttemptAt: startedAt,
    lastDurationMs: Math.max(...answers.attempts.map((a) => a.durationMs)),
  };
  if (e.trigger === 'probe') {
    const reason = answers.classifications.map((c) => c.reason).join('; ');
    return {
      ...base, state: ok ? 'delivered' : 'failed', pendingUrls: [], nextAttemptAt: null, nextSimOffsetMs: null, simElapsedMs: 0,
      deliveredAt: ok ? finishedAt : null, lastError: ok ? null : `probe (one attempt, never retried): ${reason}`,
    };
  }
  if (e.trigger !== 'scheduled') {
    // A manual round or a replay settles the delivery when it delivers; a failed one leaves its state (and schedule) alone.
    return {
      ...base,
      state: ok ? 'delivered' : d.state,
      pendingUrls: ok ? [] : d.pendingUrls,
      nextAttemptAt: ok ? null : d.nextAttemptAt,
      nextSimOffsetMs: null,
      simElapsedMs: d.simElapsedMs,
      deliveredAt: ok ? finishedAt : null,
      lastError: ok ? null : answers.classifications.map((c) => c.reason).join('; '),
    };
  }
  return afterScheduled(d, e, base);
}

/**
 * The state machine of SPEC §4 after a scheduled round: any success → delivered (the URLs that
 * failed in this round are not retried, nor sent if they were still waiting for a slot in their
 * receiver's lane); otherwise the next round goes to the URLs whose failure is retryable, at the
 * schedule's next delay divided by the time-warp factor, unless the window is over, together with
 * the URLs that waited for a slot (`deferred`, dispatcher/lanes.ts) — at once when nothing failed
 * retryably, since they have not had their turn.
 */
function afterScheduled(d: ActiveDelivery, e: Answered, base: Omit<DeliveryUpdate, 'state' | 'pendingUrls' | 'nextAttemptAt' | 'nextSimOffsetMs' | 'simElapsedMs' | 'deliveredAt' | 'lastError' | 'urlStates'>): Omit<DeliveryUpdate, 'urlStates'> {
  const { answers, startedAt, finishedAt } = e;
  const deferred = e.deferred ?? [];
  const { settings, random } = e.schedule;
  const durationMs = Math.max(0, finishedAt - startedAt);
  const lastError = summarize(answers);
  if (answers.classifications.some((c) => c.outcome === 'success')) {
    return { ...base, state: 'delivered', pendingUrls: [], nextAttemptAt: null, nextSimOffsetMs: null, simElapsedMs: d.simElapsedMs + durationMs, deliveredAt: finishedAt, lastError: null };
  }
  const retryable = answers.attempts.filter((_, k) => answers.classifications[k].outcome === 'retryable').map((a) => a.urlIndex);
  if (retryable.length === 0 && deferred.length > 0) {
    // Only URLs that never had a slot are left: they go next, now (the dispatcher queues them in their lane).
    return { ...base, state: 'retrying', pendingUrls: [...deferred].sort((a, b) => a - b), nextAttemptAt: finishedAt, nextSimOffsetMs: null, simElapsedMs: d.simElapsedMs + durationMs, deliveredAt: null, lastError };
  }
  if (retryable.length === 0) return end(base, 'failed', d.simElapsedMs + durationMs, lastError);
  const retryAfter = Math.max(0, ...answers.classifications.map((c) => c.retryAfterMs ?? 0));
  // Simulated time: the delays are warped, the attempt itself took real time.
  const elapsed = d.simElapsedMs + durationMs;
  const next = nextRetry(settings.retrySchedule, base.round, elapsed, random, retryAfter);
  if (!next) {
    const window = formatWindow(settings.retrySchedule.windowMs);
    // The receiver's Retry-After, not the schedule, ended it: the window still had room for the
    // schedule's own delay (its shortest, jitter at its low end; no draw taken from random).
    const byRetryAfter = retryAfter > 0 && nextRetry(settings.retrySchedule, base.round, elapsed, () => 0) !== null;
    const why = base.round >= MAX_ROUNDS ? `${MAX_ROUNDS.toLocaleString('en-US')} rounds made, the most a delivery makes`
      : byRetryAfter ? `a Retry-After of ${Math.round(retryAfter / 1000)} s would put the next attempt past the retry window of ${window}` : `retry window of ${window} is over`;
    return end(base, 'expired', elapsed, `${lastError}; ${why}`);
  }
  return {
    ...base,
    state: 'retrying',
    pendingUrls: [...retryable, ...deferred].sort((a, b) => a - b),
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

function summarize(round: RoundAnswers): string {
  return round.attempts.map((a, k) => `${a.url}: ${round.classifications[k].reason}`).join('; ');
}

function formatWindow(ms: number): string {
  return ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : ms % 60_000 === 0 ? `${ms / 60_000} min` : `${ms / 1000} s`;
}
