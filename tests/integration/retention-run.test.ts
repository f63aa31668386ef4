import { afterEach, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../../src/main/engine/store/store';
import { Ingest } from '../../src/main/engine/collector/ingest';
import { arrivalPlanner } from '../../src/main/engine/dispatcher/delivery-plan';
import { SLICE_CHUNK } from '../../src/main/engine/store/retention';
import { openDbFile } from '../helpers/db-file';

// Issue 38: retention's slices stay short. Its cutoff (the newest call to go: `keep` calls down from
// the newest) is counted in steps over several slices and serves the whole run; these hold it to
// what one count at once gives: never a call too many removed, whatever happens between slices.

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const STEP = 7;

function open(keep: number) {
  const dataDir = mkdtempSync(join(tmpdir(), 'wl-retention-'));
  dirs.push(dataDir);
  const store = new Store({ dataDir, cutoffStep: STEP });
  store.sources.create({ name: 'src', writeKey: 'wk_src' }, Date.now());
  store.settings.apply({ retentionCalls: keep });
  const ingest = new Ingest(store, () => Date.now(), arrivalPlanner(() => store.settings.get()), () => {});
  let n = 0;
  const send = async (count: number) => {
    for (let left = count; left > 0; left -= 100) {
      const batch = Array.from({ length: Math.min(100, left) }, () => ({ type: 'track', userId: 'u', event: 'E', messageId: `m${n++}` }));
      const r = await ingest.handle({ path: '/v1/batch', route: 'batch', authorization: `Basic ${Buffer.from('wk_src:').toString('base64')}`, body: Buffer.from(JSON.stringify({ batch })) });
      expect(r.status).toBe(200);
    }
  };
  const ids = (): number[] => {
    const db = openDbFile(dataDir);
    try {
      return db.prepare('SELECT id FROM calls ORDER BY id').pluck().all() as number[];
    } finally {
      db.close();
    }
  };
  /** Slices until the run is over (or `until` says stop); how many there were. */
  const slices = (until: (s: { removed: number; more: boolean }, i: number) => boolean = () => false) => {
    for (let i = 0; ; i++) {
      const s = store.pruneSlice();
      if (!s.more || until(s, i)) return i + 1;
    }
  };
  return { store, send, ids, slices, dataDir };
}

it('keeps exactly the newest calls, counting the cutoff over several slices first', async () => {
  const lab = open(150);
  await lab.send(400);
  const before = lab.ids();
  let searching = 0;
  lab.slices((s) => {
    if (s.removed === 0) searching++;
    return false;
  });
  expect(lab.ids()).toEqual(before.slice(-150));
  // 150 counted STEP at a time, then the removal a chunk at a time.
  expect(searching).toBeGreaterThanOrEqual(Math.ceil(150 / STEP));
  // At or under the limit: nothing to do, at once.
  expect(lab.store.pruneSlice()).toEqual({ removed: 0, more: false });
  lab.store.close();
});

it('calls that arrive during the run are kept, and the next run brings the store down to the limit', async () => {
  const lab = open(150);
  await lab.send(400);
  const old = lab.ids();
  // Arrivals in the middle of the count.
  lab.slices((_, i) => i === 5);
  await lab.send(60);
  lab.slices();
  const now = lab.ids();
  // The 150 newest when the run began, and all 60 since: the cutoff counted below where it began.
  expect(now).toEqual([...old.slice(-150), ...now.slice(-60)]);
  lab.slices();
  expect(lab.ids()).toEqual(now.slice(-150));
  lab.store.close();
});

it('a removal by anything else during the run starts it over: the newest calls left are kept, never fewer than the limit', async () => {
  const lab = open(100);
  await lab.send(2 * SLICE_CHUNK + 150);
  const all = lab.ids();
  // The cutoff found and part removed.
  lab.slices((s) => s.removed > 0);
  expect(lab.ids().length).toBe(all.length - SLICE_CHUNK);
  // The newest 80 calls erased (a deletion request): the cutoff found before would now keep 20.
  const newest = all.slice(-80);
  await lab.store.writes.run((tx) => lab.store.erasure.ofCalls(tx, newest));
  lab.slices();
  const left = all.slice(0, -80);
  expect(lab.ids()).toEqual(left.slice(-100));
  lab.store.close();
});

it('a limit changed during the run is the one kept', async () => {
  const lab = open(150);
  await lab.send(300);
  const all = lab.ids();
  lab.slices((_, i) => i === 3);
  lab.store.settings.apply({ retentionCalls: 250 });
  lab.slices();
  expect(lab.ids()).toEqual(all.slice(-250));
  lab.store.settings.apply({ retentionCalls: 100 });
  lab.slices((_, i) => i === 3);
  lab.store.settings.apply({ retentionCalls: 120 });
  lab.slices();
  expect(lab.ids()).toEqual(all.slice(-120));
  lab.store.close();
});

it('a removal by anything else while the run counts starts it over: with the store at the limit, it ends at once, nothing removed', async () => {
  const lab = open(150);
  await lab.send(160);
  const all = lab.ids();
  expect(lab.store.pruneSlice()).toEqual({ removed: 0, more: true });
  await lab.store.writes.run((tx) => lab.store.erasure.ofCalls(tx, all.slice(0, 20)));
  expect(lab.store.pruneSlice()).toEqual({ removed: 0, more: false });
  expect(lab.ids()).toEqual(all.slice(20));
  // Erasing nothing (a user with no calls) does not start a run over.
  const before = lab.store.calls.removals;
  await lab.store.writes.run((tx) => lab.store.erasure.ofUser(tx, 'nobody'));
  expect(lab.store.calls.removals).toBe(before);
  lab.store.close();
});

// Found by review: the request bodies behind a call kept for its delivery are cleaned up once the run
// is over; when its last chunk was exactly SLICE_CHUNK the run ended on a slice that removed nothing,
// and the cleanup was skipped.
it('a run whose calls come out in whole chunks still cleans up the requests no call needs', async () => {
  const lab = open(100);
  await lab.send(1);
  // The oldest call waits in an Actions batch: kept, and the requests after its own are not removed with the chunks.
  const held = lab.ids()[0]!;
  const db = openDbFile(lab.dataDir, { write: true });
  db.prepare("INSERT INTO actions_batch_items (source_id, mapping, call_id, data, queued_at) VALUES ('s', 'm', ?, '{}', 0)").run(held);
  db.close();
  // One call a request: 2 × SLICE_CHUNK to remove, in exactly two chunks.
  for (let i = 0; i < 2 * SLICE_CHUNK + 100; i++) await lab.send(1);
  lab.slices();
  const left = lab.ids();
  expect(left).toHaveLength(101);
  expect(left[0]).toBe(held);
  const check = openDbFile(lab.dataDir);
  const requests = check.prepare('SELECT COUNT(*) FROM requests').pluck().get();
  const needed = check.prepare('SELECT COUNT(DISTINCT request_id) FROM calls').pluck().get();
  check.close();
  expect(requests).toBe(needed);
  lab.store.close();
});

// Store.prune() runs the slices to the end: a step of 0 (a test's option) must not make that endless.
it('a cutoff step of 0 still counts: prune() ends, keeping exactly the newest', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'wl-retention-'));
  dirs.push(dataDir);
  const store = new Store({ dataDir, cutoffStep: 0 });
  try {
    store.sources.create({ name: 'src', writeKey: 'wk_src' }, Date.now());
    store.settings.apply({ retentionCalls: 5 });
    const ingest = new Ingest(store, () => Date.now(), arrivalPlanner(() => store.settings.get()), () => {});
    const batch = Array.from({ length: 12 }, (_, i) => ({ type: 'track', userId: 'u', event: 'E', messageId: `z${i}` }));
    const r = await ingest.handle({ path: '/v1/batch', route: 'batch', authorization: `Basic ${Buffer.from('wk_src:').toString('base64')}`, body: Buffer.from(JSON.stringify({ batch })) });
    expect(r.status).toBe(200);
    expect(store.prune()).toBe(7);
  } finally {
    store.close();
  }
});

