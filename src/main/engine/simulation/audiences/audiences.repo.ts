import type { Audience } from '../../../../shared/simulation.contract';
import type { Json } from '../../../../shared/types';
import type { FeatureDb } from '../../store/feature-db';
import { statementCache } from '../../store/statement-cache';
import { naturalOrder } from '../../../../shared/natural-order';

import type { Definition } from './rules';
import { formatOptionalTimestamp, formatTimestamp } from '../../../../shared/timestamp';

interface AudienceRow {
  id: string;
  name: string;
  key: string;
  type: 'audience' | 'computed_trait';
  definition: string;
  source_ids: string;
  sync_interval_ms: number | null;
  created_at: number;
  last_sync_at: number | null;
  member_count: number;
}

export interface StoredAudience extends Audience {
  definition: Definition;
  createdAtMs: number;
  lastSyncAtMs: number | null;
}

export interface MemberChange {
  userId: string;
  /** undefined when the user left (exited, or no longer has a value). */
  value: Json | undefined;
}

/** The audiences and audience_members tables (migration 2). Members' values are kept as JSON text. */
export class AudiencesRepo {
  /** Prepared once per SQL text and reused. */
  private readonly stmt;

  constructor(private readonly db: FeatureDb) {
    this.stmt = statementCache(db);
  }

  list(): StoredAudience[] {
    return (this.stmt('SELECT * FROM audiences ORDER BY created_at, name').all() as AudienceRow[]).map(fromRow);
  }

  get(id: string): StoredAudience | undefined {
    const row = this.stmt('SELECT * FROM audiences WHERE id = ?').get(id) as AudienceRow | undefined;
    return row && fromRow(row);
  }

  byName(name: string): StoredAudience | undefined {
    const row = this.stmt('SELECT * FROM audiences WHERE name = ?').get(name) as AudienceRow | undefined;
    return row && fromRow(row);
  }

  byKey(key: string): StoredAudience | undefined {
    const row = this.stmt('SELECT * FROM audiences WHERE key = ?').get(key) as AudienceRow | undefined;
    return row && fromRow(row);
  }

  insert(a: { id: string; name: string; key: string; definition: Definition; sourceIds: string[]; syncIntervalMs: number | null }, now: number): void {
    this
      .stmt(
        `INSERT INTO audiences (id, name, key, type, definition, source_ids, sync_interval_ms, created_at)
         VALUES (@id, @name, @key, @type, @definition, @sourceIds, @syncIntervalMs, @now)`,
      )
      .run({ ...a, type: a.definition.type, definition: JSON.stringify(a.definition), sourceIds: JSON.stringify(a.sourceIds), now });
  }

  updateDefinition(id: string, d: { definition: Definition; sourceIds: string[]; syncIntervalMs: number | null }): void {
    this
      .stmt('UPDATE audiences SET type = @type, definition = @definition, source_ids = @sourceIds, sync_interval_ms = @syncIntervalMs WHERE id = @id')
      .run({ id, type: d.definition.type, definition: JSON.stringify(d.definition), sourceIds: JSON.stringify(d.sourceIds), syncIntervalMs: d.syncIntervalMs });
  }

  rename(id: string, name: string): void {
    this.stmt('UPDATE audiences SET name = ? WHERE id = ?').run(name, id);
  }

  /**
   * Stored members (as of the last sync) in natural order of userId (user_2 before user_10), values
   * parsed; at most `limit`, and how many in all. SQLite has no such collation: the ids are read and
   * sorted here (audiences are demo-sized: 20,000 members sort in a few ms), the values of the first
   * `limit` only are read.
   */
  memberList(id: string, limit: number): { members: { userId: string; value: Json }[]; total: number } {
    const ids = (this.stmt('SELECT user_id FROM audience_members WHERE audience_id = ?').pluck().all(id) as string[]).sort(naturalOrder);
    const shown = ids.slice(0, limit);
    const values = new Map(
      (this.stmt('SELECT user_id, value FROM audience_members WHERE audience_id = ? AND user_id IN (SELECT value FROM json_each(?))').all(id, JSON.stringify(shown)) as { user_id: string; value: string }[]).map((r) => [r.user_id, r.value]),
    );
    return { members: shown.map((userId) => ({ userId, value: JSON.parse(values.get(userId)!) as Json })), total: ids.length };
  }

  delete(id: string): boolean {
    this.stmt('DELETE FROM audience_members WHERE audience_id = ?').run(id);
    return this.stmt('DELETE FROM audiences WHERE id = ?').run(id).changes > 0;
  }

  /** userId → value as stored (JSON text), to diff against a fresh evaluation. */
  members(id: string): Map<string, string> {
    const rows = this.stmt('SELECT user_id, value FROM audience_members WHERE audience_id = ?').all(id) as { user_id: string; value: string }[];
    return new Map(rows.map((r) => [r.user_id, r.value]));
  }

  /** Applies one sync's changes; false (nothing written) when the audience was deleted meanwhile. */
  applySync(id: string, changes: MemberChange[], now: number): boolean {
    if (!this.stmt('SELECT 1 FROM audiences WHERE id = ?').get(id)) return false;
    const upsert = this.stmt(
      'INSERT INTO audience_members (audience_id, user_id, value) VALUES (?, ?, ?) ON CONFLICT (audience_id, user_id) DO UPDATE SET value = excluded.value',
    );
    const remove = this.stmt('DELETE FROM audience_members WHERE audience_id = ? AND user_id = ?');
    for (const c of changes) {
      if (c.value === undefined) remove.run(id, c.userId);
      else upsert.run(id, c.userId, JSON.stringify(c.value));
    }
    this
      .stmt('UPDATE audiences SET last_sync_at = ?, member_count = (SELECT COUNT(*) FROM audience_members WHERE audience_id = ?) WHERE id = ?')
      .run(now, id, id);
    return true;
  }

  /** Audiences whose interval has passed since their last sync (or creation). */
  due(now: number): string[] {
    const rows = this
      .stmt('SELECT id FROM audiences WHERE sync_interval_ms IS NOT NULL AND COALESCE(last_sync_at, created_at) + sync_interval_ms <= ?')
      .all(now) as { id: string }[];
    return rows.map((r) => r.id);
  }
}

function fromRow(r: AudienceRow): StoredAudience {
  const definition = JSON.parse(r.definition) as Definition;
  return {
    id: r.id,
    name: r.name,
    key: r.key,
    type: r.type,
    ...(definition.type === 'audience' ? { rule: definition.rule } : { compute: definition.compute }),
    sourceIds: JSON.parse(r.source_ids) as string[],
    syncIntervalMs: r.sync_interval_ms,
    createdAt: formatTimestamp(r.created_at),
    lastSyncAt: formatOptionalTimestamp(r.last_sync_at),
    memberCount: r.member_count,
    definition,
    createdAtMs: r.created_at,
    lastSyncAtMs: r.last_sync_at,
  };
}

/** The public shape (without the internal fields). */
export function toAudience(a: StoredAudience): Audience {
  const { definition: _d, createdAtMs: _c, lastSyncAtMs: _l, ...rest } = a;
  return rest;
}
