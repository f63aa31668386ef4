import { chmodSync, closeSync, existsSync, lstatSync, mkdirSync, openSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

// The data folder holds every shared secret and captured payload: it is the owner's alone (README,
// "Data folder"). Folder 0700, the lab's files in it 0600. SQLite creates the database's -wal and
// -shm files with the database file's own mode, so a database file made 0600 before SQLite opens it
// keeps all three owner-only. Windows has no POSIX modes (the folder sits under the user's profile,
// whose permissions are the user's): nothing is changed there.

export const DB_FILE = 'webhook-lab.db';
const OWNER_ONLY_DIR = 0o700;
const OWNER_ONLY_FILE = 0o600;

/** Files the lab writes in its folder that must stay owner-only (the certificate is public: it stays 0644). */
const PRIVATE_FILES = [DB_FILE, `${DB_FILE}-wal`, `${DB_FILE}-shm`, `${DB_FILE}-journal`, 'key.pem', 'ui-token'];
/** What else the lab itself puts there (the .rewrite copy: auto-vacuum.ts; desktop-local-api: the desktop app's choice, electron/local-api.ts): a folder holding only these is the lab's, whoever made it. */
const LAB_FILE = /^(?:webhook-lab\.db(?:-wal|-shm|-journal|\.rewrite(?:-journal)?)?|webhook-lab\.lock(?:\.\d+\.tmp|\.takeover)?|cert\.pem|key\.pem|ui-token|desktop-local-api|(?:cert|key)\.pem\.\d+\.tmp)$/;

const posix = process.platform !== 'win32';
const octal = (mode: number) => (mode & 0o777).toString(8).padStart(4, '0');

export interface DataFolderOptions {
  /**
   * The folder is the lab's own (the default app-data folder, where the desktop app's Electron files
   * sit beside ours): tightened whatever it holds. Otherwise only when it holds nothing but the lab's files.
   */
  owned?: boolean;
}

/**
 * `mkdir -p`, a level at a time. Node's recursive mkdir never returns for a path under a folder that
 * answers ENOENT for a child it cannot hold (`--data-dir /proc/1/x` hung the lab silently: found by
 * a review); made one by one, that child's ENOENT is thrown and explained like any other.
 */
export function makeFolder(dir: string, mode = OWNER_ONLY_DIR): void {
  const missing: string[] = [];
  for (let p = resolve(dir); !existsSync(p); p = dirname(p)) {
    missing.unshift(p);
    if (dirname(p) === p) break;
  }
  for (const p of missing) {
    try {
      mkdirSync(p, { mode });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  // It exists now: a file there is refused (EEXIST) as before.
  mkdirSync(dir, { recursive: true, mode });
}

/**
 * Makes the data folder (0700) if it is missing, or tightens an existing one that others can read
 * when it is the lab's (see `owned`); makes the lab's private files in it 0600. Returns one line for
 * the log when it changed something or left a folder others can read, else null. A folder that cannot
 * be made throws (Node's error: describeDataProblem explains it); a chmod that fails is only reported.
 */
export function prepareDataFolder(dir: string, opts: DataFolderOptions = {}): string | null {
  let mode: number | undefined;
  try {
    mode = statSync(dir).mode;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (mode === undefined) {
    makeFolder(dir);
    // The process umask can only have taken bits away; this makes the mode exact.
    if (posix) chmodSync(dir, OWNER_ONLY_DIR);
    return null;
  }
  if (!posix) return null;
  const notes: string[] = [];
  const files = tightenFiles(dir);
  if (files) notes.push(files);
  if ((mode & 0o077) !== 0) {
    if (opts.owned || holdsOnlyLabFiles(dir)) {
      const failed = tryChmod(dir, OWNER_ONLY_DIR);
      notes.unshift(failed ? `could not make it owner-only (${failed})` : `it was open to other users (${octal(mode)}): now owner-only (0700)`);
    } else {
      notes.unshift(`it is open to other users (${octal(mode)}) and holds other files than the lab's, so it is left as it is`);
    }
  }
  return notes.length ? `data folder ${dir}: ${notes.join('; ')}` : null;
}

/**
 * Creates the database file owner-only before SQLite first opens it (its -wal and -shm take its mode).
 * An existing path is left to SQLite, which says best what is wrong with it (a folder, read-only).
 */
export function createPrivateFile(path: string): void {
  try {
    closeSync(openSync(path, 'wx', OWNER_ONLY_FILE));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

function tightenFiles(dir: string): string | null {
  const changed: string[] = [];
  const failed: string[] = [];
  for (const name of PRIVATE_FILES) {
    let mode: number;
    try {
      // lstat: a symlink (to a device, to someone's key) or a folder under one of these names is not
      // the lab's file, and chmod would change what it points at; SQLite says what is wrong with it.
      const st = lstatSync(join(dir, name));
      if (!st.isFile()) continue;
      mode = st.mode;
    } catch {
      continue; // missing (or unreadable: SQLite says so when it opens it)
    }
    if ((mode & 0o077) === 0) continue;
    const err = tryChmod(join(dir, name), OWNER_ONLY_FILE);
    if (err) failed.push(`${name} (${err})`);
    else changed.push(`${name} ${octal(mode)}`);
  }
  const parts: string[] = [];
  if (changed.length) parts.push(`${changed.join(', ')} made owner-only (0600)`);
  if (failed.length) parts.push(`could not make ${failed.join(', ')} owner-only`);
  return parts.length ? parts.join('; ') : null;
}

function holdsOnlyLabFiles(dir: string): boolean {
  try {
    return readdirSync(dir).every((name) => LAB_FILE.test(name));
  } catch {
    return false;
  }
}

function tryChmod(path: string, mode: number): string | null {
  try {
    chmodSync(path, mode);
    return null;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? String(err);
  }
}
