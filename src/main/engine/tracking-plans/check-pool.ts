import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { PlanVerdict, TrackingPlanRule } from '../../../shared/tracking-plan.schema';
import { unfinishedVerdict, type Enforcement, type RequestCalls } from './check';
import { COMPILED, INDEX, PHASE, Phase, PROGRESS_CELLS, SINCE, TID, unpackVerdicts, type CheckTask, type Compiled, type CompileTask, type RuleTiming, type WorkerResult } from './worker-protocol';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { workerFile } from '../worker-file';
import { SpentMeter } from '../thread-cpu';

// Checks and compiles off the event loop (issue 38): the collector, the control API, the UI and the
// dispatcher share one loop, and a plan's check can take seconds within every documented limit.
// A pool of worker threads (piscina) runs them with a budget of the worker's CPU time: a call's check
// 250 ms, a rule's compile 5 s (not wall time: on a machine whose cores other programs keep busy, a
// valid call's check ran past 250 ms and was flagged). A worker past its budget is terminated (piscina's abort does that to a running task, and starts
// another worker); the call gets the verdict check_timeout, never a pass.
//
// Why piscina: it is kept up by Node's own contributors, its abort of a running task terminates the
// worker (tinypool, its fork, has fewer features and its cancel only drops queued tasks), and it
// replaces crashed workers. The budget is counted from when a worker starts the call (a progress
// cell in shared memory says what it does since when), not from when the call was queued.

/** Budgets in the worker thread's CPU time (thread-cpu.ts), or wall time where a thread's CPU time cannot be read. */
export const CHECK_BUDGET_MS = 250;
export const COMPILE_BUDGET_MS = 5_000;
/**
 * A task is stopped after this many budgets of wall-clock time whatever CPU time it used: a bound that
 * ends a task the watchdog cannot measure, far past what a starved one needs (a valid check on a core
 * shared with a busy program took about 3 × its CPU time).
 */
const WALL_FACTOR = 40;
/** After this many calls of one request ran out of budget, the rest are not tried (each costs a worker). */
const UNFINISHED_PER_REQUEST = 3;
/** Calls sent in one task, at most, and at most this much estimated work (a timeout checks again what its task had done). */
const CHUNK_CALLS = 100;
const CHUNK_US = 50_000;
/**
 * Tasks per worker, running and waiting, past which a batch of a plan costly to check on the loop is
 * checked the loop's way all the same (plan-checks.ts). At 2, on a busy machine two batches in three
 * were (the workers there answer slowly).
 */
const ROOM_PER_THREAD = 4;

export interface PoolPlan {
  /** The plan's id and version: what a worker's compiled plan is cached by. */
  key: string;
  id: string;
  name: string;
  rules: TrackingPlanRule[];
}

/**
 * What checkRequest gives: every verdict, or the call whose check stopped the task (`stoppedAt`: it is
 * unfinished; those before it lost their verdicts with the worker), or null when none was reached;
 * `none`: no call of the request can be checked (its plan's compile ran out of budget).
 */
export type RequestOutcome = { ok: true; verdicts: PlanVerdict[] } | { ok: false; stoppedAt: number | null; why: string; none?: boolean };

export type CompileOutcome = { ok: true; rules: RuleTiming[] } | { ok: false; index: number; reason: string };

/** A plan a worker could not compile: its calls are not checked (the plan is set aside, service.ts). */
export class PlanNotCompiled extends Error {
  constructor(
    readonly index: number,
    readonly reason: string,
  ) {
    super(reason);
  }
}

type Ran = { ok: true; result: WorkerResult } | { ok: false; phase: number; index: number; why: string; timedOut: boolean };

const nowAbs = () => performance.timeOrigin + performance.now();

export interface PoolStats {
  threads: number;
  /** Plans compiled in a worker (each worker compiles each plan it checks, once per version). */
  compiles: number;
  timeouts: number;
  crashes: number;
}

/** The check worker's file (check-worker.ts, built as plan-check-worker.js). */
export function checkWorkerFile(): Promise<string> {
  return workerFile('plan-check-worker', join(__dirname, 'check-worker.ts'), 'the tracking-plan check worker');
}

export class CheckPool {
  private pool: Promise<Piscina> | undefined;
  private readonly counts = { compiles: 0, timeouts: 0, crashes: 0 };
  private closed = false;
  private readonly exits = new Map<Worker, Promise<void>>();
  /** Tasks given to piscina and not yet ended. */
  private running = 0;

  constructor(
    private readonly opts: {
      /** Where compiles are said (the engine's log). */
      log?: (line: string) => void;
      threads?: number;
      /** The worker's file (tests give one that wraps it); default: checkWorkerFile(). */
      workerFile?: () => Promise<string>;
    } = {},
  ) {}

  stats(): PoolStats {
    return { threads: this.opts.threads ?? defaultThreads(), ...this.counts };
  }

  private piscina(): Promise<Piscina> {
    if (this.closed) return Promise.reject(new Error('the check pool is closed'));
    return (this.pool ??= (this.opts.workerFile ?? checkWorkerFile)().then((filename) => {
      const threads = this.opts.threads ?? defaultThreads();
      // A check's heap is bounded too: one that runs away ends its worker (a crash, its call unfinished), not the lab.
      // Not at a lower priority (piscina's niceIncrement): a worker deprioritized beside a busy program
      // booted in seconds, and where the budget is wall-clock time (no /proc) ran ordinary checks past it.
      const pool = new Piscina({ filename, minThreads: 1, maxThreads: threads, idleTimeout: 60_000, resourceLimits: { maxOldGenerationSizeMb: 512, stackSizeMb: 8 } });
      pool.on('workerCreate', () => this.noteThreads(pool));
      this.noteThreads(pool);
      return pool;
    }));
  }

  /** Notes the pool's threads, each with its exit: close() waits for every one (see there). */
  private noteThreads(pool: Piscina): void {
    for (const thread of pool.threads) {
      if (this.exits.has(thread)) continue;
      // Listed in pool.threads, it has not exited yet: piscina drops a thread from the list as it exits.
      this.exits.set(thread, new Promise<void>((done) => thread.once('exit', () => (this.exits.delete(thread), done()))));
    }
  }

  /** Compiles a plan in a worker (which keeps it for its checks): each rule's time and estimated cost, or the first rule that does not compile. */
  async compile(plan: PoolPlan): Promise<CompileOutcome> {
    for (let attempt = 0; ; attempt++) {
      const ran = await this.run(plan, (progress, epoch): CompileTask => ({ kind: 'compile', key: plan.key, id: plan.id, name: plan.name, rules: plan.rules, progress, epoch }));
      if (ran.ok) {
        if (ran.result.kind === 'refused') return { ok: false, index: ran.result.index, reason: ran.result.reason };
        if (ran.result.kind !== 'compiled') throw new Error(`check worker answered ${ran.result.kind} to a compile`);
        this.compiled(plan, ran.result.compiled);
        return { ok: true, rules: ran.result.rules };
      }
      if (ran.timedOut && ran.phase === Phase.compiling) return { ok: false, index: ran.index, reason: `it took over ${COMPILE_BUDGET_MS / 1000} s to compile (in a check worker), so it is refused` };
      // A worker that crashed compiling is tried once more before the rule is blamed.
      if (attempt >= 1) return { ok: false, index: ran.index, reason: `compiling it stopped its check worker (${ran.why})` };
    }
  }

  /**
   * Checks calls in the workers, in order: one verdict per call, an unfinished one (check_timeout) for a
   * call whose check ran out of budget or whose worker stopped. Throws PlanNotCompiled when a worker
   * cannot compile the plan. `costUs`: each call's estimated cost, for cutting them into tasks.
   */
  async check(plan: PoolPlan, settings: Enforcement, calls: Record<string, unknown>[], costUs: number[], request = { unfinished: 0 }): Promise<PlanVerdict[]> {
    const chunks: [number, number][] = [];
    for (let from = 0; from < calls.length; ) {
      let to = from + 1;
      let us = costUs[from] ?? 0;
      while (to < calls.length && to - from < CHUNK_CALLS && us + (costUs[to] ?? 0) <= CHUNK_US) us += costUs[to++] ?? 0;
      chunks.push([from, to]);
      from = to;
    }
    const parts = await Promise.all(chunks.map(([from, to]) => this.checkChunk(plan, settings, calls.slice(from, to), request)));
    return parts.flat();
  }

  /**
   * The workers have room: fewer than ROOM_PER_THREAD tasks each, running or waiting (a batch's calls
   * may go to them instead of the loop; behind a queue of hostile checks, each holding a worker up to
   * its budget, they do not).
   */
  hasRoom(): boolean {
    return !this.closed && this.running < ROOM_PER_THREAD * (this.opts.threads ?? defaultThreads());
  }

  /**
   * A request's calls checked in one task from the request's body (plan-checks.ts: a batch of a plan
   * measured costly to check on the loop, when the workers have room): their verdicts, or where the task stopped (a call past its budget, a
   * crash), for the caller to check the rest its own way (as if the task had not been tried).
   */
  async checkRequest(plan: PoolPlan, settings: Enforcement, request: RequestCalls): Promise<RequestOutcome> {
    let withRules = false;
    for (;;) {
      const ran = await this.run(plan, (progress, epoch): CheckTask => ({ kind: 'check', key: plan.key, id: plan.id, name: plan.name, rules: withRules ? plan.rules : undefined, settings, request, progress, epoch }));
      if (ran.ok) {
        const r = ran.result;
        if (r.kind === 'missing' && !withRules) {
          withRules = true;
          continue;
        }
        if (r.kind === 'refused') throw new PlanNotCompiled(r.index, r.reason);
        if (r.kind !== 'checked') throw new Error(`check worker answered ${r.kind} to a check`);
        this.compiled(plan, r.compiled);
        return { ok: true, verdicts: unpackVerdicts(r.verdicts) };
      }
      if (ran.phase === Phase.checking) return { ok: false, stoppedAt: ran.index, why: ran.why };
      if (ran.phase === Phase.compiling && ran.timedOut) return { ok: false, stoppedAt: null, why: `its plan took over ${COMPILE_BUDGET_MS / 1000} s to compile in a check worker`, none: true };
      // Stopped before it checked anything (reading the request, a crash): nothing is known.
      return { ok: false, stoppedAt: null, why: ran.why };
    }
  }

  private async checkChunk(plan: PoolPlan, settings: Enforcement, calls: Record<string, unknown>[], request: { unfinished: number }): Promise<PlanVerdict[]> {
    const out: PlanVerdict[] = [];
    let withRules = false;
    let crashedBeforeStart = 0;
    for (let start = 0; start < calls.length; ) {
      if (request.unfinished >= UNFINISHED_PER_REQUEST) {
        const why = `${request.unfinished} calls of its request ran out of their check budget, so the rest were not tried`;
        for (; start < calls.length; start++) out.push(unfinishedVerdict(plan, settings, why));
        break;
      }
      const part = calls.slice(start);
      const ran = await this.run(plan, (progress, epoch): CheckTask => ({ kind: 'check', key: plan.key, id: plan.id, name: plan.name, rules: withRules ? plan.rules : undefined, settings, calls: part, progress, epoch }));
      if (ran.ok) {
        const r = ran.result;
        if (r.kind === 'missing') {
          withRules = true;
          continue;
        }
        if (r.kind === 'refused') throw new PlanNotCompiled(r.index, r.reason);
        if (r.kind !== 'checked') throw new Error(`check worker answered ${r.kind} to a check`);
        this.compiled(plan, r.compiled);
        out.push(...unpackVerdicts(r.verdicts));
        break;
      }
      // A fresh worker has no compiled plan: send the rules with the next task.
      withRules = true;
      if (ran.phase === Phase.checking) {
        // Calls before the one stopped were checked, but their verdicts went with the worker: again.
        if (ran.index > 0) out.push(...(await this.checkChunk(plan, settings, part.slice(0, ran.index), request)));
        out.push(unfinishedVerdict(plan, settings, ran.why));
        request.unfinished++;
        start += ran.index + 1;
        continue;
      }
      if (ran.phase === Phase.compiling && ran.timedOut) {
        const why = `its plan took over ${COMPILE_BUDGET_MS / 1000} s to compile in a check worker`;
        for (; start < calls.length; start++) out.push(unfinishedVerdict(plan, settings, why));
        request.unfinished += UNFINISHED_PER_REQUEST;
        break;
      }
      // Crashed before it checked anything: tried again once, then not.
      if (++crashedBeforeStart > 1) {
        for (; start < calls.length; start++) out.push(unfinishedVerdict(plan, settings, ran.why));
        request.unfinished += UNFINISHED_PER_REQUEST;
      }
    }
    return out;
  }

  private compiled(plan: PoolPlan, done: Compiled): void {
    if (done === null) return;
    this.counts.compiles++;
    // NaN: the worker was stopped after it (its check ran out of budget), so the time is not known.
    const took = Number.isNaN(done.ms) ? 'by a worker stopped later' : `in ${Math.round(done.ms)} ms`;
    this.opts.log?.(`check worker: plan "${plan.name}" compiled (${done.rules} of ${plan.rules.length} rule${plan.rules.length === 1 ? '' : 's'}) ${took}`);
  }

  /** Runs one task under the watchdog: its result, or where it stopped and why. */
  private async run(plan: PoolPlan, make: (progress: SharedArrayBuffer, epoch: number) => CompileTask | CheckTask): Promise<Ran> {
    // Counted from now, not from when piscina has it: hasRoom() is asked synchronously by the next request.
    this.running++;
    try {
      return await this.runCounted(plan, make);
    } finally {
      this.running--;
    }
  }

  private async runCounted(plan: PoolPlan, make: (progress: SharedArrayBuffer, epoch: number) => CompileTask | CheckTask): Promise<Ran> {
    const pool = await this.piscina();
    const sab = new SharedArrayBuffer(PROGRESS_CELLS * Int32Array.BYTES_PER_ELEMENT);
    const progress = new Int32Array(sab);
    const epoch = nowAbs();
    const abort = new AbortController();
    let timedOut = false;
    let stoppedAt = { phase: 0, index: 0 };
    let timer: NodeJS.Timeout | undefined;
    const meter = new SpentMeter();
    // Re-armed for the deadline of what the worker does now; a task still queued is looked at again shortly.
    const watch = () => {
      const phase = Atomics.load(progress, PHASE);
      const index = Atomics.load(progress, INDEX);
      const since = Atomics.load(progress, SINCE);
      const budget = phase === Phase.compiling ? COMPILE_BUDGET_MS : phase === Phase.checking ? CHECK_BUDGET_MS : Infinity;
      const wall = nowAbs() - epoch - since;
      // CPU time (the worker may be given a slice of a busy core), and a far wall-clock bound behind it.
      const spent = budget === Infinity ? 0 : meter.spent(Atomics.load(progress, TID), `${phase}:${index}:${since}`, wall);
      const left = Math.min(budget - spent, budget * WALL_FACTOR - wall);
      if (left <= 0) {
        timedOut = true;
        stoppedAt = { phase, index };
        abort.abort();
        return;
      }
      // A thread's CPU time grows no faster than the clock: nothing can be over budget before `left` ms.
      timer = setTimeout(watch, Math.min(left + 1, 50));
    };
    timer = setTimeout(watch, 50);
    try {
      const running = pool.run(make(sab, epoch), { signal: abort.signal });
      // A thread piscina started for this task is noted before the watchdog can abort it.
      this.noteThreads(pool);
      const result = (await running) as WorkerResult;
      return { ok: true, result };
    } catch (err) {
      // Where the watchdog saw it over budget (the worker may have moved on before it ended).
      const { phase, index } = timedOut ? stoppedAt : { phase: Atomics.load(progress, PHASE), index: Atomics.load(progress, INDEX) };
      // A plan it compiled before it was stopped counts as compiled (its worker is gone with it).
      const fresh = Atomics.load(progress, COMPILED);
      if (fresh > 0) this.compiled(plan, { rules: fresh, ms: NaN });
      if (timedOut) {
        this.counts.timeouts++;
        const what = phase === Phase.compiling ? `compiling rule ${index + 1}` : 'its check';
        return { ok: false, phase, index, timedOut, why: `${what} ran past its budget of ${phase === Phase.compiling ? `${COMPILE_BUDGET_MS / 1000} s` : `${CHECK_BUDGET_MS} ms`} of CPU time and was stopped` };
      }
      if (this.closed) throw err;
      this.counts.crashes++;
      return { ok: false, phase, index, timedOut, why: `its check worker stopped (${err instanceof Error ? err.message : String(err)})` };
    } finally {
      clearTimeout(timer);
    }
  }

  private closing: Promise<void> | undefined;

  /** Ends every worker thread; a second call waits for the same end (it returned at once while the first still waited). */
  close(): Promise<void> {
    return (this.closing ??= this.closeOnce());
  }

  private async closeOnce(): Promise<void> {
    this.closed = true;
    const pending = this.pool;
    this.pool = undefined;
    const pool = await pending?.catch(() => undefined);
    if (!pool) return;
    await pool.destroy();
    // A thread the watchdog's abort ended may exit only after destroy() returned, and piscina then
    // replaces it (minThreads) though destroyed: a thread would outlive the lab's stop (and load the
    // worker file again). Wait for every thread the pool had to exit, then end any such replacement.
    await Promise.all(this.exits.values());
    if (pool.threads.length > 0) await pool.destroy();
  }
}

/**
 * One thread less than the machine has cores (the loop keeps one), at least one, at most four. On two
 * cores, two workers spinning on hostile checks beside the loop took its health answer's p99 from 49
 * to 131 ms (bench, hostile row); one kept it at 63 ms. Checks past the workers wait in order.
 */
function defaultThreads(): number {
  // Asked by hasRoom() for every batch with a plan: availableParallelism() is a system call each time.
  return (threadsOnce ??= Math.max(1, Math.min(4, availableParallelism() - 1)));
}
let threadsOnce: number | undefined;
