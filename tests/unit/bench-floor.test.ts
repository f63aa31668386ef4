import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SUMMARY_COLUMNS } from '../../src/main/engine/store/call-summary';
import { CLASSIC_JOIN } from '../../src/main/engine/store/calls.repo';
import { STORAGE_PRAGMAS } from '../../src/main/engine/store/database';

// The batch floor (`npm run bench`) is what storing costs at the least, so it must store the way the
// app does: it had kept the settings of an older app (no auto_vacuum, a 16 MB WAL) and flattered
// itself. Its list is a copy (the bench runs plain .mjs files); this keeps the copy true.
describe('the batch floor', () => {
  it('opens its database with the app’s storage settings, in the same order', () => {
    const floor = readFileSync(join(__dirname, '../../bench/batch-floor-child.mjs'), 'utf8');
    const list = /const STORAGE_PRAGMAS = \[([^\]]*)\]/.exec(floor);
    expect(list, 'bench/batch-floor-child.mjs declares STORAGE_PRAGMAS').not.toBeNull();
    const copied = [...list![1].matchAll(/'([^']*)'/g)].map((m) => m[1]);
    expect(copied).toEqual([...STORAGE_PRAGMAS]);
    expect(floor).toContain('for (const pragma of STORAGE_PRAGMAS) db.pragma(pragma);');
  });
});

// The restart floor (`node bench/run.mjs restart`) runs the inspector's first-page queries alone: a copy
// of the engine's text, kept true here, so the floor never reads less (or more) than the lab does.
describe('the restart floor', () => {
  it("runs the engine's first-page queries word for word", () => {
    const floor = readFileSync(join(__dirname, '../../bench/restart-floor-child.mjs'), 'utf8');
    const constant = (name: string) => {
      const m = new RegExp(`const ${name} = (['"\`])([\\s\\S]*?)\\1;`).exec(floor);
      expect(m, `bench/restart-floor-child.mjs declares ${name}`).not.toBeNull();
      return m![2];
    };
    expect(constant('SUMMARY_COLUMNS')).toBe(SUMMARY_COLUMNS);
    expect(constant('CLASSIC_JOIN')).toBe(CLASSIC_JOIN);
    const repo = readFileSync(join(__dirname, '../../src/main/engine/store/calls.repo.ts'), 'utf8');
    expect(repo).toContain('const from = `FROM calls c ${CLASSIC_JOIN}`;');
    expect(repo).toContain(`this.countStmt = db.prepare('${constant('COUNT_SQL')}')`);
    expect(repo).toContain('.prepare(`SELECT ${SUMMARY_COLUMNS} ${from} ${pageWhere} ORDER BY c.id DESC LIMIT ?`)');
    expect(floor).toContain('const PAGE_SQL = `SELECT ${SUMMARY_COLUMNS} FROM calls c ${CLASSIC_JOIN} ORDER BY c.id DESC LIMIT ?`;');
  });
});
