import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HEAP_FLAGS } from '../../src/main/heap-tuning';

const PROBE = join(__dirname, '../fixtures/pretenuring-probe.cjs');

/** How many of 1,000 objects from a site whose earlier objects all survived are still allocated young. */
function youngAfterSurvivors(flags: readonly string[]): number {
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--expose-gc', PROBE, JSON.stringify(flags)], { encoding: 'utf8', timeout: 60_000 });
  return (JSON.parse(out) as { young: number }).young;
}

describe('heap tuning (the engine process’s V8 flags)', () => {
  // The control asserts V8's own heuristic (Node 20's V8): should a later V8 stop pretenuring here,
  // this fails, and the flag's worth needs measuring again rather than assuming.
  it('without the flags, V8 pretenures a site whose objects survived: the probe can tell', () => {
    // Most runs all 1,000 are allocated old; in a few V8 decides while they are counted (201, 725 of
    // them young in CI), and once, on a CI run pinned to one core beside a busy loop, after (all
    // 1,000 young): some allocated old in one of three runs is what tells.
    const runs: number[] = [];
    while (runs.length < 3 && !runs.some((young) => young < 1000)) runs.push(youngAfterSurvivors([]));
    expect(runs.some((young) => young < 1000), `young of 1,000 in each run: ${runs.join(', ')}`).toBe(true);
  });

  it('with them, set after start-up as tuneHeap() does, the site’s objects stay young', () => {
    // Batch ingestion ran 20 % slower in runs where V8 had pretenured the collector's sites.
    expect(youngAfterSurvivors(HEAP_FLAGS)).toBe(1000);
  });
});
