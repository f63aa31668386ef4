import type { Enforcement, RequestCalls } from './check';
import type { PlanVerdict, TrackingPlanRule } from '../../../shared/tracking-plan.schema';

// What the engine's thread and a check worker (check-worker.ts) say to each other (check-pool.ts).
// Apart from the worker, so the engine's thread never loads the worker's module (it warms Ajv up).

/** Progress cells (Int32): what the worker does, on which rule or call, since when (ms after the task's epoch). */
export const PHASE = 0;
export const INDEX = 1;
export const SINCE = 2;
/** Rules the task compiled (not taken from a cached plan): read also when the task is stopped afterwards. */
export const COMPILED = 3;
/** The worker's kernel thread id (thread-cpu.ts; 0 where /proc does not say): whose CPU time the budget counts. */
export const TID = 4;
export const PROGRESS_CELLS = 5;
export const Phase = { queued: 0, compiling: 1, checking: 2 } as const;

export interface CompileTask {
  kind: 'compile';
  /** The plan's id and version (check-pool.ts planKey): what the cache is keyed by. */
  key: string;
  id: string;
  name: string;
  rules: TrackingPlanRule[];
  progress: SharedArrayBuffer;
  /** performance.timeOrigin + performance.now() of the engine's thread when the task was made. */
  epoch: number;
}

export interface CheckTask {
  kind: 'check';
  key: string;
  id: string;
  name: string;
  /** Sent only when a worker answered `missing` (the plan is not in its cache). */
  rules?: TrackingPlanRule[];
  settings: Enforcement;
  /** The calls, or the request they came in (its body in shared memory, read again in the worker: the loop copies no objects). */
  calls?: Record<string, unknown>[];
  request?: RequestCalls;
  progress: SharedArrayBuffer;
  epoch: number;
}

/** Per rule: how long its compile took here and its estimated cost (work-bounds.ts). */
export interface RuleTiming {
  compileMs: number;
  /** The compile estimated from the schema (work-bounds.ts): unlike compileMs, not stretched by a busy machine. */
  compileUs: number;
  costUs: number[];
}

/** Rules a task compiled (not taken from a plan the worker had), and how long that took; null when none. */
export type Compiled = { rules: number; ms: number } | null;

export type WorkerResult =
  | { kind: 'compiled'; rules: RuleTiming[]; compiled: Compiled }
  | { kind: 'checked'; verdicts: PackedVerdicts; compiled: Compiled }
  | { kind: 'missing' }
  | { kind: 'refused'; index: number; reason: string };

/**
 * Verdicts as they cross back to the engine's thread: a clean one (no violation, nothing blocked or
 * omitted: most calls) as the index of its rules' ids in `rules`. Copying 100 verdict objects between
 * threads cost the loop about as much as checking them there.
 */
export interface PackedVerdicts {
  planId: string;
  rules: string[][];
  verdicts: (PlanVerdict | number)[];
}

export function packVerdicts(planId: string, verdicts: PlanVerdict[]): PackedVerdicts {
  const rules: string[][] = [];
  const index = new Map<string, number>();
  const packed = verdicts.map((v) => {
    if (v.violations.length > 0 || v.blocked !== null || v.omitted.length > 0 || v.planId !== planId) return v;
    const ids = v.rules ?? [];
    const key = ids.join('\u0000');
    let n = index.get(key);
    if (n === undefined) index.set(key, (n = rules.push(ids) - 1));
    return n;
  });
  return { planId, rules, verdicts: packed };
}

export function unpackVerdicts(p: PackedVerdicts): PlanVerdict[] {
  return p.verdicts.map((v) => (typeof v === 'number' ? { planId: p.planId, violations: [], blocked: null, omitted: [], rules: p.rules[v] } : v));
}
