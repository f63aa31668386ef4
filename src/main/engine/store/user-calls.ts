import type { Db } from './database';

/** What a deletion request needs to know about one userId's calls (SPEC §6). */
export class UserCalls {
  private readonly sources;
  private readonly unfinished;

  constructor(db: Db) {
    this.sources = db
      .prepare(`SELECT DISTINCT k.source_id FROM calls c JOIN source_keys k ON k.key = c.source_key
        WHERE c.user_id = ? AND c.type != 'delete'`)
      .pluck();
    this.unfinished = db.prepare(`SELECT 1 FROM deliveries d JOIN calls c ON c.id = d.call_id
      WHERE c.user_id = ? AND d.state IN ('pending', 'in_flight') LIMIT 1`);
  }

  /** Ids of the sources that received calls for the user (deletion notices not counted); deleted sources included. */
  sourcesOf(userId: string): string[] {
    return this.sources.all(userId) as string[];
  }

  /** Whether a delivery of the user's calls is pending or being sent now (retrying ones are not). */
  hasRoundUnderway(userId: string): boolean {
    return this.unfinished.get(userId) !== undefined;
  }
}
