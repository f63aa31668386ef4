import Database from 'better-sqlite3';
import { createPrivateFile, DB_FILE, makeFolder } from './data-folder';
import { join } from 'node:path';
import { MIGRATIONS } from './migrations';
import { bodyMayMatch, searchText } from '../../../shared/search-filter';
import { tlsKind } from '../../../shared/tls-codes';
import { isConnectCode } from '../../../shared/connect-codes';
import { needsRewrite, removeLeftoverRewrite, rewriteWithAutoVacuum, type RewriteOptions } from './auto-vacuum';

export type { Db } from './db';
import type { Db } from './db';

export const PAGE_SIZE = 16384;

export interface OpenOptions {
  dataDir: string;
  /** Addon built for this runtime (Electron); default: the Node build in node_modules. */
  nativeBinding?: string;
  /** One-off notices (the auto_vacuum rewrite of a lab made before it: auto-vacuum.ts). */
  log?: (line: string) => void;
  /** For tests: the rewrite's free-space reading and a hook at each of its steps. */
  rewrite?: Pick<RewriteOptions, 'freeBytes' | 'onStep'>;
}

/**
 * The storage settings every connection to the lab's file gets, in this order. Also the batch floor's
 * (bench/batch-floor-child.mjs), which must store the way the app does: a unit test compares them.
 */
export const STORAGE_PRAGMAS: readonly string[] = [
  // 16 KB pages for a new file (an existing one keeps its own): a commit writes each changed page to
  // the WAL as a frame, and request bodies of tens of KB span fewer of them. Measured on the
  // collector's write path: about 10 % less time per stored call than 4 KB pages.
  `page_size = ${PAGE_SIZE}`,
  // A new file gives the pages retention frees back to the file system (Store.giveSpaceBack, in
  // small steps): set before the first table, as SQLite requires; an older file is rewritten once.
  'auto_vacuum = INCREMENTAL',
  'journal_mode = WAL',
  // SQLite checkpoints the WAL at 1,000 pages: 4 MB with its default 4 KB pages, but 16 MB with
  // ours, and a WAL growing back to 16 MB refilled a disk that had just been given a few MB (issue
  // 22). 256 pages keep it at SQLite's intended 4 MB; past a checkpoint the file is cut back to it.
  'wal_autocheckpoint = 256',
  `journal_size_limit = ${256 * PAGE_SIZE}`,
  // NORMAL in WAL mode: a commit survives a process crash (the case we promise); only an OS crash
  // or power loss can lose the last transactions.
  'synchronous = NORMAL',
  'busy_timeout = 5000',
  'foreign_keys = OFF',
];

export function openDatabase({ dataDir, nativeBinding, log, rewrite }: OpenOptions): Db {
  makeFolder(dataDir);
  const file = join(dataDir, DB_FILE);
  // A copy a crash left half made or unused: the database itself is intact (auto-vacuum.ts).
  removeLeftoverRewrite(file);
  const db = openFile(file, nativeBinding);
  try {
    migrate(db);
  } catch (err) {
    db.close();
    throw err;
  }
  // A lab made before auto_vacuum: rewritten once, here, before anything is served (README, Decisions).
  return needsRewrite(db) ? rewriteWithAutoVacuum(db, file, () => openFile(file, nativeBinding), { log, ...rewrite }) : db;
}

function openFile(file: string, nativeBinding: string | undefined): Db {
  // 0600 before SQLite opens it: the -wal and -shm files SQLite makes take the database file's mode.
  createPrivateFile(file);
  const db = new Database(file, nativeBinding ? { nativeBinding } : {});
  try {
    for (const pragma of STORAGE_PRAGMAS) db.pragma(pragma);
    // SQLite opens a file it may not write (read-only, immutable) read-only, without a word: write
    // once (the same version, rolled back), so such a file stops the start with SQLITE_READONLY
    // (data-problem.ts says what to do) instead of failing the first call the collector takes.
    const version = db.pragma('user_version', { simple: true }) as number;
    db.exec(`BEGIN IMMEDIATE; PRAGMA user_version = ${version}; ROLLBACK`);
    registerSearchFunctions(db);
  } catch (err) {
    // A damaged or read-only file: the start fails, and the handle is not left open.
    db.close();
    throw err;
  }
  return db;
}

/**
 * The shared search rule as SQL functions (src/shared/search-filter.ts), so the database applies the
 * rule itself rather than a copy of it: migration 8 fills calls.search with wl_search_text, and a
 * body search passes request bodies through wl_body_may_match. It also registers the attempt code
 * tables (wl_tls_kind, wl_connect_code) migration 16 reads.
 */
export function registerSearchFunctions(db: Db): void {
  db.function('wl_search_text', { deterministic: true }, (userId, anonymousId, messageId, label, groupId, previousId) =>
    searchText({ userId, anonymousId, messageId, label, groupId, previousId } as Record<string, string | null>),
  );
  db.function('wl_body_may_match', { deterministic: true }, (body, term) => (typeof body === 'string' && bodyMayMatch(body, String(term)) ? 1 : 0));
  // Migration 16 gives older attempts their facts by the shared code tables (issue 27).
  db.function('wl_tls_kind', { deterministic: true }, (code) => tlsKind(typeof code === 'string' ? code : null));
  db.function('wl_connect_code', { deterministic: true }, (code) => (isConnectCode(typeof code === 'string' ? code : null) ? 1 : 0));
}

export function migrate(db: Db): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(`database schema version ${current} is newer than this Webhook Lab (${MIGRATIONS.length}); upgrade the app`);
  }
  for (let v = current; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}
