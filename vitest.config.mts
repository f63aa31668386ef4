import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest, longest first, each CPU-bound one (seeded fuzz, CLI processes) next to
 * one that mostly waits out real timeouts (a probe's 10 s limits, a 6 s receiver, a 10 s stall), so
 * the two workers do not start on the two fuzz files at once. Vitest orders files by the durations
 * of its last run, kept in node_modules/.vite; a fresh clone (CI) has none and orders by file size,
 * which put the 40 s probe-timeouts last: the other worker sat idle for its whole run.
 */
const LONGEST_FIRST = [
  'tests/integration/collector-fuzz.test.ts',
  'tests/integration/probe-timeouts.test.ts',
  'tests/integration/config-fuzz.test.ts',
  'tests/integration/probe.test.ts',
  'tests/integration/delivery.test.ts',
  'tests/integration/cli-check-not-api.test.ts',
  'tests/integration/npm-package.test.ts',
  'tests/integration/stalled-clients.test.ts',
  'tests/integration/testing-module.test.ts',
  'tests/integration/actions-ledger.test.ts',
  'tests/integration/cli-check.test.ts',
  'tests/integration/actions-delivery.test.ts',
  'tests/integration/actions-batch-detail.test.ts',
  'tests/integration/docs-ci.test.ts',
  'tests/integration/cli-probe.test.ts',
];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = LONGEST_FIRST.findIndex((p) => f.moduleId.replaceAll('\\', '/').endsWith(p));
      return i === -1 ? LONGEST_FIRST.length : i;
    };
    return sorted.map((f, i) => ({ f, i, r: rank(f) })).sort((a, b) => a.r - b.r || a.i - b.i).map(({ f }) => f);
  }
}

export default defineConfig({
  test: {
    include: ['tests/unit/**/*.test.ts', 'tests/integration/**/*.test.ts'],
    environment: 'node',
    // Upper bounds that catch a hang, not speed targets: machines of this kind differ 3× in speed and
    // CI's may be shared (issue 44: a test spawning thirteen CLI processes took over 30 s there).
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Integration tests bind real sockets and open real SQLite files. One worker more than the cores
    // this process may use: several files mostly wait out real timeouts (a probe's 10 s limits, a 6 s
    // receiver), and a third worker fills that wait (Vitest 585 s → 508 s on an idle 2-core machine).
    // Pinned to one core (`taskset -c 0`), that is two, as before. At most three: the count follows
    // CPU affinity, not a container's CPU quota, and each worker binds sockets and opens SQLite files.
    pool: 'forks',
    // A worker keeps its modules from one file to the next instead of starting afresh for each: the
    // engine's graph took ~1.2 s to load per file, 298 s of the 643 s run (40 s without isolation;
    // Vitest 643 s → 516 s idle, and far more pinned beside a busy loop, issue 44). Tests restore what
    // they stub (timers, spies, globals) and nothing in tests/ sets process-wide state.
    isolate: false,
    setupFiles: ['tests/setup/nothing-left-on.ts'],
    maxWorkers: Math.min(availableParallelism(), 2) + 1,
    sequence: { sequencer: LongestFirst },
  },
});
