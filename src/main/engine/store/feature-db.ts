import type Database from 'better-sqlite3';
import type { Db } from './database';

/**
 * The store's own tables: the call record (calls, request bodies, deliveries, attempts, source keys),
 * the Actions ledger (batch items and the calls each delivery carries), and the sources, settings and
 * client queue it keeps. SQL over them lives in src/main/engine/store/ only; every other table the
 * migrations create belongs to a feature (tests/unit/core-sql-ownership.test.ts checks this list
 * against the migrations, so a new table is classified when it is added).
 */
export const CORE_TABLES = [
  'calls',
  'requests',
  'deliveries',
  'attempts',
  'source_keys',
  'actions_batch_items',
  'delivery_calls',
  'sources',
  'source_secrets',
  // A config import's new sources until it commits (sources.repo.ts, import-config.ts, migration 23).
  'config_imports',
  'settings',
  'client_queue',
  // The newest call id ever issued, so none is given again (calls.repo.ts, migration 19).
  'call_ids',
  // The messageIds of calls retention removed within the duplicate window (calls.repo.ts, migration 20).
  'dedup_retired',
  // "Search bodies": the trigram index (FTS5 and its shadow tables) and how far it has got (body-search.ts).
  'body_index',
  'body_index_config',
  'body_index_data',
  'body_index_docsize',
  'body_index_idx',
  'body_index_state',
] as const;

/** SQL that reads or writes one of CORE_TABLES: the table named after FROM, JOIN, INTO, UPDATE or DELETE FROM. */
export const CORE_TABLE_SQL = new RegExp(`\\b(?:FROM|JOIN|INTO|UPDATE|DELETE\\s+FROM)\\s+(${CORE_TABLES.join('|')})\\b`, 'i');

/** A prepared statement as a feature sees it: without `.database`, the handle it was prepared on. */
export type FeatureStatement = Omit<Database.Statement<unknown[]>, 'database'>;

/**
 * What a feature's repository (mock receivers, deletions, audiences, tracking plans) gets instead of
 * the database handle: statements over its own tables and a transaction around them. Nothing else of
 * the handle (exec, pragma, backup, close) leaves the store, and a statement over one of the store's
 * tables is refused when it is prepared: the feature asks the store for a named operation instead.
 */
export interface FeatureDb {
  prepare(sql: string): FeatureStatement;
  transaction: Db['transaction'];
}

export function featureDb(db: Db): FeatureDb {
  return {
    prepare(sql) {
      const core = CORE_TABLE_SQL.exec(sql);
      if (core) {
        throw new Error(`A feature's repository may not use the store's table ${core[1]}: SQL over it lives in src/main/engine/store/, behind a named operation of the store.`);
      }
      return db.prepare(sql);
    },
    transaction: (fn) => db.transaction(fn),
  };
}
