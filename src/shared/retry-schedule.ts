import type { RetrySchedule } from './types';

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

// Schedules are data (DESIGN.md lesson 7): a preset is only an array of delays and a window.
export const RETRY_PRESETS: Record<string, Omit<RetrySchedule, 'preset'> & { label: string }> = {
  default: {
    label: '5 s doubling, 30 min cap, 4 h window (Webhooks destination)',
    delaysMs: doublingDelays(5 * SECOND, 30 * MINUTE),
    jitter: 0.2,
    windowMs: 4 * HOUR,
  },
  svix: {
    label: 'Svix: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h',
    delaysMs: [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR],
    jitter: 0,
    windowMs: 5 * SECOND + 5 * MINUTE + 30 * MINUTE + 2 * HOUR + 5 * HOUR + 20 * HOUR,
  },
  fast: {
    label: 'Demo: 1 s doubling, 10 s cap, 1 min window',
    delaysMs: doublingDelays(1 * SECOND, 10 * SECOND),
    jitter: 0,
    windowMs: 1 * MINUTE,
  },
};

export function resolveRetrySchedule(input: { preset: string; delaysMs?: number[]; jitter?: number; windowMs?: number }): RetrySchedule {
  const base = RETRY_PRESETS[input.preset] ?? RETRY_PRESETS.default;
  return {
    preset: input.preset in RETRY_PRESETS || input.preset === 'custom' ? input.preset : 'default',
    delaysMs: input.delaysMs ?? base.delaysMs,
    jitter: input.jitter ?? base.jitter,
    windowMs: input.windowMs ?? base.windowMs,
  };
}

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
  const nominal = nominalDelay(schedule, round);
  const factor = 1 + schedule.jitter * (2 * random() - 1);
  const delayMs = Math.max(minDelayMs, Math.round(nominal * factor));
  const offsetMs = elapsedSimMs + delayMs;
  if (offsetMs > schedule.windowMs) return null;
  return { delayMs, offsetMs };
}

/** The planned offsets of every round without jitter, for showing a schedule before it runs. */
export function plannedOffsets(schedule: RetrySchedule): number[] {
  const out = [0];
  for (let round = 1; round < 10_000; round++) {
    const next = nextRetry({ ...schedule, jitter: 0 }, round, out[out.length - 1], () => 0.5);
    if (!next) break;
    out.push(next.offsetMs);
  }
  return out;
}
