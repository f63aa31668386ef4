import { afterEach, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../../src/main/engine/store/store';
import { TrackingPlansRepo } from '../../src/main/engine/tracking-plans/plans.repo';
import { mulberry32, randomSeed } from '../../src/main/engine/seeded-random';
import { openDbFile } from '../helpers/db-file';

// checked_requests has no index on its time (migration 28, issue 38): reads by time find their first
// request by a search over the request ids on seen_by, the latest time of the rows up to each one.
// Requests are numbered as stored and stamped as they arrive: one that waited (a collector fault's
// delay, its check, a laptop asleep) has a time older than requests numbered before it, and a clock
// set back stamps later requests earlier. Whatever `since`, the figures must be those of a scan.

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

type Row = { id: number; source: string; plan: string; at: number; checked: number; rules: Record<string, number> };

/** Requests as a lab may store them: mostly in time order, some late by up to 20 minutes, and the clock set back 3 hours once. */
function requests(rand: () => number, n: number, t0: number): Row[] {
  const rows: Row[] = [];
  let clock = t0;
  let id = 1;
  for (let i = 0; i < n; i++) {
    clock += Math.floor(rand() * 2_000);
    if (i === Math.floor(n * 0.6)) clock -= 3 * 3_600_000;
    const late = rand();
    const at = late < 0.08 ? clock - Math.floor(rand() * 60_000) : late < 0.1 ? clock - Math.floor(rand() * 20 * 60_000) : clock;
    // Ids skip too (requests with no checked call).
    id += 1 + Math.floor(rand() * 3);
    const rules = { [`TRACK\u001fE${i % 3}\u001f1`]: 1 + (i % 5) };
    rows.push({ id, source: rand() < 0.5 ? 's1' : 's2', plan: rand() < 0.7 ? 'p1' : 'p2', at, checked: 1 + (i % 5), rules });
  }
  return rows;
}

function expectScanFigures(repo: TrackingPlansRepo, rows: Row[], rand: () => number) {
  const times = rows.map((r) => r.at);
  const lo = Math.min(...times) - 10_000;
  const hi = Math.max(...times) + 10_000;
  for (let k = 0; k < 300; k++) {
    const since = lo + Math.floor(rand() * (hi - lo));
    const sourceId = k % 3 === 0 ? undefined : k % 3 === 1 ? 's1' : 's2';
    const inWindow = rows.filter((r) => r.at >= since);
    expect(repo.totals(since, sourceId).checked, `since ${since}, ${sourceId ?? 'all'}`).toBe(inWindow.filter((r) => !sourceId || r.source === sourceId).reduce((n, r) => n + r.checked, 0));
    const matched = new Map<string, number>();
    for (const r of inWindow.filter((r) => r.plan === 'p1')) for (const [rule, n] of Object.entries(r.rules)) matched.set(rule, (matched.get(rule) ?? 0) + n);
    expect(repo.matchedByRule('p1', since), `since ${since}`).toEqual(matched);
  }
  expect(repo.totals(hi, undefined).checked).toBe(0);
}

const seeded = (name: string) => {
  const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : randomSeed();
  console.log(`${name} seed ${seed} (FUZZ_SEED=${seed} to repeat)`);
  return mulberry32(seed);
};

it('totals and per-rule counts since any time are those of a scan of every row: late requests, a clock set back', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'wl-checked-time-'));
  dirs.push(dataDir);
  const store = new Store({ dataDir });
  const repo = store.featureRepo((db) => new TrackingPlansRepo(db));
  const rand = seeded('checked-requests-time');
  const rows = requests(rand, 3_000, 1_800_000_000_000);
  for (const r of rows) repo.recordChecked(r.id, r.source, r.plan, r.at, r.checked, JSON.stringify(r.rules));
  expectScanFigures(repo, rows, rand);
  store.close();
});

it('rows stored before migration 28 get their seen_by from the rows up to them', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'wl-checked-time-'));
  dirs.push(dataDir);
  new Store({ dataDir }).close();
  const rand = seeded('checked-requests-time (migration)');
  const rows = requests(rand, 1_000, 1_800_000_000_000);
  // As migration 27 left it: no seen_by, the index on the time.
  const db = openDbFile(dataDir, { write: true });
  db.exec('ALTER TABLE checked_requests DROP COLUMN seen_by; CREATE INDEX checked_requests_time ON checked_requests(received_at)');
  const insert = db.prepare('INSERT INTO checked_requests (request_id, source_id, plan_id, received_at, checked, rules) VALUES (?, ?, ?, ?, ?, ?)');
  db.transaction(() => rows.forEach((r) => insert.run(r.id, r.source, r.plan, r.at, r.checked, JSON.stringify(r.rules))))();
  db.pragma('user_version = 27');
  db.close();
  const store = new Store({ dataDir });
  const repo = store.featureRepo((d) => new TrackingPlansRepo(d));
  expectScanFigures(repo, rows, rand);
  // Rows after them continue from theirs.
  const later = requests(rand, 200, Math.max(...rows.map((r) => r.at)) - 3_600_000).map((r) => ({ ...r, id: r.id + 10_000 }));
  for (const r of later) repo.recordChecked(r.id, r.source, r.plan, r.at, r.checked, JSON.stringify(r.rules));
  expectScanFigures(repo, [...rows, ...later], rand);
  store.close();
  const check = openDbFile(dataDir);
  expect(check.prepare("SELECT COUNT(*) FROM sqlite_master WHERE name = 'checked_requests_time'").pluck().get()).toBe(0);
  check.close();
});
