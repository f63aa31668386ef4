import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { MIGRATIONS } from '../../src/main/engine/store/migrations';
import { isUnfinished, UNFINISHED_SQL, UNFINISHED_STATES } from '../../src/main/engine/store/delivery-states';
import { engineSources } from '../helpers/engine-sources';

// The unfinished states are stated once (issue 41): delivery-states.ts, and migration 17's partial
// index as it was written then.

describe('unfinished delivery states', () => {
  it('are the three the dispatcher still owes a receiver', () => {
    expect([...UNFINISHED_STATES]).toEqual(['pending', 'in_flight', 'retrying']);
    expect(['pending', 'in_flight', 'retrying'].every((s) => isUnfinished(s as never))).toBe(true);
    expect(['delivered', 'failed', 'expired', 'canceled', 'dropped'].some((s) => isUnfinished(s as never))).toBe(false);
  });

  it("match migration 17's partial index, which SQLite then uses for the secret-version query", () => {
    const index = MIGRATIONS.join('\n').match(/CREATE INDEX deliveries_sw_version[^;]*WHERE sw_version IS NOT NULL AND state IN (\([^)]*\))/);
    expect(index?.[1]).toBe(UNFINISHED_SQL);
    const db = new Database(':memory:');
    db.exec(`CREATE TABLE deliveries (id INTEGER PRIMARY KEY, source_id TEXT, sw_version INTEGER, state TEXT);
      CREATE INDEX deliveries_sw_version ON deliveries(source_id, sw_version) WHERE sw_version IS NOT NULL AND state IN ${index![1]};`);
    const plan = db.prepare(`EXPLAIN QUERY PLAN SELECT 1 FROM deliveries WHERE source_id = ? AND sw_version = ? AND state IN ${UNFINISHED_SQL} LIMIT 1`).all('s', 1) as { detail: string }[];
    expect(plan.map((r) => r.detail).join(' ')).toContain('deliveries_sw_version');
    db.close();
  });

  it('are written out nowhere else in the engine', () => {
    const LIST = /'pending',\s*'in_flight',\s*'retrying'/g;
    const found: string[] = [];
    for (const { file, text } of engineSources()) {
      if (file === join('store', 'delivery-states.ts') || file === join('store', 'migrations.ts')) continue;
      for (const m of text.matchAll(LIST)) found.push(`${file}: ${m[0]}`);
    }
    expect(found).toEqual([]);
  });
});
