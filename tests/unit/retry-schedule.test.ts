import { describe, expect, it } from 'vitest';
import { MAX_ROUNDS, RETRY_PRESETS, nextRetry, nominalDelay, plannedOffsets, plansTooManyRounds, resolveRetrySchedule, scheduleRetryRule, scheduleTimeoutMs } from '../../src/shared/retry-schedule';
import { retryScheduleInputSchema, settingsPatchSchema } from '../../src/shared/settings.schema';
import { fieldErrors } from '../../src/shared/validation-error';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

const def = resolveRetrySchedule({ preset: 'default' });

describe('default retry schedule (SPEC §4)', () => {
  it('starts at 5 s, doubles, and caps at 30 min between attempts, ±20 % jitter, 4 h window', () => {
    expect(def.delaysMs).toEqual([5, 10, 20, 40, 80, 160, 320, 640, 1280, 1800].map((s) => s * SECOND));
    expect(def.jitter).toBe(0.2);
    expect(def.windowMs).toBe(4 * HOUR);
    // The last delay repeats for every later round.
    expect(nominalDelay(def, 1)).toBe(5 * SECOND);
    expect(nominalDelay(def, 9)).toBe(1280 * SECOND);
    expect(nominalDelay(def, 10)).toBe(30 * MINUTE);
    expect(nominalDelay(def, 50)).toBe(30 * MINUTE);
  });

  it('without jitter has exactly 16 attempts within 4 h', () => {
    // Independent count from the SPEC's words: the first attempt at 0, then 5 s, 10 s, ... doubling
    // while under 30 min (5·2^8 = 1280 s is the last), then 30 min apart, as long as the attempt
    // starts no later than 4 h after the first. 1 + 9 doubling rounds (ending at 2555 s) + ⌊(14400 −
    // 2555) / 1800⌋ = 6 capped rounds (ending at 13355 s) = 16.
    let count = 1;
    let at = 0;
    for (let delay = 5 * SECOND; ; delay = Math.min(delay * 2, 30 * MINUTE)) {
      if (at + delay > 4 * HOUR) break;
      at += delay;
      count++;
    }
    expect(count).toBe(16);
    const offsets = plannedOffsets(def);
    expect(offsets).toHaveLength(count);
    expect(offsets[9]).toBe(2555 * SECOND);
    expect(offsets[15]).toBe(13355 * SECOND);
    expect(offsets[15] + 30 * MINUTE).toBeGreaterThan(4 * HOUR);
  });

  it('jitter stays within ±20 % of the nominal delay, and covers both sides', () => {
    // mulberry32: a seeded source so the run is repeatable.
    let seed = 12345;
    const random = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const ratios: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const round = 1 + (i % 12);
      const r = nextRetry(def, round, 0, random)!;
      ratios.push(r.delayMs / nominalDelay(def, round));
    }
    expect(Math.min(...ratios)).toBeGreaterThanOrEqual(0.8);
    expect(Math.max(...ratios)).toBeLessThanOrEqual(1.2);
    expect(Math.min(...ratios)).toBeLessThan(0.85);
    expect(Math.max(...ratios)).toBeGreaterThan(1.15);
    // The extremes of the random source map to the extremes of the band.
    expect(nextRetry(def, 1, 0, () => 0)!.delayMs).toBe(4 * SECOND);
    expect(nextRetry(def, 1, 0, () => 0.5)!.delayMs).toBe(5 * SECOND);
    expect(nextRetry(def, 1, 0, () => 0.999999)!.delayMs).toBe(6 * SECOND);
  });

  it('expires when the next attempt would start after the window', () => {
    const atMid = () => 0.5;
    // 30 min left exactly: allowed (starts at the window's end, not after it).
    expect(nextRetry(def, 12, 4 * HOUR - 30 * MINUTE, atMid)).toEqual({ delayMs: 30 * MINUTE, offsetMs: 4 * HOUR });
    expect(nextRetry(def, 12, 4 * HOUR - 30 * MINUTE + 1, atMid)).toBeNull();
    // Jitter can push an attempt over the edge, or keep it inside.
    expect(nextRetry(def, 12, 4 * HOUR - 25 * MINUTE, () => 0)).not.toBeNull();
    expect(nextRetry(def, 12, 4 * HOUR - 25 * MINUTE, () => 0.99)).toBeNull();
    // The window already passed.
    expect(nextRetry(def, 2, 4 * HOUR + 1, atMid)).toBeNull();
  });

  it('honours a minimum delay (Retry-After) but still expires past the window', () => {
    expect(nextRetry(def, 1, 0, () => 0.5, 120 * SECOND)).toEqual({ delayMs: 120 * SECOND, offsetMs: 120 * SECOND });
    expect(nextRetry(def, 1, 3 * HOUR, () => 0.5, 2 * HOUR)).toBeNull();
  });
});

describe('resolveRetrySchedule', () => {
  it('falls back to the default for an unknown preset and keeps custom delays', () => {
    expect(resolveRetrySchedule({ preset: 'nope' })).toEqual({ preset: 'default', ...withoutLabel('default') });
    // A name every object inherits is no preset either (one stored before the schema refused it).
    for (const preset of ['constructor', 'toString', '__proto__']) expect(resolveRetrySchedule({ preset })).toEqual({ preset: 'default', ...withoutLabel('default') });
    const custom = resolveRetrySchedule({ preset: 'custom', delaysMs: [1000, 2000], jitter: 0, windowMs: 10_000 });
    expect(custom).toEqual({ preset: 'custom', delaysMs: [1000, 2000], jitter: 0, windowMs: 10_000, timeoutMs: 5000, retryRule: 'classic' });
    // 0, 1 s, 3 s, then 2 s apart: 5, 7, 9 (11 is past 10 s).
    expect(plannedOffsets(custom)).toEqual([0, 1000, 3000, 5000, 7000, 9000]);
  });

  it('the svix preset runs its published delays within its window', () => {
    const svix = resolveRetrySchedule({ preset: 'svix' });
    const offsets = plannedOffsets(svix);
    expect(offsets).toHaveLength(svix.delaysMs.length + 1);
    expect(offsets.at(-1)).toBeLessThan(svix.windowMs);
  });

  it('the svix preset makes all 8 attempts when each attempt takes time (its window ended at the last retry, which was lost)', () => {
    const svix = resolveRetrySchedule({ preset: 'svix' });
    // The window counts the attempts' own time (round.ts): a 500 in 50 ms, or a 10 s Actions timeout.
    for (const attemptMs of [50, 10 * SECOND]) {
      let elapsed = 0;
      let attempts = 1;
      for (let round = 1; ; round++) {
        const next = nextRetry(svix, round, elapsed + attemptMs, () => 0.5);
        if (!next) break;
        elapsed = next.offsetMs;
        attempts++;
      }
      expect(attempts, `attempts of ${attemptMs} ms`).toBe(svix.delaysMs.length + 1);
    }
  });
});

describe('timeout and retry rule of a schedule', () => {
  it('default, svix and fast keep Classic: 5 s timeout, classic retry classes', () => {
    for (const name of ['default', 'svix', 'fast']) {
      expect(resolveRetrySchedule({ preset: name })).toMatchObject({ preset: name, timeoutMs: 5000, retryRule: 'classic' });
    }
  });

  it('the actions preset: 10 s timeout and Actions retry classes, with the default delays and window', () => {
    const actions = resolveRetrySchedule({ preset: 'actions' });
    expect(actions).toEqual({ ...def, preset: 'actions', timeoutMs: 10_000, retryRule: 'actions' });
    expect(actions.delaysMs[0]).toBe(5 * SECOND);
    expect(actions.delaysMs.at(-1)).toBe(30 * 60 * SECOND);
    expect(actions.windowMs).toBe(4 * HOUR);
    expect(plannedOffsets(actions)).toEqual(plannedOffsets(def));
    expect(RETRY_PRESETS.actions.label).toMatch(/10 s timeout/);
    expect(RETRY_PRESETS.actions.label).toMatch(/Actions/);
  });

  it('explicit values win over the preset; custom takes Classic unless told', () => {
    expect(resolveRetrySchedule({ preset: 'actions', timeoutMs: 3000 })).toMatchObject({ timeoutMs: 3000, retryRule: 'actions' });
    expect(resolveRetrySchedule({ preset: 'custom', delaysMs: [1000], retryRule: 'actions' })).toMatchObject({ timeoutMs: 5000, retryRule: 'actions' });
  });

  it('settings saved before the fields read as Classic 5 s', () => {
    const old = { preset: 'default', delaysMs: [5000], jitter: 0.2, windowMs: 4 * HOUR };
    expect(scheduleTimeoutMs(old)).toBe(5000);
    expect(scheduleRetryRule(old)).toBe('classic');
    expect(scheduleTimeoutMs(resolveRetrySchedule({ preset: 'actions' }))).toBe(10_000);
    expect(scheduleRetryRule(resolveRetrySchedule({ preset: 'actions' }))).toBe('actions');
  });

  it('the settings schema takes the fields and names them when wrong', () => {
    expect(retryScheduleInputSchema.safeParse({ preset: 'actions' }).success).toBe(true);
    expect(retryScheduleInputSchema.safeParse({ preset: 'custom', delaysMs: [1000], timeoutMs: 10_000, retryRule: 'actions' }).success).toBe(true);
    const paths = (input: unknown) => {
      const r = retryScheduleInputSchema.safeParse(input);
      return r.success ? [] : fieldErrors(r.error, ['retrySchedule']).map((e) => `${e.path}: ${e.message}`);
    };
    expect(paths({ preset: 'default', timeoutMs: 50 })).toEqual(['retrySchedule.timeoutMs: at least 100 ms']);
    expect(paths({ preset: 'default', timeoutMs: 120_000 })).toEqual(['retrySchedule.timeoutMs: at most 60000 ms (60 s)']);
    expect(paths({ preset: 'default', timeoutMs: 1.5 })).toEqual(['retrySchedule.timeoutMs: a whole number of milliseconds']);
    expect(paths({ preset: 'default', timeoutMs: '10s' })).toEqual(['retrySchedule.timeoutMs: a whole number of milliseconds']);
    expect(paths({ preset: 'default', retryRule: 'svix' })).toEqual([expect.stringMatching(/^retrySchedule\.retryRule: "classic" .* or "actions"/)]);
  });
});

function withoutLabel(name: string) {
  const { label: _label, ...rest } = RETRY_PRESETS[name];
  return rest;
}

describe('at most MAX_ROUNDS rounds a delivery', () => {
  const custom = (delaysMs: number[], windowMs: number) => resolveRetrySchedule({ preset: 'custom', delaysMs, jitter: 0, windowMs });

  it('a schedule that plans more is found: a delay of 0 (it never reaches its window) or a short delay in a long window', () => {
    expect(plansTooManyRounds(custom([0], 60_000))).toBe(true);
    expect(plansTooManyRounds(custom([1_000], 4 * HOUR))).toBe(true);
    expect(plansTooManyRounds(custom([1_000], 15 * MINUTE))).toBe(false);
    // Exactly MAX_ROUNDS rounds fit: within; one more: over.
    expect(plansTooManyRounds(custom([1_000], (MAX_ROUNDS - 1) * 1_000))).toBe(false);
    expect(plansTooManyRounds(custom([1_000], MAX_ROUNDS * 1_000))).toBe(true);
    for (const preset of Object.keys(RETRY_PRESETS)) expect([preset, plansTooManyRounds(resolveRetrySchedule({ preset }))]).toEqual([preset, false]);
  });

  it('nextRetry stops at MAX_ROUNDS whatever the window; the schema takes such a schedule', () => {
    const s = custom([0], 60_000);
    expect(nextRetry(s, MAX_ROUNDS - 1, 0, () => 0.5)).not.toBeNull();
    expect(nextRetry(s, MAX_ROUNDS, 0, () => 0.5)).toBeNull();
    expect(plannedOffsets(s)).toHaveLength(MAX_ROUNDS);
    expect(settingsPatchSchema.safeParse({ retrySchedule: { preset: 'custom', delaysMs: [0], windowMs: 60_000 } }).success).toBe(true);
  });
});
