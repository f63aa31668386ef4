import type { FeatureDb, FeatureStatement } from './feature-db';

export type Statement = FeatureStatement;

/** Prepared once per SQL text and reused: the feature repositories' statements (audiences, tracking plans). */
export function statementCache(db: FeatureDb): (sql: string) => Statement {
  const stmts = new Map<string, Statement>();
  return (sql) => {
    let s = stmts.get(sql);
    if (!s) stmts.set(sql, (s = db.prepare(sql)));
    return s;
  };
}
