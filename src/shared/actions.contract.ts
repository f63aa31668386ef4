import { z } from 'zod';
import { op } from './api-op';
import { actionsMappingSchema, MAX_TRIGGER_CHARS, triggerObjectSchema } from './source.schema';
import { MAX_CALL_DEPTH, nestsDeeperThan } from './nesting';
import type { NormalizedCall } from './types';

// Webhooks (Actions) rules the renderer cannot run itself: Segment's mapping kit and FQL run in the
// engine only (shared/actions/rules.ts says why), so Compose's previews and the Destinations
// screen's trigger check ask the engine, which builds them with the dispatcher's own builder.

/** A mapping's request for one call, as the dispatcher would make it (before signatures). */
export const actionsPreviewRequestOutput = z.object({
  method: z.string(),
  url: z.string(),
  /** Names as they go out; without X-Signature, Content-Length and Standard Webhooks headers. */
  headers: z.record(z.string(), z.string()),
  /** The exact body text; '' when the data resolved to nothing (no body, nothing signed). */
  body: z.string(),
  /** What X-Signature signs (the data; in a batch, the first item's); null = nothing. */
  signedText: z.string().nullable(),
  batch: z.boolean(),
});
export type ActionsPreviewRequest = z.output<typeof actionsPreviewRequestOutput>;

export const actionsPreviewItemOutput = z.object({
  name: z.string(),
  /** The trigger as FQL; null = every call. */
  trigger: z.string().nullable(),
  matches: z.boolean(),
  /** Why the trigger cannot be read (it then takes no call); null when it can. */
  triggerError: z.string().nullable(),
  /** The request, when the call matches and it can be sent. */
  request: actionsPreviewRequestOutput.nullable(),
  /** Why this mapping's request for the call is not sent (over the limit, data not an object, the kit failed). */
  notSent: z.string().nullable(),
});
export type ActionsPreviewItem = z.output<typeof actionsPreviewItemOutput>;

export const triggerCheckOutput = z.object({
  /** The trigger as FQL (an object trigger written out); null = every call. */
  fql: z.string().nullable(),
  /** Why Segment's parser cannot read it; null when it can. */
  error: z.string().nullable(),
  /** The lab's own warning: Segment's parser takes it but reads it otherwise than it looks (a dropped `not`, quotes kept). */
  warning: z.string().nullable(),
  /** Whether the sample call matches; null without a call or with an error. */
  matches: z.boolean().nullable(),
});
export type TriggerCheck = z.output<typeof triggerCheckOutput>;

const sampleCall = z.custom<NormalizedCall>(
  (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && typeof (v as { type?: unknown }).type === 'string' && !nestsDeeperThan(v, MAX_CALL_DEPTH),
  { message: `a call: an object with a type, nested at most ${MAX_CALL_DEPTH} levels` },
);

export const actionsOps = {
  /** Each mapping's request for this call, or why it takes or sends nothing (Compose). */
  previewActions: op<ActionsPreviewItem[]>()(
    'POST',
    '/actions/preview',
    z.strictObject({ call: sampleCall, mappings: z.array(actionsMappingSchema).max(5) }),
    { output: z.array(actionsPreviewItemOutput) },
  ),
  /** A trigger checked by Segment's FQL parser, and against a sample call (Destinations). */
  checkTrigger: op<TriggerCheck>()(
    'POST',
    '/actions/check-trigger',
    // Not the mapping schema's trigger: that one refuses what does not parse, and this says why.
    z.strictObject({ trigger: z.union([z.string().max(MAX_TRIGGER_CHARS), triggerObjectSchema]), call: sampleCall.optional() }),
    { output: triggerCheckOutput },
  ),
} as const;
