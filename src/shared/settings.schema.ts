import { z } from 'zod';
import { isRetryPreset, RETRY_PRESETS } from './retry-schedule';

/** Bounds of a schedule's attempt timeout: long enough for a slow receiver, short enough that a round cannot hang. */
export const MIN_TIMEOUT_MS = 100;
export const MAX_TIMEOUT_MS = 60_000;
/** The longest rotation window: a receiver has that long to switch to a rotated secret. */
export const MAX_ROTATION_WINDOW_MS = 30 * 24 * 3_600_000;

export const retryScheduleInputSchema = z.strictObject({
  preset: z.string().refine((p) => p === 'custom' || isRetryPreset(p), {
    message: `unknown preset (use custom or one of: ${Object.keys(RETRY_PRESETS).join(', ')})`,
  }),
  delaysMs: z.array(z.number().int().min(0).max(7 * 24 * 3600_000)).min(1).max(1000).optional(),
  jitter: z.number().min(0).max(1).optional(),
  windowMs: z.number().int().min(0).max(30 * 24 * 3600_000).optional(),
  // A Classic delivery's attempt timeout; Actions deliveries keep their own 10 s whatever is set.
  timeoutMs: z.number({ message: 'a whole number of milliseconds' })
    .int({ message: 'a whole number of milliseconds' })
    .min(MIN_TIMEOUT_MS, { message: `at least ${MIN_TIMEOUT_MS} ms` })
    .max(MAX_TIMEOUT_MS, { message: `at most ${MAX_TIMEOUT_MS} ms (${MAX_TIMEOUT_MS / 1000} s)` })
    .optional(),
  retryRule: z.enum(['classic', 'actions'], { message: '"classic" (retries 408, 429, 5xx) or "actions" (408, 423, 429, 5xx but 501)' }).optional(),
}).superRefine((s, ctx) => {
  if (s.preset === 'custom' && !s.delaysMs) ctx.addIssue({ code: 'custom', path: ['delaysMs'], message: 'required for a custom schedule' });
});

export const settingsPatchSchema = z.strictObject({
  payloadFormat: z.enum(['full', 'documented']).optional(),
  aliasKeys: z.enum(['both', 'documented', 'camel']).optional(),
  userAgentProduct: z.string().trim().min(1).max(100).regex(/^[\x21-\x7e]+$/, { message: 'a product token like Segment.io/1.0' }).optional(),
  retrySchedule: retryScheduleInputSchema.optional(),
  timeScale: z.number().min(0.001).max(1_000_000).optional(),
  strict: z.boolean().optional(),
  retentionCalls: z.number().int().min(100).max(100_000_000).optional(),
  /** After a rotation, how long the previous secret keeps signing too: 0 (never) to 30 days; default 24 h, as Svix. */
  secretRotationWindowMs: z.number({ message: 'a whole number of milliseconds' })
    .int({ message: 'a whole number of milliseconds' })
    .min(0, { message: 'at least 0 (0: the old secret stops signing at once)' })
    .max(MAX_ROTATION_WINDOW_MS, { message: 'at most 30 days (2592000000 ms)' })
    .optional(),
});

export type SettingsPatch = z.input<typeof settingsPatchSchema>;
