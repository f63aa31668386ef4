import type { PlanVerdict, TrackingPlanRule } from '../../../shared/tracking-plan.schema';
import { checkCall, selectRules, shapeOf, unfinishedVerdict, type CompiledPlan, type Enforcement, type RequestCalls, type RuleChoice, sharedBody } from './check';
import type { CompiledRule } from './compile';
import { PlanNotCompiled, type CheckPool, type RequestOutcome } from './check-pool';
import { costFor, SIZE_BUCKETS } from './work-bounds';
import { backgroundSlices } from '../slice-meter';

// Where each call's check runs (issue 38). On the event loop when its rules are compiled there and
// their estimated worst check for a call of its size (work-bounds.ts) is under INLINE_US: most calls
// of most plans, with no hop to a thread. Anywhere else in the check workers (check-pool.ts), with a
// budget. What holds the loop is bounded three ways: only calls estimated cheap run on it; they run
// in slices of SLICE_MS, the loop answering others between; and a rule whose check on the loop is
// measured over DEMOTE_MS DEMOTE_STRIKES times (an estimate is not a proof; one slow check may be a
// pause of the collector's own, or the first use of a pattern) is checked in the workers from then on.

/** A call estimated at most this (µs) is checked on the loop. The estimate is a worst case: real checks take a fraction. */
export const INLINE_US = 5_000;
/** A request with at least this many calls to check may go to the workers as its body (fewer cost the loop less checked on it). */
export const REQUEST_MIN_CALLS = 8;
/**
 * ...and goes there only when its plan's calls were measured costlier than this each (µs) on the loop
 * (a trimmed mean of their checks; a call sent to the workers on its own counts as costlier). Handing
 * a request over costs the loop too (the task each way, the body copied into shared memory, the
 * verdicts unpacked): 7.5 µs a call for the bench's batches, where choosing their rules, estimating
 * and checking them on the loop cost 3.5 in all, Ajv's check about 2 of it (docs/performance.md). What
 * is measured is the check alone, so the line is drawn below the hand-over's 7.5.
 */
export const HANDOVER_CALL_US = 6;
/** A plan whose requests are handed over has one in this many measured again, on its first SAMPLE_CALLS calls. */
const REMEASURE_EVERY = 32;
const SAMPLE_CALLS = 16;
/** Checks on the loop give it back after this long (ms). */
const SLICE_MS = 8;
/** Checks on the loop measured longer (ms), this many times, send their rules to the workers from then on. */
const DEMOTE_MS = 25;
const DEMOTE_STRIKES = 3;

export interface PlanToCheck {
  id: string;
  name: string;
  rules: TrackingPlanRule[];
  /** Its version: the workers' cache key. */
  updatedAt: number;
  settings: Enforcement;
  /** Compiled on the loop (service.ts warm-up), or not yet: then every call goes to the workers. */
  compiled?: CompiledPlan;
}

export class PlanChecks {
  /** Rules measured slow on the loop (by their compiled object: a new save compiles, and judges, anew). */
  private readonly demoted = new WeakSet<CompiledRule>();
  private readonly strikes = new WeakMap<CompiledRule, number>();
  /** Per compiled plan: its calls' cost on the loop (µs each, a moving average), and requests handed over since it was measured. */
  private readonly measured = new WeakMap<CompiledPlan, { us: number; since: number }>();

  constructor(
    private readonly pool: () => CheckPool,
    /** A plan the workers found not to compile (stored by an older lab): set aside, its calls unchecked. */
    private readonly onNotCompiled: (planId: string, updatedAt: number, err: PlanNotCompiled) => void,
    private readonly log: (line: string) => void,
    private readonly opts: {
      /** HANDOVER_CALL_US; tests give 0 to hand every request over. */
      handoverCallUs?: number;
      /** The clock checks are measured with (ms); tests give one of their own. */
      clock?: () => number;
    } = {},
  ) {}

  /**
   * A request's verdicts. When its plan's calls are costly to check on the loop (or not compiled there
   * yet) and the check workers have room, its calls go there as the request's body: the loop neither
   * checks them nor copies them as objects, and another core carries the checks. Otherwise as
   * verdicts() does: the cheap ones on the loop, the rest in workers.
   */
  async requestVerdicts(plan: PlanToCheck, request: RequestCalls, calls: () => Record<string, unknown>[]): Promise<(PlanVerdict | undefined)[]> {
    const n = request.indices.length;
    const way = n < REQUEST_MIN_CALLS ? 'loop' : this.way(plan.compiled);
    if (way === 'loop' || !this.pool().hasRoom()) return this.verdicts(plan, calls());
    if (way === 'workers' || n <= SAMPLE_CALLS) return this.handOver(plan, request, calls);
    // Measured again on a sample, the rest handed over: a whole batch of a costly plan would hold the loop.
    const all = calls();
    const head = await this.verdicts(plan, all.slice(0, SAMPLE_CALLS));
    const rest = await this.handOver(plan, { ...request, indices: request.indices.slice(SAMPLE_CALLS) }, () => all.slice(SAMPLE_CALLS));
    return [...head, ...rest];
  }

  private async handOver(plan: PlanToCheck, request: RequestCalls, calls: () => Record<string, unknown>[]): Promise<(PlanVerdict | undefined)[]> {
    const shared = { ...request, body: sharedBody(request.body) };
    let outcome: RequestOutcome;
    try {
      outcome = await this.pool().checkRequest(this.poolPlan(plan), plan.settings, shared);
    } catch (err) {
      return this.failed(plan, request.indices.length, err);
    }
    if (outcome.ok) return outcome.verdicts;
    const all = calls();
    if (outcome.none) return all.map(() => unfinishedVerdict(plan, plan.settings, outcome.why));
    if (outcome.stoppedAt === null) return this.verdicts(plan, all);
    // The rest as verdicts() would have checked them, the call that stopped it counted among the request's unfinished.
    const k = outcome.stoppedAt;
    const counted = { unfinished: 1 };
    const before = await this.verdicts(plan, all.slice(0, k), counted);
    const after = await this.verdicts(plan, all.slice(k + 1), counted);
    return [...before, unfinishedVerdict(plan, plan.settings, outcome.why), ...after];
  }

  /**
   * One verdict per call, in order; undefined for all when the plan turns out not to compile.
   * `counted`: the request's calls that ran out of budget so far (after 3, the workers try no more).
   */
  async verdicts(plan: PlanToCheck, calls: Record<string, unknown>[], counted = { unfinished: 0 }): Promise<(PlanVerdict | undefined)[]> {
    const n = calls.length;
    const out: (PlanVerdict | undefined)[] = new Array(n);
    // Each call's rules when it is checked here; null when it goes to the workers.
    const chosen: (RuleChoice | null)[] = new Array(n);
    const pooled: number[] = [];
    const poolCost: number[] = [];
    const clock = this.opts.clock ?? performance.now.bind(performance);
    for (let i = 0; i < n; i++) {
      const call = calls[i]!;
      const choice = plan.compiled ? selectRules(plan.compiled, shapeOf(call)) : null;
      const cost = choice ? this.inlineCost(choice.rules, call) : Infinity;
      if (cost <= INLINE_US) chosen[i] = choice;
      else {
        chosen[i] = null;
        pooled.push(i);
        poolCost.push(Number.isFinite(cost) ? cost : INLINE_US);
      }
    }
    // The workers start first; the loop's share runs meanwhile.
    const fromPool = pooled.length > 0 ? this.inPool(plan, pooled.map((i) => calls[i]!), poolCost, counted) : Promise.resolve([]);
    // Settled even if the slices below throw: no rejection left unhandled.
    fromPool.catch(() => undefined);
    // One reading of the clock per check: each check's end is the next one's start.
    let sliceStart = clock();
    let now = sliceStart;
    // Each call's check (ms); a call sent to the workers counts as costlier than any.
    const took = new Float64Array(n).fill(Infinity);
    for (let i = 0; i < n; i++) {
      const choice = chosen[i];
      if (!choice) continue;
      if (now - sliceStart > SLICE_MS) {
        backgroundSlices.record('plan checks', now - sliceStart);
        await new Promise((resolve) => setImmediate(resolve));
        sliceStart = now = clock();
      }
      const t = now;
      out[i] = checkCall(plan.compiled!, plan.settings, calls[i]!, choice);
      now = clock();
      const ms = now - t;
      took[i] = ms;
      if (ms > DEMOTE_MS) this.demote(plan, calls[i]!, ms);
    }
    if (plan.compiled && calls.length >= REQUEST_MIN_CALLS) this.measure(plan.compiled, trimmedMeanUs(took));
    const verdicts = await fromPool;
    pooled.forEach((i, k) => (out[i] = verdicts[k]));
    return out;
  }

  /**
   * Where a request of this plan goes: to the workers whole when it is not compiled on the loop or its
   * calls were measured costly there ('sample': one in REMEASURE_EVERY measures a few first); on the
   * loop otherwise, and the first time, to be measured.
   */
  private way(compiled: CompiledPlan | undefined): 'loop' | 'workers' | 'sample' {
    if (!compiled) return 'workers';
    const line = this.opts.handoverCallUs ?? HANDOVER_CALL_US;
    const m = this.measured.get(compiled);
    if (!m) return line <= 0 ? 'workers' : 'loop';
    if (m.us < line) return 'loop';
    return ++m.since % REMEASURE_EVERY === 0 ? 'sample' : 'workers';
  }

  private measure(compiled: CompiledPlan, usPerCall: number): void {
    const m = this.measured.get(compiled);
    if (!m) this.measured.set(compiled, { us: usPerCall, since: 0 });
    else m.us = Number.isFinite(m.us) && Number.isFinite(usPerCall) ? 0.75 * m.us + 0.25 * usPerCall : usPerCall;
  }

  private async inPool(plan: PlanToCheck, calls: Record<string, unknown>[], costUs: number[], counted: { unfinished: number }): Promise<(PlanVerdict | undefined)[]> {
    try {
      return await this.pool().check(this.poolPlan(plan), plan.settings, calls, costUs, counted);
    } catch (err) {
      return this.failed(plan, calls.length, err);
    }
  }

  private poolPlan(plan: PlanToCheck) {
    return { key: `${plan.id}:${plan.updatedAt}`, id: plan.id, name: plan.name, rules: plan.rules };
  }

  /** What stands for `n` verdicts when the workers found the plan does not compile, or could not run. */
  private failed(plan: PlanToCheck, n: number, err: unknown): (PlanVerdict | undefined)[] {
    if (err instanceof PlanNotCompiled) {
      this.onNotCompiled(plan.id, plan.updatedAt, err);
      return new Array<undefined>(n).fill(undefined);
    }
    // The workers could not run at all (their file missing, the lab stopping): not a pass either.
    const why = `the check workers could not run it (${err instanceof Error ? err.message : String(err)})`;
    return Array.from({ length: n }, () => unfinishedVerdict(plan, plan.settings, why));
  }

  /** The call's estimated worst check on the loop (µs) under its rules; Infinity when it must go to the workers. */
  private inlineCost(rules: CompiledRule[], call: Record<string, unknown>): number {
    let worst = 0;
    for (const r of rules) {
      if (r.pooled || this.demoted.has(r)) return Infinity;
      worst += r.costUs[SIZE_BUCKETS.length - 1] ?? Infinity;
    }
    if (worst <= INLINE_US) return worst;
    // Costly only for large calls: judged by this call's size (what the estimate counts, counted in it).
    const bytes = sizeOfCall(call);
    return rules.reduce((us, r) => us + costFor(r.costUs, bytes), 0);
  }

  private demote(plan: PlanToCheck, call: Record<string, unknown>, ms: number): void {
    const { rules } = selectRules(plan.compiled!, shapeOf(call));
    const own = rules.filter((r) => r.rule.type !== 'COMMON');
    const blamed = own.length > 0 ? own : rules;
    let out = false;
    for (const r of blamed) {
      const n = (this.strikes.get(r) ?? 0) + 1;
      this.strikes.set(r, n);
      if (n < DEMOTE_STRIKES) continue;
      this.demoted.add(r);
      out = true;
    }
    if (!out) return;
    this.log(`check worker: plan "${plan.name}": a check took ${Math.round(ms)} ms on the event loop (${DEMOTE_STRIKES} over ${DEMOTE_MS} ms); the calls of ${(own.length > 0 ? own : rules).map((r) => `${r.rule.type}${r.rule.key ? ` "${r.rule.key}"` : ''}`).join(', ')} are checked in the workers from now on`);
  }
}

/**
 * The mean of a request's check times (ms) in µs, its costliest tenth left out: a validator's first
 * run, or the thread preempted on a busy machine, is not the plan's cost. Infinity when more than a
 * tenth of its calls went to the workers on their own.
 */
function trimmedMeanUs(took: Float64Array): number {
  const kept = took.length - Math.max(1, Math.floor(took.length / 10));
  took.sort();
  let sum = 0;
  for (let k = 0; k < kept; k++) sum += took[k]!;
  return (sum * 1000) / kept;
}

/**
 * A size for the call that bounds what the estimate counts (work-bounds.ts: values ≤ bytes/2, keys of
 * an object ≤ bytes/6, characters ≤ bytes), from the call itself: its values, keys and characters.
 * Serializing the call again to measure it cost more than its check (2.5 µs against 1 µs a call).
 * Stops counting past the largest call size: an estimate for that is the most there is.
 */
export function sizeOfCall(call: unknown): number {
  const LIMIT = SIZE_BUCKETS[SIZE_BUCKETS.length - 1]!;
  if (typeof call !== 'object' || call === null) return typeof call === 'string' ? Math.min(LIMIT, Math.max(2, call.length)) : 2;
  // Each value counted where it is met; only objects and arrays are stacked (half the time of
  // stacking every value: this runs for each call of a plan whose worst case needs its size).
  let values = 1;
  let keys = 0;
  let chars = 0;
  const stack: object[] = [call];
  while (stack.length > 0) {
    const v = stack.pop()!;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const x: unknown = v[i];
        // A long array or object is looked at every 1,024 values too, so counting stops near the limit.
        if ((++values & 1023) === 0 && over(values, keys, chars, LIMIT)) return LIMIT;
        if (typeof x === 'string') chars += x.length;
        else if (typeof x === 'object' && x !== null) stack.push(x);
      }
    } else {
      for (const k in v) {
        const x: unknown = (v as Record<string, unknown>)[k];
        if ((++values & 1023) === 0 && over(values, keys, chars, LIMIT)) return LIMIT;
        keys++;
        chars += k.length;
        if (typeof x === 'string') chars += x.length;
        else if (typeof x === 'object' && x !== null) stack.push(x);
      }
    }
    if (over(values, keys, chars, LIMIT)) return LIMIT;
  }
  return Math.max(values * 2, keys * 6, chars);
}

const over = (values: number, keys: number, chars: number, limit: number) => values * 2 > limit || keys * 6 > limit || chars > limit;
