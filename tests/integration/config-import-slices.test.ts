import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testLab } from '../helpers/test-lab';
import { openDbFile } from '../helpers/db-file';
import { ensureBuilt, startServe, stopServe } from '../helpers/serve';
import type { Store } from '../../src/main/engine/store/store';
import type { TrackingPlans } from '../../src/main/engine/tracking-plans/service';
import { importConfig } from '../../src/main/engine/import-config';
import { configSchema, type Config } from '../../src/shared/config.schema';

// Issue 38: a config import writes the sources it creates in slices, the loop's other work between
// them, and commits them with the rest of the config in one transaction: whole or not at all still.
// The slices' turns are the test's here, so what happens between them is arranged, not raced.

const lab = testLab();
const RECEIVERS = { receiverBase: (tls: boolean) => (tls ? 'https://127.0.0.1:8790' : 'http://127.0.0.1:8789') };
const manySources = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => ({ name: `s-${from + i}`, writeKey: `wk_s_${from + i}`, webhooks: { enabled: true, urls: [{ url: `https://r.example/${from + i}` }], sharedSecret: `secret-${from + i}` } }));
const config = (c: Record<string, unknown>): Config => configSchema.parse(c);

/** What the import left in the table beside the sources: rows of imports that did not commit. */
function leftovers(dataDir: string): { marked: number; imports: number; sources: number; secrets: number; keys: number } {
  const db = openDbFile(dataDir);
  try {
    const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    return {
      marked: count('SELECT count(*) AS n FROM sources WHERE import_id IN (SELECT id FROM config_imports)'),
      imports: count('SELECT count(*) AS n FROM config_imports'),
      sources: count('SELECT count(*) AS n FROM sources'),
      secrets: count('SELECT count(*) AS n FROM source_secrets WHERE retired_at IS NULL'),
      keys: count('SELECT count(*) AS n FROM source_keys'),
    };
  } finally {
    db.close();
  }
}

async function labWithStore() {
  let store: Store | undefined;
  let plans: TrackingPlans | undefined;
  const t = await lab.start({ onStore: (s, p) => ((store = s), (plans = p)), config: { sources: [{ name: 'first', writeKey: 'wk_first' }] } });
  return { t, store: store!, plans: plans! };
}

describe('a config import in slices', () => {
  it('writes its new sources a slice at a time, none of them a source until the import commits, their names and keys reserved meanwhile', async () => {
    const { t, store, plans } = await labWithStore();
    let turns = 0;
    const seen: { sources: number; refusals: string[] }[] = [];
    const applied = await importConfig(store, plans, config({ sources: manySources(3_000) }), Date.now(), RECEIVERS, async () => {
      turns++;
      const refusals: string[] = [];
      for (const input of [{ name: 's-2999' }, { name: 'other', writeKey: 'wk_s_0' }]) {
        try {
          store.sources.create(input, Date.now());
        } catch (err) {
          refusals.push((err as Error).message);
        }
      }
      seen.push({ sources: (await t.call('listSources', {})).length, refusals });
    });
    expect(applied.warnings).toEqual([]);
    expect(turns).toBeGreaterThan(1);
    // Between slices: still one source, and the import's names and write keys were taken.
    expect(seen.every((s) => s.sources === 1)).toBe(true);
    expect(seen[0]!.refusals).toEqual(['name: a config import is creating a source named "s-2999"', 'writeKey: a config import is giving it to a source it creates']);
    const sources = await t.call('listSources', {});
    expect(sources).toHaveLength(3_001);
    expect(sources.find((s) => s.name === 's-1234')).toMatchObject({ writeKey: 'wk_s_1234', webhooks: { sharedSecret: 'secret-1234' }, secretVersions: { sharedSecret: { version: 1 } } });
    expect(leftovers(t.dataDir)).toEqual({ marked: 0, imports: 0, sources: 3_001, secrets: 3_000, keys: 3_001 });
    // Calls reach them at once.
    expect((await t.post('/v1/track', { userId: 'u', event: 'E' }, { writeKey: 'wk_s_2999' })).status).toBe(200);
  });

  it('refused by what changed between its slices: nothing of it stays, and its names are free again', async () => {
    const { t, store, plans } = await labWithStore();
    let arranged = false;
    const given = config({ sources: [{ name: 'first', writeKey: 'wk_taken' }, ...manySources(2_000)] });
    const refused = importConfig(store, plans, given, Date.now(), RECEIVERS, async () => {
      // Another source takes the write key the config gives "first", while the import is writing.
      if (!arranged) store.sources.create({ name: 'meanwhile', writeKey: 'wk_taken' }, Date.now());
      arranged = true;
    });
    await expect(refused).rejects.toMatchObject({ status: 409, message: 'sources[0].writeKey: already used by source "meanwhile"' });
    expect(arranged).toBe(true);
    expect((await t.call('listSources', {})).map((s) => s.name).sort()).toEqual(['first', 'meanwhile']);
    expect(leftovers(t.dataDir)).toEqual({ marked: 0, imports: 0, sources: 2, secrets: 0, keys: 2 });
    // The names it had reserved are free again, and the same config minus the clash imports.
    expect(store.sources.create({ name: 's-5', writeKey: 'wk_s_5' }, Date.now()).name).toBe('s-5');
    store.sources.delete(store.sources.byName('s-5')!.id);
    await importConfig(store, plans, config({ sources: manySources(2_000) }), Date.now(), RECEIVERS);
    expect(await t.call('listSources', {})).toHaveLength(2_002);
  });

  it('stopped between its slices (the lab stopping, its client cut off): 503, nothing of it stays; the lab then refuses imports at once', async () => {
    // Found by a review: an import whose connection the control API's close had cut (no answer) went
    // on and committed while the engine stopped; after a restart its 10,000 sources were there.
    const { t, store, plans } = await labWithStore();
    let turns = 0;
    let stopped = false;
    const cut = importConfig(store, plans, config({ sources: manySources(2_000) }), Date.now(), RECEIVERS, async () => {
      if (++turns === 3) stopped = true;
    }, () => stopped);
    await expect(cut).rejects.toMatchObject({ status: 503, code: 'unavailable', message: 'the lab is stopping: the config import was not applied; nothing of it was kept' });
    // Three turns of writing, then its sources taken back (the undo has turns of its own).
    expect(turns).toBeGreaterThanOrEqual(3);
    expect((await t.call('listSources', {})).map((s) => s.name)).toEqual(['first']);
    expect(leftovers(t.dataDir)).toEqual({ marked: 0, imports: 0, sources: 1, secrets: 0, keys: 1 });

    // Through the engine: once the control API cut what it will not answer, no import commits.
    t.engine.abandonUnanswered();
    await expect(t.call('importConfig', config({ sources: manySources(5) }))).rejects.toMatchObject({ status: 503, message: expect.stringMatching(/^the lab is stopping/) });
    expect(await t.call('listSources', {})).toHaveLength(1);
  });
});

describe('a config import over stored sources', () => {
  it('leaves the sources it gives as they are, and still applies itself to one changed between its slices', async () => {
    const { t, store, plans } = await labWithStore();
    await importConfig(store, plans, config({ sources: manySources(500) }), Date.now(), RECEIVERS);
    const given = manySources(500);
    given[5]!.webhooks.urls = [{ url: 'https://r.example/moved' }];
    const before = store.sources.byName('s-9');
    let changed = false;
    await importConfig(store, plans, config({ sources: given }), Date.now(), RECEIVERS, async () => {
      // Between its slices, another writer changes s-7: the import gives it back its own URL.
      if (!changed) store.sources.update(store.sources.byName('s-7')!.id, { webhooks: { enabled: true, urls: [{ url: 'https://elsewhere.example/', headers: {} }] } });
      changed = true;
    });
    const url = (name: string) => store.sources.byName(name)!.webhooks.urls[0]!.url;
    expect([url('s-5'), url('s-7'), url('s-9')]).toEqual(['https://r.example/moved', 'https://r.example/7', 'https://r.example/9']);
    // An unchanged source is the same object: it was not written again.
    expect(store.sources.byName('s-9')).toBe(before);
    expect(await t.call('listSources', {})).toHaveLength(501);
  });
});

describe('a config import cut short by kill -9', () => {
  it('leaves none of its sources after the restart', async () => {
    ensureBuilt();
    const dataDir = mkdtempSync(join(tmpdir(), 'wl-import-kill-'));
    try {
      const first = await startServe(['--data-dir', dataDir]);
      const body = JSON.stringify({ sources: manySources(20_000) });
      const posted = fetch(`${first.api}/config`, { method: 'POST', headers: { authorization: `Bearer ${first.token}`, 'content-type': 'application/json' }, body }).catch(() => undefined);
      // Killed once some of its sources are written and the import has not committed: watched from a
      // reader of the file, as often as it can read (each slice commits, so the reader sees it).
      const db = openDbFile(dataDir);
      const marked = db.prepare('SELECT count(*) AS n FROM sources WHERE import_id IN (SELECT id FROM config_imports)');
      let caught = 0;
      for (const until = Date.now() + 60_000; Date.now() < until && caught === 0; ) {
        caught = (marked.get() as { n: number }).n;
        if (caught === 0) await new Promise((r) => setImmediate(r));
      }
      first.child.kill('SIGKILL');
      await new Promise((r) => first.child.once('exit', r));
      db.close();
      await posted;
      expect(caught, 'the import was seen under way').toBeGreaterThan(0);

      const again = await startServe(['--data-dir', dataDir]);
      try {
        const sources = await (await fetch(`${again.api}/sources`, { headers: { authorization: `Bearer ${again.token}` } })).json();
        expect(sources.filter((s: { name: string }) => s.name.startsWith('s-'))).toEqual([]);
      } finally {
        await stopServe(again);
      }
      const left = leftovers(dataDir);
      expect(left).toMatchObject({ marked: 0, imports: 0, secrets: 0 });
      // No key of a source that never was (each source has its own).
      expect(left.keys).toBe(left.sources);
      const db2 = openDbFile(dataDir);
      expect(db2.pragma('integrity_check', { simple: true })).toBe('ok');
      db2.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
