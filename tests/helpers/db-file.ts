import Database from 'better-sqlite3';
import { join } from 'node:path';

/**
 * A second connection to a lab's SQLite file, for tests that check or arrange rows directly: the
 * Store keeps its own handle private (the store owns SQL over the core tables), so tests open the
 * file like any other reader would. Read-only unless the test sets up a state on purpose.
 */
export function openDbFile(dataDir: string, opts: { write?: boolean } = {}): Database.Database {
  return new Database(join(dataDir, 'webhook-lab.db'), { readonly: !opts.write, fileMustExist: true });
}
