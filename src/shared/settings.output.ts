import { z } from 'zod';

// The lab's settings as the API answers them and the engine holds them: the one declaration (issue
// 43); `Settings`, `RetrySchedule`, `PayloadFormat` and `AliasKeys` (types.ts) are its types.
// settings.schema.ts is the input an update takes (partial, with its checks and messages).

export const retryScheduleOutput = z.object({
  /** Named preset, or 'custom' for delaysMs as given. */
  preset: z.string(),
  /** Delays between attempts in ms (simulated time); the last repeats until the window ends. */
  delaysMs: z.array(z.number()),
  /** Fractional jitter applied to each delay, 0.2 = ±20 %. */
  jitter: z.number(),
  /** The delivery expires when the next attempt would start later than this after the first. */
  windowMs: z.number(),
  /** Whole-attempt timeout of a Classic delivery's requests (Actions deliveries always have 10 s); absent in settings saved before it = 5000. */
  timeoutMs: z.number().optional(),
  /** Which answers a Classic delivery retries (Actions deliveries always use 'actions'); absent = 'classic'. */
  retryRule: z.enum(['classic', 'actions']).optional(),
});

export const settingsOutput = z.object({
  payloadFormat: z.enum(['full', 'documented']),
  /** Alias bodies' id keys: both spellings, only the documented `"Previous ID"`/`"User ID"`, or only `previousId`. */
  aliasKeys: z.enum(['both', 'documented', 'camel']),
  userAgentProduct: z.string(),
  retrySchedule: retryScheduleOutput,
  /** Divides retry delays only (time-warp); the 5 s timeout stays real. */
  timeScale: z.number(),
  strict: z.boolean(),
  retentionCalls: z.number().int(),
  /** After a secret is rotated, how long the previous version keeps signing too (Standard Webhooks: both signatures are sent). Absent in settings saved before it = 24 h. */
  secretRotationWindowMs: z.number(),
});
