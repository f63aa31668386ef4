import { callsOfRequest, checkCall, PlanCompiler, RuleCompileError, unfinishedVerdict, type CompiledPlan } from './check';
import { compileRule } from './compile';
import type { PlanVerdict } from '../../../shared/tracking-plan.schema';
import { currentThreadId } from '../thread-cpu';
import { COMPILED, Phase, PHASE, INDEX, SINCE, TID, packVerdicts, type CheckTask, type Compiled, type CompileTask, type RuleTiming, type WorkerResult } from './worker-protocol';

// A check worker (issue 38): one of the threads of check-pool.ts, run by piscina. It compiles plans
// (functions do not cross threads: each worker compiles its own, cached by plan key) and checks calls
// against them, saying through a shared progress cell what it is doing since when, so the engine's
// thread can stop it (terminate) when a rule's compile passes 5 s of this thread's CPU time or a
// call's check 250 ms.

// Ajv's two instances, their formats and RE2 are made at the first compile (~250 ms): made now, so
// the time taken by a plan's first rule is its own (a rule over 10 ms stays off the loop: plan-gates.ts).
compileRule({ type: 'COMMON', version: 1, jsonSchema: { type: 'object', properties: { a: { type: 'string', pattern: '^a', format: 'email' } } } });
compileRule({ type: 'COMMON', version: 1, jsonSchema: { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' } });

/** Plans compiled in this worker, by key; the oldest used is dropped past this many. */
const CACHED_PLANS = 8;
const cache = new Map<string, { plan: CompiledPlan; timings: RuleTiming[] }>();

const now = () => performance.timeOrigin + performance.now();
const thread = currentThreadId();

/** Who, since when, then what: the engine's thread reads INDEX before SINCE, so it never pairs a call with an older start. */
function mark(progress: Int32Array, epoch: number, phase: number, index: number): void {
  Atomics.store(progress, TID, thread);
  Atomics.store(progress, SINCE, Math.round(now() - epoch));
  Atomics.store(progress, INDEX, index);
  Atomics.store(progress, PHASE, phase);
}

function compiled(task: CompileTask | CheckTask, progress: Int32Array): { kind: 'ok'; timings: RuleTiming[]; compiled: Compiled | null } | WorkerResult {
  const hit = cache.get(task.key);
  if (hit) {
    cache.delete(task.key);
    cache.set(task.key, hit);
    return { kind: 'ok', timings: hit.timings, compiled: null };
  }
  if (!task.rules) return { kind: 'missing' };
  // Rules unchanged from a cached plan (an earlier version of this one) are taken, not compiled again.
  const reuse = [...cache.values()].map((c) => c.plan);
  const compiler = new PlanCompiler(task.id, task.name, task.rules, reuse);
  const timings: RuleTiming[] = [];
  let fresh = 0;
  const t0 = performance.now();
  for (;;) {
    const index = compiler.index;
    if (index >= task.rules.length) break;
    mark(progress, task.epoch, Phase.compiling, index);
    const content = JSON.stringify(task.rules[index]);
    if (!reuse.some((p) => p.byContent.has(content)) && !compiler.plan.byContent.has(content)) fresh++;
    const t = performance.now();
    let more: boolean;
    try {
      more = compiler.step();
    } catch (err) {
      if (err instanceof RuleCompileError) return { kind: 'refused', index: err.index, reason: err.reason };
      // A stack overflow in Ajv's code generation is the rule's fault, said like any other compile error.
      return { kind: 'refused', index, reason: err instanceof Error ? err.message : String(err) };
    }
    const c = compiler.plan.byContent.get(content);
    timings.push({ compileMs: performance.now() - t, compileUs: c?.compileUs ?? 0, costUs: c?.costUs ?? [] });
    if (!more) break;
  }
  cache.set(task.key, { plan: compiler.plan, timings });
  while (cache.size > CACHED_PLANS) cache.delete(cache.keys().next().value!);
  Atomics.store(progress, COMPILED, fresh);
  // A plan whose every rule was taken from another (the same rules under a new key) is no compile.
  return { kind: 'ok', timings, compiled: fresh > 0 ? { rules: fresh, ms: performance.now() - t0 } : null };
}

export default function run(task: CompileTask | CheckTask): WorkerResult {
  const progress = new Int32Array(task.progress);
  const ready = compiled(task, progress);
  if (ready.kind !== 'ok') return ready;
  if (task.kind === 'compile') return { kind: 'compiled', rules: ready.timings, compiled: ready.compiled };
  const plan = cache.get(task.key)!.plan;
  const calls = task.calls ?? callsOfRequest(task.request!);
  const verdicts: PlanVerdict[] = [];
  for (let i = 0; i < calls.length; i++) {
    mark(progress, task.epoch, Phase.checking, i);
    try {
      verdicts.push(checkCall(plan, task.settings, calls[i]!));
    } catch (err) {
      // Ajv's generated code can still throw (a stack overflow): that call is not checked, the others are.
      verdicts.push(unfinishedVerdict(plan, task.settings, `its check failed (${err instanceof Error ? err.message : String(err)})`));
    }
  }
  return { kind: 'checked', verdicts: packVerdicts(task.id, verdicts), compiled: ready.compiled };
}
