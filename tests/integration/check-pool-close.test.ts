import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CheckPool, checkWorkerFile } from '../../src/main/engine/tracking-plans/check-pool';
import type { Enforcement } from '../../src/main/engine/tracking-plans/check';
import { waitFor } from '../helpers/engine';

// The lab's stop leaves no check worker behind. A worker the watchdog stops ends only when it next
// runs JavaScript; one busy in native code (here pbkdf2Sync) exits later, and piscina starts another
// in its place when it does (minThreads), even after destroy(). That thread outlived the stop: with
// Vitest's files sharing a process it loaded a worker file its test had already removed (issue 44).

const linux = existsSync('/proc/thread-self');
const SETTINGS: Enforcement = { unplannedEvents: 'allow', unplannedProperties: 'allow', violations: 'block' };
const RULES = [{ type: 'TRACK' as const, key: 'Stuck', version: 1, jsonSchema: { type: 'object' } }];
const plan = { key: 'close:1', id: 'close', name: 'plan', rules: RULES };
const files: string[] = [];
afterAll(() => {
  for (const f of files) rmSync(f, { force: true });
});

const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);

describe.runIf(linux)('closing the check pool', () => {
  it('waits for a stopped worker still in native code, and no worker starts after it', async () => {
    const real = await checkWorkerFile();
    const wrapper = join(dirname(real), `stuck-worker-${process.pid}.cjs`);
    const log = join(dirname(real), `stuck-worker-${process.pid}.log`);
    files.push(wrapper, log);
    // Each worker notes its load; on a call named "Stuck" it notes its thread id, says it is checking
    // (the watchdog's cells), then runs pbkdf2 for seconds of CPU (well past the 250 ms budget on any machine), where termination cannot reach it.
    writeFileSync(
      wrapper,
      `const { appendFileSync, readlinkSync } = require('node:fs');
const real = require(${JSON.stringify(real)});
appendFileSync(${JSON.stringify(log)}, 'loaded\\n');
module.exports = function (task) {
  if (task.kind === 'check' && task.calls.some((c) => c.event === 'Stuck')) {
    const tid = Number(/task\\/(\\d+)$/.exec(readlinkSync('/proc/thread-self'))[1]);
    appendFileSync(${JSON.stringify(log)}, 'stuck ' + tid + '\\n');
    const p = new Int32Array(task.progress);
    Atomics.store(p, 4, tid);
    Atomics.store(p, 2, Math.round(performance.timeOrigin + performance.now() - task.epoch));
    Atomics.store(p, 1, 0);
    Atomics.store(p, 0, 2);
    require('node:crypto').pbkdf2Sync('x', 'y', 3_000_000, 64, 'sha512');
  }
  return (real.default ?? real)(task);
};
`,
    );
    const pool = new CheckPool({ threads: 1, workerFile: async () => wrapper });
    const [verdict] = await pool.check(plan, SETTINGS, [{ type: 'track', event: 'Stuck', userId: 'u' }], [0]);
    expect(verdict).toMatchObject({ violations: [expect.objectContaining({ kind: 'check_timeout' })] });
    const stuck = Number(lines(log).find((l) => l.startsWith('stuck '))!.slice('stuck '.length));
    expect(stuck).toBeGreaterThan(0);

    const closing = pool.close();
    // A second close waits for the same end (it returned at once while the first still waited).
    await pool.close();
    // Closed: the stopped thread has exited (close waited for it), and nothing was started after.
    expect(existsSync(`/proc/self/task/${stuck}`), 'the stopped worker thread is gone').toBe(false);
    const loadsAtClose = lines(log).filter((l) => l === 'loaded').length;
    // A replacement would load the wrapper within a moment of that exit; give it 3 s to show up.
    let later = loadsAtClose;
    await waitFor(() => (later = lines(log).filter((l) => l === 'loaded').length) > loadsAtClose, 'a worker loaded after close', 3_000).catch(() => undefined);
    expect(later, 'a worker loaded after the pool was closed').toBe(loadsAtClose);
    await closing;
  }, 120_000);
});
