import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
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
