import type Database from 'better-sqlite3';
import type { Db } from './database';

export type Statement = Database.Statement<unknown[]>;

/** Prepared once per SQL text and reused: the feature repositories' statements (audiences, tracking plans). */
export function statementCache(db: Db): (sql: string) => Statement {
  const stmts = new Map<string, Statement>();
  return (sql) => {
    let s = stmts.get(sql);
    if (!s) stmts.set(sql, (s = db.prepare(sql)));
    return s;
  };
}
