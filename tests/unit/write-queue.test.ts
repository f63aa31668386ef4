import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { WriteQueue } from '../../src/main/engine/store/write-queue';

describe('WriteQueue (group commit)', () => {
  it('jobs of one turn share a transaction, each gets its own result', async () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (v INTEGER)');
    const q = new WriteQueue(db);
    const ins = db.prepare('INSERT INTO t (v) VALUES (?)');
    const ids = await Promise.all([1, 2, 3].map((v) => q.run(() => Number(ins.run(v).lastInsertRowid))));
    expect(ids).toEqual([1, 2, 3]);
  });

  it('a failing job is rejected alone: the others commit, and nothing of the failed one does', async () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (v INTEGER UNIQUE)');
    const q = new WriteQueue(db);
    const ins = db.prepare('INSERT INTO t (v) VALUES (?)');
    const results = await Promise.allSettled([
      q.run(() => ins.run(1)),
      q.run(() => {
        ins.run(2);
        ins.run(1); // constraint violation after a write of its own
      }),
      q.run(() => ins.run(3)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(db.prepare('SELECT v FROM t ORDER BY v').all()).toEqual([{ v: 1 }, { v: 3 }]);
  });

  it("a failed job's undo runs before the jobs after it run again, so they never see its in-memory traces", async () => {
    // The collector remembers a call's messageId in memory inside its job (the duplicate window); a job
    // rolled back must forget it before a later job of the same turn asks, or that one is taken for a
    // duplicate of a call never stored (found by review with a nearly full disk).
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (v INTEGER UNIQUE)');
    const q = new WriteQueue(db);
    const ins = db.prepare('INSERT INTO t (v) VALUES (?)');
    const remembered = new Set<string>();
    const seen: string[] = [];
    ins.run(1);
    const results = await Promise.allSettled([
      q.run(
        () => {
          remembered.add('X');
          ins.run(1); // fails: rolled back, in the group and again alone
        },
        () => remembered.delete('X'),
      ),
      q.run(() => {
        seen.push(remembered.has('X') ? 'X taken' : 'X free');
        remembered.add('X');
        ins.run(2);
      }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled']);
    // The group stopped at the failed job; run again alone after it, the second job finds X free.
    expect(seen).toEqual(['X free']);
    expect(remembered.has('X')).toBe(true);
  });
});
