import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// What git tracks is the project, never a machine's own folders: a clone's node_modules symlink was
// once committed (.gitignore's `node_modules/` matches a folder, not a link) and a merge checked it
// out over the real folder; a clean clone would have had a link to a path of this machine.
const ROOT = join(__dirname, '../..');

describe('tracked files', () => {
  const files = execFileSync('git', ['ls-files', '-s'], { cwd: ROOT, encoding: 'utf8' }).trim().split('\n');

  it('hold no symbolic link and nothing under node_modules, out or test-results', () => {
    const links = files.filter((l) => l.startsWith('120000 '));
    const machine = files.map((l) => l.split('\t')[1]!).filter((p) => /^(node_modules|out|test-results)(\/|$)/.test(p));
    expect({ links, machine }).toEqual({ links: [], machine: [] });
  });
});
