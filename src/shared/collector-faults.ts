import { z } from 'zod';

/**
 * Fault injection on the way in (README, Decisions, "Collector faults"): for a seeded fraction of the
 * requests sent with a source's write key, the collector answers an error status, answers late, never
 * answers, or resets the connection. For testing an SDK's or a backend's retry logic.
 */
export const FAULT_MODES = ['status', 'delay', 'hang', 'reset'] as const;
export type FaultMode = (typeof FAULT_MODES)[number];

/** The status answered in mode "status" when none is given. */
export const DEFAULT_FAULT_STATUS = 503;
/** A hung request's connection is closed (no answer) after this: no client waits longer, and nothing leaks. */
export const HANG_MAX_MS = 60_000;
export const MAX_FAULT_DELAY_MS = 60_000;
/**
 * The request bodies a `delay` fault may hold at once, across all sources: a delayed request waits
 * outside the ingest's byte gate (its wait must not hold up others), so without this bound hundreds of
 * delayed batches would all sit in memory (300 batches of 450 KB took the engine from 120 to 552 MB).
 * Beyond it, a request drawn for a delay is answered 503 with Retry-After at once. 16 MB: about 36
 * full batch requests, or thousands of single calls.
 */
export const MAX_DELAYED_BYTES = 16 * 1024 * 1024;

const between01 = 'must be between 0 and 1';

export const collectorFaultsSchema = z
  .strictObject({
    rate: z.number({ message: 'must be a number between 0 and 1' }).min(0, { message: between01 }).max(1, { message: between01 }),
    mode: z.enum(FAULT_MODES, { message: 'must be one of status, delay, hang, reset' }),
    status: z.number().int().min(400, { message: 'must be a 4xx or 5xx status' }).max(599, { message: 'must be a 4xx or 5xx status' }).optional(),
    retryAfterS: z.number().int().min(0).max(86_400).optional(),
    delayMs: z.number().int().min(1).max(MAX_FAULT_DELAY_MS).optional(),
    seed: z.number().int().min(0).max(0xffff_ffff).optional(),
  })
  .superRefine((f, ctx) => {
    const only = (key: 'status' | 'retryAfterS' | 'delayMs', mode: FaultMode) => {
      if (f[key] !== undefined && f.mode !== mode) ctx.addIssue({ code: 'custom', path: [key], message: `only with mode "${mode}"` });
    };
    only('status', 'status');
    only('retryAfterS', 'status');
    only('delayMs', 'delay');
    if (f.mode === 'delay' && f.delayMs === undefined) ctx.addIssue({ code: 'custom', path: ['delayMs'], message: 'required with mode "delay"' });
  });

export type CollectorFaults = z.output<typeof collectorFaultsSchema>;

/** How one fault is counted: the status answered ("503"), or the mode ("delay", "hang", "reset"). */
export function faultOutcome(f: Pick<CollectorFaults, 'mode' | 'status'>): string {
  return f.mode === 'status' ? String(f.status ?? DEFAULT_FAULT_STATUS) : f.mode;
}

/** Injected faults per source since the engine started (in memory, not persisted). */
export interface CollectorFaultCounts {
  since: string;
  /** By source id, then by outcome ("503", "hang", "reset" are refusals; "delay" was then processed). */
  sources: Record<string, Record<string, number>>;
}

/** "refused by fault injection: 503 ×12 · reset ×2", or null when nothing was refused. */
export function describeRefusals(counts: Record<string, number> | undefined): string | null {
  const parts = Object.entries(counts ?? {})
    .filter(([outcome, n]) => outcome !== 'delay' && n > 0)
    .map(([outcome, n]) => `${outcome} ×${n}`);
  return parts.length ? `refused by fault injection: ${parts.join(' · ')}` : null;
}
