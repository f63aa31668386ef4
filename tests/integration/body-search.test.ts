import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Store } from '../../src/main/engine/store/store';
import type { Source } from '../../src/shared/types';
import { startTestEngine, waitFor, type TestEngine } from '../helpers/engine';

// "Search bodies" over a real SQLite file (issue 27): a trigram index fed in the background
// (store/body-search.ts), the calls it has not reached read from their bodies. Each test holds the
// indexer (pause) and moves it by hand (step, catchUp), so "behind" and "caught up" are exact states.

let te: TestEngine | undefined;
let dirs: string[] = [];

afterEach(async () => {
  await te?.stop({ keepData: true }).catch(() => undefined);
  te = undefined;
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

async function lab(dataDir?: string, overrides?: { retentionCalls?: number }): Promise<{ t: TestEngine; store: Store; source: Source }> {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'wl-body-search-'));
  if (!dataDir) dirs.push(dir);
  let store!: Store;
  // Held from the start: the indexer's first slice waits for the start's pages anyway (1.5 s).
  const t = await startTestEngine({ dataDir: dir, overrides, onStore: (s) => ((store = s), s.calls.bodyIndex.pause()) });
  te = t;
  const sources = await t.call('listSources', {});
  const source = sources.find((s) => s.name === 'body-search') ?? (await t.call('createSource', { name: 'body-search', webhooks: { enabled: false, sharedSecret: '', urls: [] } }));
  return { t, store, source };
}

async function send(t: TestEngine, source: Source, items: Record<string, unknown>[]): Promise<void> {
  for (let i = 0; i < items.length; i += 100) {
    expect((await t.post('/v1/batch', { batch: items.slice(i, i + 100) }, { writeKey: source.writeKey })).status).toBe(200);
  }
}

/** The messageIds of every call a body search lists, page by page through the cursor, with the total each page gave. */
async function search(t: TestEngine, q: string, limit = 500): Promise<{ ids: string[]; totals: number[]; callIds: number[] }> {
  const ids: string[] = [];
  const callIds: number[] = [];
  const totals: number[] = [];
  let before: number | undefined;
  for (;;) {
    const page = await t.call('listMessages', { q, body: '1', limit, ...(before === undefined ? {} : { before }) } as never);
    ids.push(...page.items.map((c) => c.messageId!));
    callIds.push(...page.items.map((c) => c.id));
    totals.push(page.total);
    if (page.next === null) break;
    before = page.next;
  }
  return { ids, totals, callIds };
}

const sorted = (xs: string[]) => [...xs].sort();

describe('body search (trigram index fed in the background)', () => {
  const people = [
    { type: 'identify', userId: 'a', messageId: 'm-emile', traits: { name: 'ÉMILE Zola', city: 'Paris' } },
    { type: 'track', userId: 'b', messageId: 'm-greek', event: 'E', properties: { note: 'ΣΟΦΊΑ und Straße' } },
    { type: 'track', userId: 'c', messageId: 'm-key', event: 'E', properties: { CheckoutStep: 3, flag: true } },
    { type: 'track', userId: 'd', messageId: 'm-nested', event: 'E', properties: { items: [{ sku: 'SKU-Blue-42' }, 'Gift "Wrap"'] } },
    { type: 'track', userId: 'e', messageId: 'm-number', event: 'E', properties: { total: 12345 } },
    // A lone surrogate (JSON "\ud800"): stored text is UTF-8, so it is U+FFFD in the index; the bodies
    // read behind it must say the same (found by review: found only once indexed).
    { type: 'track', userId: 'f', messageId: 'm-lone', event: 'E', properties: { note: 'zq\ud800w' } },
  ];
  // term → messageIds, by the shared rule (keys and string values, folded; numbers not searched).
  const expected: [string, string[]][] = [
    ['émile', ['m-emile']],
    ['ÉMILE zola', ['m-emile']],
    ['σοφία', ['m-greek']],
    ['STRASSE', []],
    ['straße', ['m-greek']],
    ['checkoutstep', ['m-key']],
    ['sku-blue', ['m-nested']],
    ['gift "wrap"', ['m-nested']],
    ['12345', []],
    ['e-42', ['m-nested']],
    ['absent-term', []],
    // Under three characters: not in the index, read from the bodies; the same answers.
    ['zo', ['m-emile']],
    // In the fields (messageId) and in the bodies alike: each call once.
    ['m-', ['m-emile', 'm-greek', 'm-key', 'm-nested', 'm-number', 'm-lone']],
    ['m-e', ['m-emile']],
    ['ß', ['m-greek']],
    ['"w', ['m-nested']],
    // A line break: not in the index (it separates the values there); read from the bodies.
    ['zola\nparis', []],
    ['zq\ufffdw', ['m-lone']],
    ['q\ufffd', ['m-lone']],
    ['zq\ud800w', ['m-lone']],
  ];

  it('finds substrings in any letter case, non-ASCII and short terms included, the same behind and once indexed', async () => {
    const { t, store, source } = await lab();
    await send(t, source, people);
    const index = store.calls.bodyIndex;
    expect(index.watermark).toBe(0);
    const behind = new Map<string, string[]>();
    for (const [q, want] of expected) {
      const got = sorted((await search(t, q)).ids);
      expect(got, `behind: ${JSON.stringify(q)}`).toEqual(sorted(want));
      behind.set(q, got);
    }
    expect(index.catchUp()).toBe(people.length);
    expect(index.behind()).toBe(0);
    for (const [q, want] of expected) expect(sorted((await search(t, q)).ids), `indexed: ${JSON.stringify(q)}`).toEqual(sorted(want));
    // The index itself answered the terms of three characters or more (it holds the calls' text)…
    expect(index.indexedMatches('émile')).toHaveLength(1);
    expect(index.indexedMatches('sku-blue')).toHaveLength(1);
    expect(index.indexedMatches('absent-term')).toEqual([]);
    // …and leaves the others to the bodies.
    expect(index.indexedMatches('zo')).toBeNull();
    expect(index.indexedMatches('zola\nparis')).toBeNull();
  });

  it('pages through matches with the cursor without skipping or repeating, across indexed calls and the tail', async () => {
    const { t, store, source } = await lab();
    // 450 calls, every third holding the term in a value, in another letter case each time.
    const items = Array.from({ length: 450 }, (_, i) => ({
      type: 'track', userId: `u${i}`, messageId: `p-${i}`, event: 'Paged', properties: { tag: i % 3 === 0 ? ['needle', 'NEEDLE', 'NeEdLe'][i % 9 / 3] : 'hay' },
    }));
    await send(t, source, items);
    const want = items.filter((_, i) => i % 3 === 0).map((c) => c.messageId);
    // Part indexed: the mark stands inside the matches, so pages straddle the index and the tail.
    store.calls.bodyIndex.step(1000, 200);
    expect(store.calls.bodyIndex.watermark).toBeGreaterThan(0);
    expect(store.calls.bodyIndex.behind()).toBe(250);
    for (const limit of [7, 50, 100]) {
      const r = await search(t, 'needle', limit);
      expect(r.ids).toHaveLength(want.length);
      expect(new Set(r.ids).size).toBe(want.length);
      expect(sorted(r.ids)).toEqual(sorted(want));
      // Newest first, and every page counted the same total.
      expect(r.callIds).toEqual([...r.callIds].sort((a, b) => b - a));
      expect(new Set(r.totals)).toEqual(new Set([want.length]));
    }
    // The indexer moving on between two pages changes nothing.
    const first = await t.call('listMessages', { q: 'needle', body: '1', limit: 100 } as never);
    store.calls.bodyIndex.catchUp();
    const second = await t.call('listMessages', { q: 'needle', body: '1', limit: 100, before: first.next! } as never);
    expect(second.items[0]!.id).toBeLessThan(first.items[first.items.length - 1]!.id);
    expect([...first.items, ...second.items].map((c) => c.messageId)).toEqual(
      [...want].reverse().slice(0, 200),
    );
    // With another filter too (the query's own test, not the merge of two lists).
    const typed = await t.call('listMessages', { q: 'needle', body: '1', type: 'track', sourceId: source.id, limit: 500 } as never);
    expect(sorted(typed.items.map((c) => c.messageId!))).toEqual(sorted(want));
  });

  it('counts a call its fields match but its body does not (a messageId the lab made) once, behind and indexed', async () => {
    const { t, store, source } = await lab();
    await send(t, source, [
      { type: 'track', userId: 'no-id-user', event: 'E', properties: { word: 'plain' } },
      ...Array.from({ length: 30 }, (_, i) => ({ type: 'track', userId: `w${i}`, messageId: `w-${i}`, event: 'E', properties: { word: 'Walnut' } })),
    ]);
    const made = (await t.call('listMessages', { q: 'no-id-user', limit: 10 } as never)).items[0]!.messageId!;
    expect(made.length).toBeGreaterThan(6);
    const part = made.slice(-6);
    for (const when of ['behind', 'indexed']) {
      if (when === 'indexed') store.calls.bodyIndex.catchUp();
      const page = await t.call('listMessages', { q: part, body: '1', limit: 10 } as never);
      expect(page.items.map((c) => c.messageId), when).toEqual([made]);
      expect(page.total, when).toBe(1);
      // Fields and bodies both: the 30 walnuts by their bodies, the made id by its field, each once.
      const both = await search(t, 'walnut', 7);
      expect(both.ids, when).toHaveLength(30);
      expect(new Set(both.totals), when).toEqual(new Set([30]));
    }
  });

  it('body=1 only widens: a call its fields match stays when the term is also in another call\'s body (issue 37, item 9)', async () => {
    // The index's "does this call's body hold it" test bound the call id as a number, which FTS5
    // ignored on its contentless table: every field match counted as covered by the index and fell out.
    // A field the body does not hold: the messageId the lab made for a call sent without one.
    const { t, store, source } = await lab();
    await send(t, source, [{ type: 'track', userId: 'no-id-user', event: 'E', properties: { word: 'plain' } }]);
    const made = (await t.call('listMessages', { q: 'no-id-user', limit: 10 } as never)).items[0]!.messageId!;
    const part = made.slice(-6);
    await send(t, source, [{ type: 'track', userId: 'u2', messageId: 'by-body', event: 'E', properties: { note: `about ${part}` } }]);
    for (const when of ['behind', 'indexed']) {
      if (when === 'indexed') store.calls.bodyIndex.catchUp();
      const both = await search(t, part);
      expect(sorted(both.ids), when).toEqual(sorted(['by-body', made]));
      expect(both.totals, when).toEqual([2]);
    }
  });

  it('an exact substring is exact: "foobar" does not find "foo\\u0000bar", which U+0000 itself finds (issue 37, item 10)', async () => {
    const { t, store, source } = await lab();
    await send(t, source, [
      { type: 'track', userId: 'u1', messageId: 'nul', event: 'E', properties: { v: 'foo\u0000bar' } },
      { type: 'track', userId: 'u2', messageId: 'plain', event: 'E', properties: { v: 'xfoobarx' } },
    ]);
    for (const when of ['behind', 'indexed']) {
      if (when === 'indexed') store.calls.bodyIndex.catchUp();
      expect((await search(t, 'foobar')).ids, when).toEqual(['plain']);
      expect((await search(t, 'foo\u0000bar')).ids, when).toEqual(['nul']);
    }
  });

  it('a call nested 100,000 levels deep (stored as dropped) is searched behind and indexed, and the indexer goes past it', async () => {
    const { t, store, source } = await lab();
    const deep = `{"type":"track","userId":"deep","messageId":"deep-1","event":"E","properties":{"p":${'['.repeat(100_000)}"Abyssal Plain"${']'.repeat(100_000)}}}`;
    const shallow = '{"type":"track","userId":"shallow","messageId":"shallow-1","event":"E","properties":{"p":"abyssal zone"}}';
    expect((await t.post('/v1/batch', `{"batch":[${deep},${shallow}]}`, { writeKey: source.writeKey })).status).toBe(200);
    await send(t, source, [{ type: 'track', userId: 'after', messageId: 'after-1', event: 'E', properties: { p: 'Abyss' } }]);
    expect(sorted((await search(t, 'abyssal')).ids)).toEqual(['deep-1', 'shallow-1']);
    expect(sorted((await search(t, 'abyss')).ids)).toEqual(['after-1', 'deep-1', 'shallow-1']);
    store.calls.bodyIndex.catchUp();
    expect(store.calls.bodyIndex.behind()).toBe(0);
    expect(store.calls.bodyIndex.indexedMatches('abyssal plain')).toHaveLength(1);
    expect(sorted((await search(t, 'abyssal')).ids)).toEqual(['deep-1', 'shallow-1']);
  });

  it('finds calls that arrive while the indexer is behind, and the indexer catches up in the background', async () => {
    const { t, store, source } = await lab();
    await send(t, source, [{ type: 'track', userId: 'x', messageId: 'early', event: 'E', properties: { word: 'Lighthouse' } }]);
    store.calls.bodyIndex.catchUp();
    await send(t, source, [{ type: 'track', userId: 'y', messageId: 'late', event: 'E', properties: { word: 'LIGHTHOUSE keeper' } }]);
    expect(store.calls.bodyIndex.behind()).toBe(1);
    expect(sorted((await search(t, 'lighthouse')).ids)).toEqual(['early', 'late']);
    // Left alone, the indexer takes the new call in on its own.
    store.calls.bodyIndex.resume();
    await waitFor(() => store.calls.bodyIndex.behind() === 0, 'the indexer caught up');
    expect(store.calls.bodyIndex.indexedMatches('lighthouse')).toHaveLength(2);
    expect(sorted((await search(t, 'lighthouse')).ids)).toEqual(['early', 'late']);
  });

  it('retention, erasure and clear take calls out of the index; ids given again are not matched by old entries', async () => {
    const { t, store, source } = await lab(undefined, { retentionCalls: 100 });
    const items = Array.from({ length: 150 }, (_, i) => ({ type: 'track', userId: i < 120 ? 'keep' : 'gone', messageId: `r-${i}`, event: 'E', properties: { word: `Marmalade-${i}` } }));
    await send(t, source, items);
    store.calls.bodyIndex.catchUp();
    expect(store.calls.bodyIndex.indexedMatches('marmalade')).toHaveLength(150);
    // Retention keeps the newest 100.
    expect(store.prune()).toBe(50);
    expect(store.calls.bodyIndex.indexedMatches('marmalade')).toHaveLength(100);
    expect((await search(t, 'marmalade')).ids).toHaveLength(100);
    expect((await search(t, 'marmalade-49')).ids).toEqual([]);
    // Erasing a user's calls (the newest 30): their entries go, and the mark comes down to the newest left.
    const newest = store.calls.bodyIndex.watermark;
    await store.writes.run((tx) => store.erasure.ofUser(tx, 'gone'));
    expect(store.calls.bodyIndex.indexedMatches('marmalade')).toHaveLength(70);
    expect(store.calls.bodyIndex.watermark).toBe(newest - 30);
    // New calls take the erased ids again: found by their own bodies only.
    await send(t, source, [{ type: 'track', userId: 'new', messageId: 'n-1', event: 'E', properties: { word: 'Quince' } }]);
    expect((await search(t, 'marmalade-120')).ids).toEqual([]);
    expect((await search(t, 'marmalade')).ids).toHaveLength(70);
    expect((await search(t, 'quince')).ids).toEqual(['n-1']);
    store.calls.bodyIndex.catchUp();
    expect((await search(t, 'quince')).ids).toEqual(['n-1']);
    expect((await search(t, 'marmalade')).ids).toHaveLength(70);
    // Clear: nothing left in the index; calls stored after it are indexed from their ids.
    await t.call('clearCalls', {});
    expect(store.calls.bodyIndex.indexedMatches('marmalade')).toEqual([]);
    expect(store.calls.bodyIndex.indexedMatches('quince')).toEqual([]);
    expect(store.calls.bodyIndex.watermark).toBe(0);
    await send(t, source, [{ type: 'track', userId: 'z', messageId: 'after-clear', event: 'E', properties: { word: 'Apricot' } }]);
    expect((await search(t, 'marmalade')).ids).toEqual([]);
    expect((await search(t, 'quince')).ids).toEqual([]);
    store.calls.bodyIndex.catchUp();
    expect((await search(t, 'apricot')).ids).toEqual(['after-clear']);
  });

  it('a restart goes on from a partly built index: every call found before and after it catches up', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wl-body-search-'));
    dirs.push(dir);
    const first = await lab(dir);
    const items = Array.from({ length: 300 }, (_, i) => ({ type: 'track', userId: `u${i}`, messageId: `k-${i}`, event: 'E', properties: { word: i % 2 ? 'Kiwi' : 'kumquat' } }));
    await send(first.t, first.source, items);
    expect(first.store.calls.bodyIndex.step(1000, 120)).toBe(120);
    const mark = first.store.calls.bodyIndex.watermark;
    await first.t.stop({ keepData: true });
    te = undefined;

    const second = await lab(dir);
    expect(second.store.calls.bodyIndex.watermark).toBe(mark);
    expect(second.store.calls.bodyIndex.indexedMatches('kiwi')).toHaveLength(60);
    const kiwis = items.filter((_, i) => i % 2).map((c) => c.messageId);
    expect(sorted((await search(second.t, 'KIWI')).ids)).toEqual(sorted(kiwis));
    second.store.calls.bodyIndex.catchUp();
    expect(second.store.calls.bodyIndex.indexedMatches('kiwi')).toHaveLength(150);
    expect(sorted((await search(second.t, 'KIWI')).ids)).toEqual(sorted(kiwis));
    expect((await search(second.t, 'kumquat')).ids).toHaveLength(150);
  });

  it('an index an older lab built is built again (migration 21): a body that held U+0000 is no longer found across it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wl-body-search-'));
    dirs.push(dir);
    const first = await lab(dir);
    await send(first.t, first.source, [
      { type: 'track', userId: 'u1', messageId: 'nul', event: 'E', properties: { v: 'foo\u0000bar' } },
      { type: 'track', userId: 'u2', messageId: 'plain', event: 'E', properties: { v: 'xfoobarx' } },
    ]);
    first.store.calls.bodyIndex.catchUp();
    await first.t.stop({ keepData: true });
    te = undefined;
    // As schema 20 left it: the body indexed with its U+0000, which the tokenizer skips.
    const db = new Database(join(dir, 'webhook-lab.db'));
    const nul = (db.prepare("SELECT id FROM calls WHERE message_id = 'nul'").get() as { id: number }).id;
    db.prepare('DELETE FROM body_index WHERE rowid = ?').run(nul);
    db.prepare('INSERT INTO body_index (rowid, text) VALUES (?, ?)').run(nul, 'foo\u0000bar');
    // Later migrations undone too, so that they run again cleanly (22 added this column, 23 this column
    // and table, 24 this index, 25 this column, 27 this index, 28 this column; 28 also dropped an index
    // 14 made, left dropped).
    db.exec(
      'ALTER TABLE actions_batch_items DROP COLUMN target; ALTER TABLE sources DROP COLUMN import_id; DROP TABLE config_imports; ' +
        'DROP INDEX call_violations_plan; ALTER TABLE attempts DROP COLUMN sim_offset_ms; DROP INDEX dedup_retired_time; ' +
        'ALTER TABLE checked_requests DROP COLUMN seen_by',
    );
    db.pragma('user_version = 20');
    db.close();

    const second = await lab(dir);
    expect(second.store.calls.bodyIndex.watermark).toBe(0);
    expect((await search(second.t, 'foobar')).ids).toEqual(['plain']);
    second.store.calls.bodyIndex.catchUp();
    expect((await search(second.t, 'foobar')).ids).toEqual(['plain']);
    expect(second.store.calls.bodyIndex.indexedMatches('foobar')).toHaveLength(1);
  });

  it("the index's merges run in the indexer's own steps (issue 38): none inside an insert, and the background catches up on them", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wl-body-search-'));
    dirs.push(dir);
    const { t, store, source } = await lab(dir);
    const items = Array.from({ length: 240 }, (_, i) => ({ type: 'track', userId: `u${i}`, messageId: `seg-${i}`, event: 'E', properties: { word: `walnut-${i}` } }));
    await send(t, source, items);
    const file = new Database(join(dir, 'webhook-lab.db'), { readonly: true });
    try {
      // FTS5's segment ids, from its %_data rowids (fts5Int.h: FTS5_SEGMENT_ROWID = segid << 37 | height << 31 | page).
      const segments = () => file.prepare('SELECT count(DISTINCT rowid >> 37) FROM body_index_data WHERE rowid >= (1 << 37)').pluck().get() as number;
      expect(file.prepare("SELECT v FROM body_index_config WHERE k = 'automerge'").pluck().get()).toBe(0);
      // Twelve slices given no time to merge: twelve segments (automerge would have merged them at four).
      for (let i = 0; i < 12; i++) expect(store.calls.bodyIndex.step(10_000, 20, 0)).toBe(20);
      expect(segments()).toBe(12);
      // Caught up with the calls, not with the merges: the background runs slices of merges alone
      // until no level holds four segments (FTS5's usermerge), so at most three are left of twelve.
      store.calls.bodyIndex.resume();
      // And then stops: no slice of merges is left to run once a step finds nothing to merge.
      await waitFor(() => segments() <= 3 && !store.calls.bodyIndex.mergesPending, 'the body index merged in the background', 60_000);
      expect(store.calls.bodyIndex.watermark).toBe(Math.max(...(await search(t, 'walnut-')).callIds));
      expect((await search(t, 'walnut-')).ids).toHaveLength(240);
      expect(sorted((await search(t, 'walnut-17')).ids)).toEqual(sorted(['seg-17', ...Array.from({ length: 10 }, (_, k) => `seg-17${k}`)]));
    } finally {
      file.close();
    }
  });
});
