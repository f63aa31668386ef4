import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statfsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Db } from './db';
import { createPrivateFile } from './data-folder';

// Space freed by retention goes back to the file system (issue 27). SQLite gives freed pages back
// only with auto_vacuum on, and switches a file from NONE to INCREMENTAL only when it is new or
// rewritten whole. A new lab's file is made INCREMENTAL (database.ts); a lab made before keeps NONE
// until this one-off rewrite, done at the start before the engine serves anything (README, Decisions):
//
// 1. `VACUUM INTO <db>.rewrite` from the open connection: a copy of every committed row (the WAL's
//    too) with auto_vacuum INCREMENTAL, holding live pages only. The original is only read.
// 2. The copy is synced and checked (auto_vacuum, schema version).
// 3. The original is closed: being the last connection, SQLite checkpoints its WAL into it and
//    deletes the -wal and -shm. A -wal still there (another program has the file open) stops the
//    swap: SQLite would apply that WAL to the new file.
// 4. rename(<db>.rewrite, <db>), atomic; the folder is synced; the new file is opened.
//
// A crash anywhere leaves either the original (with its WAL, which SQLite replays at the next open)
// and a leftover copy, removed at the next start before anything else, or the new file, complete.
// Nothing is served while it runs, so no call can arrive between the copy and the swap.

/** The copy being made; a leftover one is always incomplete or unused (the rename is the commit). */
export const REWRITE_SUFFIX = '.rewrite';

/** Steps of the rewrite, for tests that kill the process at each one. */
export type RewriteStep = 'copying' | 'copied' | 'closed' | 'swapped';

export interface RewriteOptions {
  log?: (line: string) => void;
  /** Free bytes on the disk holding `dir`, null when unknown (default: statfs). */
  freeBytes?: (dir: string) => number | null;
  /** Told of each step as it is reached (tests: a crash at each). */
  onStep?: (step: RewriteStep) => void;
}

const MB = 1024 * 1024;
const mb = (bytes: number) => `${(bytes / MB).toFixed(bytes < 10 * MB ? 1 : 0)} MB`;

/** Removes what an interrupted rewrite left (the original is intact: the copy only becomes it by rename). */
export function removeLeftoverRewrite(file: string): void {
  for (const f of [file + REWRITE_SUFFIX, `${file}${REWRITE_SUFFIX}-journal`]) {
    try {
      rmSync(f, { force: true });
    } catch {
      // a folder that refuses it: the next rewrite fails to make its copy, and says so
    }
  }
}

/** The file has tables and auto_vacuum NONE: freed pages would stay in it for good. */
export function needsRewrite(db: Db): boolean {
  return (db.pragma('auto_vacuum', { simple: true }) as number) === 0 && (db.pragma('page_count', { simple: true }) as number) > 1;
}

/** Bytes in pages that hold data (what a rewrite writes), the file's size in pages, and those free. */
export function liveBytes(db: Db): { live: number; file: number; free: number } {
  const size = db.pragma('page_size', { simple: true }) as number;
  const pages = db.pragma('page_count', { simple: true }) as number;
  const free = db.pragma('freelist_count', { simple: true }) as number;
  return { live: (pages - free) * size, file: pages * size, free: free * size };
}

/** Room a rewrite needs: the copy (the live pages) plus a margin, so the disk is not left full. */
export function rewriteNeeds(live: number): number {
  return Math.ceil(live * 1.1) + 64 * MB;
}

function diskFree(dir: string): number | null {
  try {
    const s = statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return null; // unknown (an unusual file system): the copy fails cleanly if it does not fit
  }
}

/**
 * Rewrites the open database `db` (file `file`) with auto_vacuum INCREMENTAL, then swaps it in and
 * returns the new connection, opened by `reopen`; or, when it cannot (not enough free space, another
 * program has the file open, a failed copy), says why in one log line and returns `db` as it was.
 */
export function rewriteWithAutoVacuum(db: Db, file: string, reopen: () => Db, opts: RewriteOptions = {}): Db {
  const log = opts.log ?? (() => undefined);
  const dir = dirname(file);
  const { live, file: size } = liveBytes(db);
  const needs = rewriteNeeds(live);
  const free = (opts.freeBytes ?? diskFree)(dir);
  if (free !== null && free < needs) {
    log(
      `storage: ${file} was not rewritten to give space freed by retention back to the disk (a one-off, auto_vacuum): ` +
        `it needs about ${mb(needs)} free in ${dir}, ${mb(free)} are; the lab works as before, and tries again at the next start`,
    );
    return db;
  }
  const copy = file + REWRITE_SUFFIX;
  const t0 = performance.now();
  removeLeftoverRewrite(file);
  try {
    // Owner-only like the original (VACUUM INTO makes its file with the default mode); empty is allowed.
    createPrivateFile(copy);
    opts.onStep?.('copying');
    // Pending on this connection until a VACUUM, which applies it; VACUUM INTO applies it to the copy.
    db.pragma('auto_vacuum = INCREMENTAL');
    // The page size stays the file's own (database.ts asked for 16 KB pages, which only a new file takes).
    db.pragma(`page_size = ${db.pragma('page_size', { simple: true }) as number}`);
    db.prepare('VACUUM INTO ?').run(copy);
    syncFile(copy);
    checkCopy(db, copy);
    opts.onStep?.('copied');
  } catch (err) {
    removeLeftoverRewrite(file);
    log(`storage: ${file} was not rewritten to give space back (a one-off, auto_vacuum): ${(err as Error).message}; the lab works as before, and tries again at the next start`);
    return db;
  }
  db.close();
  opts.onStep?.('closed');
  if (existsSync(`${file}-wal`)) {
    removeLeftoverRewrite(file);
    log(`storage: ${file} was not rewritten to give space back (a one-off, auto_vacuum): another program has it open (its -wal stayed); the lab tries again at the next start`);
    return reopen();
  }
  try {
    renameSync(copy, file);
  } catch (err) {
    removeLeftoverRewrite(file);
    log(`storage: ${file} was not rewritten to give space back (a one-off, auto_vacuum): ${(err as Error).message}; the lab works as before, and tries again at the next start`);
    return reopen();
  }
  syncDir(dir);
  opts.onStep?.('swapped');
  const next = reopen();
  log(`storage: ${file} rewritten once to give space freed by retention back to the disk (auto_vacuum incremental): ${mb(size)} → ${mb(statSync(file).size)} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return next;
}

/** The copy opens, has auto_vacuum INCREMENTAL and the same schema version: else the original stays. */
function checkCopy(db: Db, copy: string): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  // Attached to the same connection: no second handle (and no second native addon in Electron).
  db.prepare("ATTACH ? AS rewrite_check").run(copy);
  try {
    const av = db.pragma('rewrite_check.auto_vacuum', { simple: true }) as number;
    const v = db.pragma('rewrite_check.user_version', { simple: true }) as number;
    if (av !== 2 || v !== version) throw new Error(`the copy came out with auto_vacuum ${av} and schema version ${v} (expected 2 and ${version})`);
  } finally {
    db.exec('DETACH rewrite_check');
  }
}

function syncFile(path: string): void {
  const fd = openSync(path, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Makes the rename durable; Windows cannot open a folder to sync it (NTFS journals the rename). */
function syncDir(dir: string): void {
  if (process.platform === 'win32') return;
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // some file systems refuse fsync on a folder: the rename is still atomic for a process crash
  }
}
