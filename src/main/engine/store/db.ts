import type Database from 'better-sqlite3';

/** The lab's database handle. Apart from database.ts, which opens it, so that what database.ts runs at open (auto-vacuum.ts) can name it. */
export type Db = Database.Database;
