import { afterEach, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../../src/main/engine/store/store';
import { TrackingPlansRepo } from '../../src/main/engine/tracking-plans/plans.repo';
import { mulberry32, randomSeed } from '../../src/main/engine/seeded-random';

// checked_requests has no index on its time (migration 28, issue 38): reads by time find their first
// request by a search over the request ids. Requests are numbered as stored and stamped as they
// arrive, so a request that waited (a collector fault's delay of up to 60 s, its plan check) has a
// time older than requests numbered before it. Whatever `since`, the figures must be those of a scan
// of every row.

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

it('totals and per-rule counts since any time are those of a scan of every row, requests that waited included', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'wl-checked-time-'));
  dirs.push(dataDir);
  const store = new Store({ dataDir });
  const repo = store.featureRepo((db) => new TrackingPlansRepo(db));
  const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : randomSeed();
  console.log(`checked-requests-time seed ${seed} (FUZZ_SEED=${seed} to repeat)`);
  const rand = mulberry32(seed);
  const rows: { id: number; source: string; plan: string; at: number; checked: number; rules: Record<string, number> }[] = [];
  const t0 = 1_800_000_000_000;
  let clock = t0;
  let id = 1;
  for (let i = 0; i < 3_000; i++) {
    clock += Math.floor(rand() * 2_000);
    // One in ten waited up to 60 s before it was stored (a delay fault); ids also skip (requests with no checked call).
    const at = rand() < 0.1 ? clock - Math.floor(rand() * 60_000) : clock;
    id += 1 + Math.floor(rand() * 3);
    const rules = { [`TRACK\u001fE${i % 3}\u001f1`]: 1 + (i % 5) };
    rows.push({ id, source: rand() < 0.5 ? 's1' : 's2', plan: rand() < 0.7 ? 'p1' : 'p2', at, checked: 1 + (i % 5), rules });
  }
  store.writes.flush();
  for (const r of rows) repo.recordChecked(r.id, r.source, r.plan, r.at, r.checked, JSON.stringify(r.rules));
  const end = clock;
  for (let k = 0; k < 200; k++) {
    const since = t0 - 10_000 + Math.floor(rand() * (end - t0 + 20_000));
    const sourceId = k % 3 === 0 ? undefined : k % 3 === 1 ? 's1' : 's2';
    const inWindow = rows.filter((r) => r.at >= since);
    expect(repo.totals(since, sourceId).checked, `since ${since}, ${sourceId ?? 'all'}`).toBe(inWindow.filter((r) => !sourceId || r.source === sourceId).reduce((n, r) => n + r.checked, 0));
    const matched = new Map<string, number>();
    for (const r of inWindow.filter((r) => r.plan === 'p1')) for (const [rule, n] of Object.entries(r.rules)) matched.set(rule, (matched.get(rule) ?? 0) + n);
    expect(repo.matchedByRule('p1', since), `since ${since}`).toEqual(matched);
  }
  // Nothing checked: nothing found, and no search past the end.
  expect(repo.totals(end + 1, undefined).checked).toBe(0);
  store.close();
});
