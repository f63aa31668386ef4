import type { RetrySchedule } from './types';
import { ACTIONS_TIMEOUT_MS, CLASSIC_TIMEOUT_MS, type RetryRule } from './actions/retry-classes';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** 5 s doubling, capped at 30 min between attempts (SPEC §4 decision). */
function doublingDelays(startMs: number, capMs: number): number[] {
  const out: number[] = [];
  for (let d = startMs; d < capMs; d *= 2) out.push(d);
  out.push(capMs);
  return out;
}

type Preset = Omit<RetrySchedule, 'preset' | 'timeoutMs' | 'retryRule'> & { label: string; timeoutMs: number; retryRule: RetryRule };

const DEFAULT_DELAYS = doublingDelays(5 * SECOND, 30 * MINUTE);

// Schedules are data (DESIGN.md lesson 7): a preset is an array of delays and a window, with the
// timeout and the retry classes (shared/actions/retry-classes.ts) a Classic delivery runs under.
export const RETRY_PRESETS: Record<string, Preset> = {
  default: {
    label: '5 s doubling, 30 min cap, 4 h window (Webhooks destination)',
    delaysMs: DEFAULT_DELAYS,
    jitter: 0.2,
    windowMs: 4 * HOUR,
    timeoutMs: CLASSIC_TIMEOUT_MS,
    retryRule: 'classic',
  },
  actions: {
    label: "Webhooks (Actions): 10 s timeout, Actions' retry classes (408, 423, 429, 5xx but 501), 5 s doubling, 30 min cap, 4 h window",
    delaysMs: DEFAULT_DELAYS,
    jitter: 0.2,
    windowMs: 4 * HOUR,
    timeoutMs: ACTIONS_TIMEOUT_MS,
    retryRule: 'actions',
  },
  svix: {
    label: 'Svix: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h',
    delaysMs: [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR],
    jitter: 0,
    // The delays' sum plus 5 h: the window also counts the attempts' own time and a lane's wait
    // (round.ts), so one ending at the last retry's offset lost that retry (7 attempts, not Svix's 8);
    // 5 h is half the last delay, so no 9th attempt fits.
    windowMs: 5 * SECOND + 5 * MINUTE + 30 * MINUTE + 2 * HOUR + 5 * HOUR + 20 * HOUR + 5 * HOUR,
    timeoutMs: CLASSIC_TIMEOUT_MS,
    retryRule: 'classic',
  },
  fast: {
    label: 'Demo: 1 s doubling, 10 s cap, 1 min window',
    delaysMs: doublingDelays(1 * SECOND, 10 * SECOND),
    jitter: 0,
    windowMs: 1 * MINUTE,
    timeoutMs: CLASSIC_TIMEOUT_MS,
    retryRule: 'classic',
  },
};

/** What a settings patch may give for the schedule (settings.schema.ts validates it). */
export interface RetryScheduleInput {
  preset: string;
  delaysMs?: number[];
  jitter?: number;
  windowMs?: number;
  timeoutMs?: number;
  retryRule?: RetryRule;
}

/** A preset's own name: `in` (and a lookup) also finds what every object inherits ("constructor", "toString"). */
export function isRetryPreset(name: string): boolean {
  return Object.hasOwn(RETRY_PRESETS, name);
}

/**
 * Values a preset had in an earlier release. Settings and exported configs of that release carry
 * them as if given; read as given they would keep the old behaviour for ever, so they count as not
 * given (the preset's current value applies). Someone giving exactly such a value by hand gets the
 * preset's current one: a risk taken for the labs that stored it.
 */
const EARLIER_PRESET_VALUES: Record<string, { windowMs?: number[] }> = {
  // Before the last 10 h retry was given room (d45921c): the window ended at its offset.
  svix: { windowMs: [5 * SECOND + 5 * MINUTE + 30 * MINUTE + 2 * HOUR + 5 * HOUR + 20 * HOUR] },
};

/** A preset's values, or the default's; anything given explicitly wins (custom takes the default's timeout and rule unless given). */
export function resolveRetrySchedule(given: RetryScheduleInput): Required<RetrySchedule> {
  const earlier = Object.hasOwn(EARLIER_PRESET_VALUES, given.preset) ? EARLIER_PRESET_VALUES[given.preset]! : {};
  const input = given.windowMs !== undefined && earlier.windowMs?.includes(given.windowMs) ? { ...given, windowMs: undefined } : given;
  const known = isRetryPreset(input.preset);
  const base = (known ? RETRY_PRESETS[input.preset] : undefined) ?? RETRY_PRESETS.default;
  return {
    preset: known || input.preset === 'custom' ? input.preset : 'default',
    delaysMs: input.delaysMs ?? base.delaysMs,
    jitter: input.jitter ?? base.jitter,
    windowMs: input.windowMs ?? base.windowMs,
    timeoutMs: input.timeoutMs ?? base.timeoutMs,
    retryRule: input.retryRule ?? base.retryRule,
  };
}

/**
 * A schedule as settings store it and a config exports it: a named preset and only what differs from
 * it, so a preset changed by a later release (a fix) reaches labs that chose it; custom in full.
 */
export function compactRetrySchedule(schedule: RetrySchedule): RetryScheduleInput {
  if (!isRetryPreset(schedule.preset)) return { ...schedule };
  const base = RETRY_PRESETS[schedule.preset]!;
  const out: RetryScheduleInput = { preset: schedule.preset };
  if (JSON.stringify(schedule.delaysMs) !== JSON.stringify(base.delaysMs)) out.delaysMs = schedule.delaysMs;
  if (schedule.jitter !== base.jitter) out.jitter = schedule.jitter;
  if (schedule.windowMs !== base.windowMs) out.windowMs = schedule.windowMs;
  if (schedule.timeoutMs !== undefined && schedule.timeoutMs !== base.timeoutMs) out.timeoutMs = schedule.timeoutMs;
  if (schedule.retryRule !== undefined && schedule.retryRule !== base.retryRule) out.retryRule = schedule.retryRule;
  return out;
}

/** A Classic delivery's attempt timeout under this schedule (settings saved before the field: 5 s). */
export function scheduleTimeoutMs(schedule: RetrySchedule): number {
  return schedule.timeoutMs ?? CLASSIC_TIMEOUT_MS;
}

/** Which answers a Classic delivery retries under this schedule (settings saved before the field: classic). */
export function scheduleRetryRule(schedule: RetrySchedule): RetryRule {
  return schedule.retryRule ?? 'classic';
}

/**
 * The most rounds a delivery makes, whatever its schedule: a custom delay of 0 repeated until its
 * window ends made 133,351 requests of one call in 60 s (a new user's test), and a detail no browser
 * could draw. A schedule that plans more is taken (retrying every 200 ms "while I fix my receiver"
 * is a fair use) and ends there; the Settings preview says so.
 */
export const MAX_ROUNDS = 1_000;

/** Nominal delay (simulated ms) before round `round + 1`, given that `round` rounds have run (round ≥ 1). */
export function nominalDelay(schedule: RetrySchedule, round: number): number {
  const i = Math.min(round - 1, schedule.delaysMs.length - 1);
  return schedule.delaysMs[Math.max(0, i)];
}

/**
 * Plan the next round after `round` rounds have run. `elapsedSimMs` is the simulated time since the
 * first attempt started; `random` returns [0, 1). Returns null when the next attempt would start
 * after the window: the delivery expires.
 */
export function nextRetry(
  schedule: RetrySchedule,
  round: number,
  elapsedSimMs: number,
  random: () => number,
  minDelayMs = 0,
): { delayMs: number; offsetMs: number } | null {
  if (round >= MAX_ROUNDS) return null;
  const nominal = nominalDelay(schedule, round);
  const factor = 1 + schedule.jitter * (2 * random() - 1);
  const delayMs = Math.max(minDelayMs, Math.round(nominal * factor));
  const offsetMs = elapsedSimMs + delayMs;
  if (offsetMs > schedule.windowMs) return null;
  return { delayMs, offsetMs };
}

/** The planned offsets of every round without jitter, for showing a schedule before it runs (at most MAX_ROUNDS). */
export function plannedOffsets(schedule: RetrySchedule): number[] {
  const out = [0];
  for (let round = 1; round < MAX_ROUNDS; round++) {
    const next = nextRetry({ ...schedule, jitter: 0 }, round, out[out.length - 1], () => 0.5);
    if (!next) break;
    out.push(next.offsetMs);
  }
  return out;
}

/**
 * Whether a schedule plans more rounds than a delivery makes: another would still start inside its
 * window. `offsets` are its plannedOffsets, when the caller has them already (the Settings preview).
 */
export function plansTooManyRounds(schedule: RetrySchedule, offsets = plannedOffsets(schedule)): boolean {
  const last = offsets[offsets.length - 1]!;
  return offsets.length >= MAX_ROUNDS && last + nominalDelay(schedule, MAX_ROUNDS) <= schedule.windowMs;
}
