import { statSync } from 'node:fs';
import { basename, isAbsolute, join, relative, sep } from 'node:path';
import { DB_FILE } from './data-folder';
import { LOCK_FILE, type FolderInUseError } from './folder-lock';

// What the user reads when the data folder or its database cannot be used at start (README,
// Troubleshooting): which file, what is wrong with it, and what to do, instead of a raw SqliteError.
// One text for both faces: `serve` prints it and exits SERVE_EXIT_DATA_PROBLEM, the desktop app shows
// it in a dialog. The lab never deletes, moves or repairs data by itself: the user decides.

/** `webhook-lab serve`'s exit code when the data folder or its database cannot be used. */
export const SERVE_EXIT_DATA_PROBLEM = 3;

export interface DataProblem {
  /** One line: what cannot be used. */
  title: string;
  /** The file, what is wrong, what to do: a few lines. */
  detail: string;
}

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  path?: unknown;
}

/** The data problem behind a start failure, or null when the failure is something else (a port, a config). */
export function describeDataProblem(err: unknown, dataDir: string): DataProblem | null {
  if (typeof err !== 'object' || err === null) return null;
  const e = err as ErrorLike;
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : '';
  const db = join(dataDir, DB_FILE);
  if (code === 'WL_FOLDER_IN_USE') return inUse(err as FolderInUseError);
  if (code.startsWith('SQLITE_')) return sqliteProblem(code, message, db);
  // better-sqlite3's own check, before SQLite: the folder vanished between making it and opening the file.
  if (message.startsWith('Cannot open database because the directory does not exist')) {
    return { title: TITLE_FOLDER, detail: `${dataDir}: the folder does not exist (it was removed while the lab started).\n${ANOTHER_DIR}` };
  }
  // Reading another user's lock (or its takeover lock), not writing this start's own (`….tmp`: the folder is not writable).
  if (typeof e.path === 'string' && (code === 'EACCES' || code === 'EPERM') && LOCKS.has(basename(e.path)) && within(dataDir, e.path)) return lockNotReadable(e.path, code);
  if (typeof e.path === 'string' && within(dataDir, e.path)) return fileSystemProblem(code, message, e.path, dataDir);
  return null;
}

const TITLE_DB = 'Webhook Lab cannot use its database';
const LOCKS = new Set([LOCK_FILE, `${LOCK_FILE}.takeover`]);
const TITLE_FOLDER = 'Webhook Lab cannot use its data folder';
const ANOTHER_DIR = 'Or start with another data folder: --data-dir DIR (or WEBHOOK_LAB_DATA_DIR).';
const NEVER_DELETES = 'Webhook Lab never deletes, moves or repairs your data by itself.';

/** The folder's lock (or its takeover lock) is another user's: the folder is writable, the lock is what stops the start. */
function lockNotReadable(path: string, code: string): DataProblem {
  return {
    title: "Webhook Lab's data folder is in use",
    detail: [
      `${path}: this user cannot read the folder's lock (${code}): a Webhook Lab run by another user (or with sudo) holds this folder, or held it.`,
      'Stop that lab first. If none runs, delete that file as its owner (or with sudo) and start again.',
      ANOTHER_DIR,
    ].join('\n'),
  };
}

function inUse(e: FolderInUseError): DataProblem {
  return {
    title: "Webhook Lab's data folder is in use",
    detail: [
      `${e.dir}: another Webhook Lab (process ${e.pid}) is using it; the desktop app and webhook-lab serve share it by default.`,
      'Stop that one first (or use it: its address is in its own output). Two labs on one folder would both accept the same calls.',
      ANOTHER_DIR,
      `If no Webhook Lab is running, process ${e.pid} is another program: delete ${e.path} and start again.`,
    ].join('\n'),
  };
}

function moveAside(): string {
  return [
    `Move it aside, with its -wal and -shm files if there are any (rename them alike: ${DB_FILE} → ${DB_FILE}.broken,`,
    `${DB_FILE}-wal → ${DB_FILE}.broken-wal, ${DB_FILE}-shm → ${DB_FILE}.broken-shm), then start again: a new, empty`,
    `database is made. ${NEVER_DELETES} The file moved aside keeps what it held, for SQLite's recovery tools (sqlite3's .recover).`,
  ].join('\n');
}

function sqliteProblem(code: string, message: string, db: string): DataProblem | null {
  const sqlite = `(SQLite: ${message || code}, ${code})`;
  const problem = (what: string, todo: string): DataProblem => ({ title: TITLE_DB, detail: `${db}: ${what} ${sqlite}.\n${todo}` });
  if (code === 'SQLITE_NOTADB') return problem('is not a SQLite database: the file is damaged, or another file took its place', moveAside());
  if (code.startsWith('SQLITE_CORRUPT')) return problem('is damaged', moveAside());
  if (code.startsWith('SQLITE_READONLY')) {
    return problem(
      'cannot be written: the file or its folder is read-only (permissions, an immutable attribute, or a read-only file system)',
      `Make the file and its folder writable for this user (the lab also writes ${DB_FILE}-wal and -shm beside it). ${ANOTHER_DIR}`,
    );
  }
  if (code.startsWith('SQLITE_CANTOPEN')) {
    if (isFolder(db)) return problem('cannot be opened: it is a folder, where the lab keeps its database file', `Move that folder away. ${ANOTHER_DIR}`);
    return problem(
      `cannot be opened: its folder does not let the lab create files (${DB_FILE}-wal and -shm go beside it), or the file cannot be read`,
      `Make the folder and the file writable for this user. ${ANOTHER_DIR}`,
    );
  }
  if (code.startsWith('SQLITE_FULL')) return problem('cannot grow: the disk is full', `Free some space on that disk, then start again. ${ANOTHER_DIR}`);
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return problem('is locked by another program (another Webhook Lab using this folder?)', `Stop the other program, or start with another data folder: --data-dir DIR.`);
  }
  if (code.startsWith('SQLITE_IOERR')) {
    return problem('could not be read or written (an I/O error: a failing disk, a removed drive, a full or read-only file system)', `Check that disk; if the file itself is at fault: ${moveAside()}`);
  }
  if (code.startsWith('SQLITE_PERM') || code.startsWith('SQLITE_AUTH')) {
    return problem('cannot be accessed: permission denied', `Give this user read and write access to the file and its folder. ${ANOTHER_DIR}`);
  }
  // Any other code (a constraint, a busy statement) is not about the file: the caller's own error stands.
  return null;
}

function fileSystemProblem(code: string, message: string, path: string, dataDir: string): DataProblem {
  const node = `(${message || code})`;
  const problem = (what: string, todo: string): DataProblem => ({ title: TITLE_FOLDER, detail: `${path}: ${what} ${node}.\n${todo}` });
  if (code === 'EACCES' || code === 'EPERM') {
    return problem('permission denied', `Give this user write access to ${dataDir} (or its parent, to create it), or remove an immutable attribute (chattr -i). ${ANOTHER_DIR}`);
  }
  if (code === 'EROFS') return problem('is on a read-only file system', ANOTHER_DIR);
  if (code === 'ENOTDIR' || code === 'EEXIST') return problem('is not a folder (a file has that name)', `Move that file away, or pick another folder. ${ANOTHER_DIR}`);
  if (code === 'ENOSPC') return problem('cannot be written: the disk is full', `Free some space on that disk, then start again. ${ANOTHER_DIR}`);
  if (code === 'EISDIR') return problem('is a folder where the lab keeps a file', `Move it away. ${ANOTHER_DIR}`);
  return problem('cannot be used', ANOTHER_DIR);
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Whether `path` is the data folder, in it, or one of its parents (a parent that could not be made). */
function within(dir: string, path: string): boolean {
  const inside = (outer: string, inner: string) => {
    const rel = relative(outer, inner);
    return rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
  };
  return inside(dir, path) || inside(path, dir);
}
