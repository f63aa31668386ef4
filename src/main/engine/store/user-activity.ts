import type { Db } from './database';

/** One accepted identify or track call with a userId, as audience profiles read it. */
export interface ActivityRow {
  id: number;
  user_id: string;
  type: 'identify' | 'track';
  label: string | null;
  received_at: number;
  ts: number | null;
  request_id: number;
  batch_index: number | null;
  /** The stored normalized form's traits / properties; null when the call's form is rebuilt from its request. */
  traits: string | null;
  props: string | null;
  stored: 0 | 1;
}

export const ACTIVITY_PAGE = 5000;

/**
 * Accepted identify and track calls with a userId, in pages by call id, for audience profiles.
 * The app's own calls (paths under /internal/: audience syncs, deletion notices) are left out, so a
 * sync never feeds its own output back into the rules. Only names and times are read, plus the
 * properties of one chosen event, which keeps a 200k-call history cheap.
 */
export class UserActivity {
  private readonly page;

  constructor(db: Db) {
    this.page = db.prepare(
      `SELECT c.id, c.user_id, c.type, c.label, c.received_at, c.timestamp AS ts, c.request_id, c.batch_index, c.normalized IS NOT NULL AS stored,
         CASE WHEN c.type = 'identify' THEN json_extract(c.normalized, '$.traits') END AS traits,
         CASE WHEN c.type = 'track' AND c.label = @event THEN json_extract(c.normalized, '$.properties') END AS props
       FROM calls c JOIN requests r ON r.id = c.request_id
       WHERE c.id > @after AND c.status = 'accepted' AND c.user_id IS NOT NULL AND c.type IN ('identify', 'track')
         AND json_extract(r.meta, '$.path') NOT LIKE '/internal/%'
       ORDER BY c.id LIMIT ${ACTIVITY_PAGE}`,
    );
  }

  /**
   * Up to ACTIVITY_PAGE calls after the call id `after`; `propertiesOf` names the event whose stored
   * properties are read. A page is read whole (not iterated) so the caller may use the connection
   * between pages, e.g. to read a call's item from its request.
   */
  pageAfter(after: number, propertiesOf: string | null): ActivityRow[] {
    return this.page.all({ event: propertiesOf, after }) as ActivityRow[];
  }
}
