import { expect, it } from 'vitest';
import { resolveRetrySchedule } from '../../src/shared/retry-schedule';
import { schedulePatch } from '../../src/renderer/features/settings/schedule-patch';

// The settings form shows a schedule's preset and delays only, and sent { preset } (or custom with its
// delays) at every save: saving any other setting (strict, the time scale) reset a schedule a config
// or the API had given its jitter, window, timeout or retry rule (found by review).

it('saving with the preset unchanged keeps what the form does not show', () => {
  const fast = resolveRetrySchedule({ preset: 'fast', jitter: 0.5, timeoutMs: 20_000 });
  expect(resolveRetrySchedule(schedulePatch(fast, 'fast', null))).toEqual(fast);
  const custom = resolveRetrySchedule({ preset: 'custom', delaysMs: [200], jitter: 0, windowMs: 60_000, retryRule: 'actions' });
  expect(resolveRetrySchedule(schedulePatch(custom, 'custom', [200]))).toEqual(custom);
  expect(resolveRetrySchedule(schedulePatch(custom, 'custom', [1000, 2000]))).toEqual({ ...custom, delaysMs: [1000, 2000] });
});

it('another preset starts from its own values; custom delays keep the window the preview counted with', () => {
  const svix = resolveRetrySchedule({ preset: 'svix', jitter: 0.1 });
  expect(schedulePatch(svix, 'default', null)).toEqual({ preset: 'default' });
  expect(resolveRetrySchedule(schedulePatch(svix, 'custom', [1000])).windowMs).toBe(svix.windowMs);
});
