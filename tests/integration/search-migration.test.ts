import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Store } from '../../src/main/engine/store/store';
import { MIGRATIONS } from '../../src/main/engine/store/migrations';
import { openDbFile } from '../helpers/db-file';

// Migration 8 gives every call its search text (the shared rule, src/shared/search-filter.ts) and
// group and alias calls their groupId and previousId, read from the bodies they arrived in. Tested on
// a database as the previous version (schema 7) left it.
const PREVIOUS = 7;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function previousDatabase(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wl-v7-'));
  dirs.push(dir);
  const db = new Database(join(dir, 'webhook-lab.db'));
  for (const m of MIGRATIONS.slice(0, PREVIOUS)) db.exec(m);
  db.pragma(`user_version = ${PREVIOUS}`);
  const request = db.prepare("INSERT INTO requests (id, received_at, meta, body) VALUES (?, 1, '{}', ?)");
  const call = db.prepare(
    "INSERT INTO calls (id, source_key, received_at, type, user_id, anonymous_id, label, message_id, status, request_id, batch_index, normalized) VALUES (?, NULL, 1, ?, ?, ?, ?, ?, 'accepted', ?, ?, ?)",
  );
  // A batch: a track, a group (numeric groupId) and an alias.
  request.run(1, JSON.stringify({ batch: [
    { type: 'track', userId: 'User_42', event: 'Signed Up', messageId: 'm-1' },
    { type: 'group', userId: 'u-2', groupId: 4711, messageId: 'm-2' },
    { type: 'alias', userId: 'u-3', previousId: 'Old_Anon', messageId: 'm-3' },
  ] }));
  call.run(1, 'track', 'User_42', null, 'Signed Up', 'm-1', 1, 0, null);
  call.run(2, 'group', 'u-2', null, null, 'm-2', 1, 1, null);
  call.run(3, 'alias', 'u-3', null, null, 'm-3', 1, 2, null);
  // A single group call, and one the app made itself (its normalized form stored).
  request.run(2, JSON.stringify({ type: 'group', anonymousId: 'ANON-5', groupId: 'Acme_Corp', messageId: 'm-4' }));
  call.run(4, 'group', null, 'ANON-5', null, 'm-4', 2, null, null);
  request.run(3, '{}');
  call.run(5, 'group', 'u-6', null, null, 'm-5', 3, null, JSON.stringify({ type: 'group', userId: 'u-6', groupId: 'Internal_Team', messageId: 'm-5' }));
  // Dropped: a body that is not JSON, and a group whose item is not an object.
  request.run(4, 'not json {');
  call.run(6, 'group', null, null, null, null, 4, null, null);
  request.run(5, JSON.stringify({ batch: ['oops'] }));
  call.run(7, 'group', null, null, null, null, 5, 0, null);
  db.close();
  return dir;
}

describe(`migration from schema ${PREVIOUS}: search`, () => {
  it('fills groupId, previousId and the search text of existing calls; search finds them by any field, any case', () => {
    const dir = previousDatabase();
    const store = new Store({ dataDir: dir });
    try {
      const byId = new Map(store.calls.list({ limit: 10 }).items.map((c) => [c.id, [c.groupId, c.previousId]]));
      expect(Object.fromEntries(byId)).toEqual({
        1: [null, null],
        2: ['4711', null],
        3: [null, 'Old_Anon'],
        4: ['Acme_Corp', null],
        5: ['Internal_Team', null],
        6: [null, null],
        7: [null, null],
      });
      const ids = (q: string) => store.calls.list({ q, limit: 10 }).items.map((c) => c.id);
      expect(ids('user')).toEqual([1]);
      expect(ids('signed')).toEqual([1]);
      expect(ids('471')).toEqual([2]);
      expect(ids('OLD_anon')).toEqual([3]);
      expect(ids('acme')).toEqual([4]);
      expect(ids('anon')).toEqual([4, 3]);
      expect(ids('internal')).toEqual([5]);
      expect(ids('M-')).toEqual([5, 4, 3, 2, 1]);
      expect(ids('acme')).toEqual(store.calls.list({ q: 'acme', body: true, limit: 10 }).items.map((c) => c.id));
      const file = openDbFile(dir);
      expect(file.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
      file.close();
    } finally {
      store.close();
    }
  });
});
