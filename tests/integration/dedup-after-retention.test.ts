import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestEngine } from '../helpers/engine';
import { Store } from '../../src/main/engine/store/store';
import { DEDUP_CAPACITY, EXPIRE_LIMIT } from '../../src/main/engine/store/calls.repo';
import { openDbFile } from '../helpers/db-file';

// Duplicates within 24 h stay caught across a restart even when retention removed the first call:
// the window is filled at start from the calls kept, and retention keeps the messageIds of the calls it
// removes within the window apart (migration 20). Found by a fresh-eyes review: 200,000 dropped calls
// (unknown write keys) pushed a call out, and after a restart its repeat was accepted.

const dataDir = mkdtempSync(join(tmpdir(), 'wl-dedup-retired-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
const KEY = 'wk_retired';
const config = { sources: [{ name: 'kept', writeKey: KEY }], settings: { retentionCalls: 100 } };

/** A lab on dataDir that received `messageId`, then 150 calls of an unknown key: retention (100 kept) removed it. */
async function retiredIn(dataDir: string, messageId: string) {
  let store: Store | undefined;
  const engine = await startTestEngine({ dataDir, config, onStore: (s) => void (store = s) });
  const original = { userId: 'u', event: 'First', messageId };
  expect((await engine.post('/v1/track', original, { writeKey: KEY })).status).toBe(200);
  // 150 calls of an unknown key (stored as dropped) after it: retention keeps the newest 100.
  const others = Array.from({ length: 150 }, (_, i) => ({ type: 'track', userId: 'x', event: 'Other', messageId: `other-${i}` }));
  expect((await engine.post('/v1/batch', { batch: others }, { writeKey: 'wk_nobody' })).status).toBe(200);
  store!.prune();
  expect((await engine.call('listMessages', { q: messageId, limit: 10 })).items).toEqual([]);
  return { engine, original };
}

describe('a duplicate of a call retention removed', () => {
  it('is still dropped after a restart', async () => {
    const { engine: first, original } = await retiredIn(dataDir, 'retired-1');
    // Within the run the window still holds it.
    await first.post('/v1/track', original, { writeKey: KEY });
    expect((await first.call('listMessages', { q: 'retired-1', limit: 10 })).items.map((m) => m.status)).toEqual(['dropped']);
    await first.stop({ keepData: true });

    const second = await startTestEngine({ dataDir, config });
    try {
      await second.post('/v1/track', original, { writeKey: KEY });
      const items = (await second.call('listMessages', { q: 'retired-1', limit: 10 })).items;
      expect(items.map((m) => [m.status, m.dropReason])).toEqual([
        ['dropped', 'duplicate messageId'],
        ['dropped', 'duplicate messageId'],
      ]);
    } finally {
      await second.stop({ keepData: true });
    }
  });
});

describe('Clear all calls after retention removed a call', () => {
  // The user starts over: a messageId retention had set apart is forgotten too, in the running lab and
  // after a restart alike. Before, the running lab forgot it only when its dropped repeat was cleared,
  // and a restart brought it back from dedup_retired (found by review).
  it('accepts the call again, and its repeat after a restart is a duplicate of the new one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wl-dedup-clear-'));
    try {
      const { engine: first, original } = await retiredIn(dir, 'cleared-retired-1');
      await first.call('clearCalls', {});
      await first.post('/v1/track', original, { writeKey: KEY });
      expect((await first.call('listMessages', { q: 'cleared-retired-1', limit: 10 })).items.map((m) => m.status)).toEqual(['accepted']);
      await first.stop({ keepData: true });

      const second = await startTestEngine({ dataDir: dir, config });
      try {
        await second.post('/v1/track', original, { writeKey: KEY });
        expect((await second.call('listMessages', { q: 'cleared-retired-1', limit: 10 })).items.map((m) => m.status)).toEqual(['dropped', 'accepted']);
      } finally {
        await second.stop({ keepData: true });
      }
      // Nothing of the first call is left apart.
      const db = openDbFile(dir);
      const left = db.prepare("SELECT COUNT(*) FROM dedup_retired WHERE message_id = 'cleared-retired-1'").pluck().get();
      db.close();
      expect(left).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the messageIds retention keeps apart', () => {
  it('are let go past 24 h, and beyond the newest 200,000 (the window keeps no more at a start)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wl-dedup-cap-'));
    try {
      const now = Date.now();
      new Store({ dataDir: dir }).close();
      const db = openDbFile(dir, { write: true });
      const insert = db.prepare('INSERT INTO dedup_retired (source_key, message_id, received_at) VALUES (1, ?, ?)');
      // 10 past the window, then DEDUP_CAPACITY + 40 within it.
      db.transaction(() => {
        for (let i = 0; i < DEDUP_CAPACITY + 50; i++) insert.run(`m${i}`, i < 10 ? now - 25 * 3600_000 : now - 1000);
      })();
      db.close();
      const store = new Store({ dataDir: dir });
      store.calls.expireRetired(now);
      store.close();
      const check = openDbFile(dir);
      const left = check.prepare('SELECT message_id FROM dedup_retired ORDER BY rowid').pluck().all() as string[];
      check.close();
      expect(left.length).toBe(DEDUP_CAPACITY);
      expect(left[0]).toBe('m50');
      expect(left[left.length - 1]).toBe(`m${DEDUP_CAPACITY + 49}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Issue 38: expireRetired runs in each retention slice; it read every retired row (20-30 ms at
  // 200,000) and let any number go at once. Now by an index on the time, a bounded number a slice.
  it('are let go a bounded number at a time, oldest first, until none past the window is left', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wl-dedup-expire-'));
    try {
      const now = Date.now();
      new Store({ dataDir: dir }).close();
      const db = openDbFile(dir, { write: true });
      const insert = db.prepare('INSERT INTO dedup_retired (source_key, message_id, received_at) VALUES (1, ?, ?)');
      // Out of time order (a call kept for its delivery retires late): the oldest go first all the same.
      const expired = 2 * EXPIRE_LIMIT + 500;
      db.transaction(() => {
        for (let i = 0; i < 100; i++) insert.run(`fresh${i}`, now - 1000);
        for (let i = 0; i < expired; i++) insert.run(`old${i}`, now - 25 * 3600_000 - (i % 7 === 0 ? 3600_000 : 0));
      })();
      db.close();
      const store = new Store({ dataDir: dir });
      const count = () => {
        const c = openDbFile(dir);
        try {
          return c.prepare("SELECT COUNT(*) FROM dedup_retired WHERE message_id LIKE 'old%'").pluck().get() as number;
        } finally {
          c.close();
        }
      };
      store.calls.expireRetired(now);
      expect(count()).toBe(expired - EXPIRE_LIMIT);
      store.calls.expireRetired(now);
      store.calls.expireRetired(now);
      expect(count()).toBe(0);
      store.close();
      const check = openDbFile(dir);
      expect(check.prepare('SELECT COUNT(*) FROM dedup_retired').pluck().get()).toBe(100);
      check.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
