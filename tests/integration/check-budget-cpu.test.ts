import { rmSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CheckPool, checkWorkerFile } from '../../src/main/engine/tracking-plans/check-pool';
import type { Enforcement } from '../../src/main/engine/tracking-plans/check';
import { currentThreadId, SpentMeter, threadCpuMs } from '../../src/main/engine/thread-cpu';

// A check's budget is the worker thread's CPU time, not the clock's (issue 44): with both cores kept
// busy by other programs, a valid call's check ran past 250 ms of wall time and was flagged
// check_timeout. A worker that waits a second without running (as a starved one does) is not stopped;
// one that spins is, as before.

const linux = existsSync('/proc/thread-self');
const SETTINGS: Enforcement = { unplannedEvents: 'allow', unplannedProperties: 'allow', violations: 'block' };
const RULES = [{ type: 'TRACK' as const, key: 'Cheap', version: 1, jsonSchema: { type: 'object', properties: { properties: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } } } }];
const plan = { key: 'cpu:1', id: 'cpu', name: 'plan', rules: RULES };
const pools: CheckPool[] = [];
const files: string[] = [];
afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
  for (const f of files) rmSync(f, { force: true });
});

/** What the real worker's mark() writes (worker-protocol.ts cells), from a wrapper: this thread's id, since when, which, what. */
const markJs = `function mark(task, phase, index) {
  const p = new Int32Array(task.progress);
  const tid = Number(/task\\/(\\d+)$/.exec(require('node:fs').readlinkSync('/proc/thread-self'))[1]);
  Atomics.store(p, 4, tid);
  Atomics.store(p, 2, Math.round(performance.timeOrigin + performance.now() - task.epoch));
  Atomics.store(p, 1, index);
  Atomics.store(p, 0, phase);
}`;

/** The real worker, which before checking a call named "Nap" waits `ms` without using the CPU, and spins on one named "Spin". */
async function wrappedPool(napMs: number): Promise<CheckPool> {
  const real = await checkWorkerFile();
  const wrapper = join(dirname(real), `napping-worker-${process.pid}-${files.length}.cjs`);
  files.push(wrapper);
  writeFileSync(
    wrapper,
    `const real = require(${JSON.stringify(real)});
${markJs}
module.exports = function (task) {
  const at = task.kind === 'check' ? task.calls.findIndex((c) => c.event === 'Nap' || c.event === 'Spin') : -1;
  if (at >= 0) {
    mark(task, 2, at);
    if (task.calls[at].event === 'Spin') for (;;);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${napMs});
  }
  return (real.default ?? real)(task);
};
`,
  );
  const pool = new CheckPool({ threads: 1, workerFile: async () => wrapper });
  pools.push(pool);
  return pool;
}

describe.runIf(linux)('the check budget counts CPU time', () => {
  it('reads a thread\'s CPU time: it grows while the thread runs, not while it sleeps', () => {
    const tid = currentThreadId();
    expect(tid).toBeGreaterThan(0);
    const before = threadCpuMs(tid)!;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    const slept = threadCpuMs(tid)! - before;
    const meter = new SpentMeter();
    expect(meter.spent(tid, 'a', 0)).toBe(0);
    // Spin until this thread has used 60 ms of CPU, as /proc says (it must say so, or this never ends).
    const start = threadCpuMs(tid)!;
    while (threadCpuMs(tid)! - start < 60);
    expect(meter.spent(tid, 'a', 0)).toBeGreaterThanOrEqual(60);
    expect(slept).toBeLessThan(60);
    // A new piece of work is counted from when it is first seen.
    expect(meter.spent(tid, 'b', 0)).toBe(0);
    // Where the thread's CPU time cannot be read (no such thread), wall time stands.
    expect(new SpentMeter().spent(2 ** 30, 'a', 123)).toBe(123);
  });

  it('a worker that waits 1 s (four budgets) without running checks its call as ever; one that spins is stopped with check_timeout', async () => {
    const pool = await wrappedPool(1_000);
    const calls = [
      { type: 'track', event: 'Cheap', properties: { n: 1 } },
      { type: 'track', event: 'Nap', properties: {} },
      { type: 'track', event: 'Cheap', properties: {} },
    ];
    const verdicts = await pool.check(plan, SETTINGS, calls, [0, 0, 0]);
    expect(verdicts.map((v) => v.violations.map((x) => x.kind)), JSON.stringify(verdicts)).toEqual([[], ['unplanned_event'], ['required_missing']]);
    expect(pool.stats().timeouts).toBe(0);

    const spun = await pool.check(plan, SETTINGS, [{ type: 'track', event: 'Spin', properties: {} }, { type: 'track', event: 'Cheap', properties: { n: 2 } }], [0, 0]);
    expect(spun[0]!.violations).toEqual([expect.objectContaining({ kind: 'check_timeout', message: expect.stringMatching(/its check ran past its budget of 250 ms of CPU time and was stopped/) })]);
    expect(spun[1]!.violations).toEqual([]);
    expect(pool.stats().timeouts).toBe(1);
  });
});
