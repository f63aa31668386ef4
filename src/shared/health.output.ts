import { z } from 'zod';

// GET /api/health as this lab answers it: the one declaration (issue 43). `Health`, `StorageState`,
// `EventLoopFigures` and `BackgroundSlices` are its types; api-outputs.ts reads answers with a looser
// schema made from it, since a lab released before some fields (e554b8f: no `storage`) answers too.

/** Whether the engine can write its database now (GET /api/health, the storage banner). */
export const storageOutput = z.object({
  ok: z.boolean(),
  /** The failure's code (SQLITE_FULL, SQLITE_READONLY, ENOSPC, ...); null while ok. */
  code: z.string().nullable(),
  /** What failed and what the lab does meanwhile, for people; null while ok. */
  message: z.string().nullable(),
  /** When storage started failing (ISO 8601); null while ok. */
  since: z.string().nullable(),
});

/** Per background job (`body index`, `retention`, `export`, ...): its slices over the window and the longest, in ms. */
export const backgroundSlicesOutput = z.record(z.string(), z.object({ slices: z.number().int().min(0), longestMs: z.number().min(0) }));

/**
 * The event loop's delay (perf_hooks.monitorEventLoopDelay, less its 10 ms sampling resolution) over
 * two windows of 30 s, the current and the one before: the p99 of the worse window, the longest single
 * stall, and the time lost in ticks longer than 50 ms. A stall of seconds is one sample among
 * thousands, so the max and the blocked time are what show it.
 */
export const eventLoopOutput = z.object({
  delayP99Ms: z.number().min(0),
  delayMaxMs: z.number().min(0),
  blockedMs: z.number().min(0),
  /** The seconds the figures cover, up to 60. */
  windowS: z.number().min(0),
  /** The background jobs that ran on the loop meanwhile, each in slices: how many, and the longest (docs/performance.md lists them). */
  slices: backgroundSlicesOutput,
});

/**
 * The engine is up (`ok` is always true: health answers 200 while the engine runs, also while it
 * cannot store; README, Decisions). `storage` says whether calls can be stored now.
 */
export const healthAnswer = z.object({
  ok: z.literal(true),
  version: z.string(),
  collectorUrl: z.string(),
  uptimeMs: z.number().min(0),
  dataDir: z.string(),
  calls: z.number().int().min(0),
  pendingDeliveries: z.number().int().min(0),
  /** Unfinished deliveries waiting as rows for a busy receiver's lane (README, Limits). */
  parkedDeliveries: z.number().int().min(0),
  storage: storageOutput,
  /** How long the engine's one event loop kept work waiting over the last 30–60 s (README, Performance). */
  eventLoop: eventLoopOutput,
});

export type Health = z.output<typeof healthAnswer>;
export type StorageState = z.output<typeof storageOutput>;
export type EventLoopFigures = z.output<typeof eventLoopOutput>;
export type BackgroundSlices = z.output<typeof backgroundSlicesOutput>;

/**
 * What a reader of any lab's health relies on: the fields every release answers, `storage` when it
 * does, the rest kept as they came.
 */
export const healthOutput = healthAnswer.pick({ ok: true, version: true, collectorUrl: true, calls: true, pendingDeliveries: true }).extend({ storage: storageOutput.optional() }).loose();
