import { compactRetrySchedule, type RetryScheduleInput } from '../../../shared/retry-schedule';
import type { RetrySchedule } from '../../../shared/types';

/**
 * The retry schedule the settings form saves, from the schedule in force, the preset chosen and the
 * custom delays typed (null unless custom). The form shows only the preset and the delays, so what it
 * does not show is kept: the same preset keeps its overrides (a config's or the API's jitter, window,
 * timeout, retry rule), and custom delays keep the window the preview counted with.
 */
export function schedulePatch(current: RetrySchedule, preset: string, customDelaysMs: number[] | null): RetryScheduleInput {
  const kept = preset === current.preset ? compactRetrySchedule(current) : { preset, ...(preset === 'custom' ? { windowMs: current.windowMs } : {}) };
  return preset === 'custom' ? { ...kept, delaysMs: customDelaysMs! } : kept;
}
