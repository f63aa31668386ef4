import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { describeDataProblem } from '../../src/main/engine/store/data-problem';

// The text `serve` prints and the desktop app's dialog shows when the data folder or its database
// cannot be used at start (README, Troubleshooting). The desktop shell only passes it to a dialog.

const DIR = join('/home/ana/.config', 'webhook-lab');
const DB = join(DIR, 'webhook-lab.db');
const sqlite = (code: string, message: string) => Object.assign(new Error(message), { name: 'SqliteError', code });
const fsError = (code: string, syscall: string, path: string) => Object.assign(new Error(`${code}: ${syscall} '${path}'`), { code, syscall, path });

describe('describeDataProblem', () => {
  it.each([
    ['SQLITE_NOTADB', 'file is not a database', /is not a SQLite database/, /Move it aside/],
    ['SQLITE_CORRUPT', 'database disk image is malformed', /is damaged/, /Move it aside/],
    ['SQLITE_IOERR_SHORT_READ', 'disk I/O error', /could not be read or written/, /Check that disk/],
    ['SQLITE_READONLY', 'attempt to write a readonly database', /cannot be written: the file or its folder is read-only/, /writable for this user/],
    ['SQLITE_READONLY_DBMOVED', 'attempt to write a readonly database', /cannot be written/, /writable/],
    ['SQLITE_CANTOPEN', 'unable to open database file', /cannot be opened/, /writable for this user/],
    ['SQLITE_FULL', 'database or disk is full', /the disk is full/, /Free some space/],
    ['SQLITE_BUSY', 'database is locked', /locked by another program/, /Stop the other program/],
  ])('%s: names the database file, says what is wrong and what to do', (code, message, what, todo) => {
    const p = describeDataProblem(sqlite(code, message), DIR)!;
    expect(p.title).toBe('Webhook Lab cannot use its database');
    const [first, ...rest] = p.detail.split('\n');
    expect(first.startsWith(`${DB}: `)).toBe(true);
    expect(first).toMatch(what);
    expect(first).toContain(`(SQLite: ${message}, ${code})`);
    expect(rest.join('\n')).toMatch(todo);
    expect(p.detail).not.toMatch(/SqliteError|\n\s+at /);
  });

  it('a damaged file: move it aside with its -wal and -shm, never deleted by the lab', () => {
    const { detail } = describeDataProblem(sqlite('SQLITE_CORRUPT', 'database disk image is malformed'), DIR)!;
    expect(detail).toContain('webhook-lab.db-wal → webhook-lab.db.broken-wal');
    expect(detail).toContain('a new, empty\ndatabase is made');
    expect(detail).toContain('Webhook Lab never deletes, moves or repairs your data by itself');
  });

  it('a folder that cannot be made or written: names it and what to do', () => {
    const denied = describeDataProblem(fsError('EACCES', 'mkdir', DIR), DIR)!;
    expect(denied.title).toBe('Webhook Lab cannot use its data folder');
    expect(denied.detail).toMatch(new RegExp(`^${DIR}: permission denied`));
    expect(denied.detail).toMatch(/--data-dir DIR/);
    expect(describeDataProblem(fsError('EROFS', 'open', join(DIR, 'webhook-lab.db')), DIR)!.detail).toMatch(/read-only file system/);
    expect(describeDataProblem(fsError('EEXIST', 'mkdir', DIR), DIR)!.detail).toMatch(/is not a folder/);
    expect(describeDataProblem(fsError('ENOTDIR', 'mkdir', DIR), DIR)!.detail).toMatch(/is not a folder/);
    // A parent of the folder that could not be made counts too.
    expect(describeDataProblem(fsError('EACCES', 'mkdir', '/home/ana/.config'), DIR)).not.toBeNull();
  });

  it("a lock this user cannot read (another user's lab, or one run with sudo): the folder is in use, not unwritable", () => {
    for (const file of ['webhook-lab.lock', 'webhook-lab.lock.takeover']) {
      const p = describeDataProblem(fsError('EACCES', 'open', join(DIR, file)), DIR)!;
      expect(p.title).toBe("Webhook Lab's data folder is in use");
      expect(p.detail).toMatch(new RegExp(`^${join(DIR, file)}: this user cannot read the folder's lock \\(EACCES\\)`));
      expect(p.detail).toMatch(/another user \(or with sudo\)/);
      expect(p.detail).not.toMatch(/chattr/);
    }
    // Writing this start's own lock file fails in a folder it cannot write: that is the folder's problem.
    const own = describeDataProblem(fsError('EPERM', 'open', join(DIR, 'webhook-lab.lock.4242.tmp')), DIR)!;
    expect(own.title).toBe('Webhook Lab cannot use its data folder');
    expect(own.detail).toMatch(/Give this user write access/);
  });

  it('anything else is not a data problem: the caller reports it as before', () => {
    expect(describeDataProblem(Object.assign(new Error('listen EADDRINUSE'), { code: 'EADDRINUSE', port: 8787 }), DIR)).toBeNull();
    expect(describeDataProblem(sqlite('SQLITE_CONSTRAINT_UNIQUE', 'UNIQUE constraint failed'), DIR)).toBeNull();
    expect(describeDataProblem(fsError('EACCES', 'open', '/etc/webhook-lab.json'), DIR)).toBeNull();
    expect(describeDataProblem(new Error('database schema version 99 is newer than this Webhook Lab'), DIR)).toBeNull();
    expect(describeDataProblem('a string', DIR)).toBeNull();
  });
});
