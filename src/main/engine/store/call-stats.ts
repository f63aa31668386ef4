import { STATS_DELIVERY_STATES, type CallStats, type StatsDeliveryState } from '../../../shared/call-stats';
import type { Db } from './database';
import type { SourceKeys } from './source-keys';
import { formatOptionalTimestamp } from '../../../shared/timestamp';

export interface StatsFilter {
  /** Epoch ms: calls received at or after. */
  since?: number;
  sourceId?: string;
}

/**
 * Counts the calls by outcome in two aggregate queries (no rows leave SQLite). A delivery whose
 * round is being sent now is stored as pending or retrying; `inFlightIds` (store.inFlight) moves it
 * to in_flight, as the inspector shows it.
 */
export function callStats(db: Db, sourceKeys: SourceKeys, inFlightIds: number[], f: StatsFilter): CallStats {
  const where: string[] = [];
  const args: unknown[] = [];
  // A source id no call was ever stored for matches nothing (key -1), as in calls.repo.ts.
  if (f.sourceId) {
    where.push('c.source_key = ?');
    args.push(sourceKeys.find(f.sourceId) ?? -1);
  }
  if (f.since !== undefined) {
    where.push('c.received_at >= ?');
    args.push(f.since);
  }
  const filter = where.length ? `WHERE ${where.join(' AND ')}` : '';
  const rows = db
    .prepare(
      `SELECT CASE WHEN c.status = 'dropped' THEN 'dropped'
                   WHEN d.id IS NULL THEN 'not_forwarded'
                   WHEN d.state IN ('pending', 'retrying') AND d.id IN (SELECT value FROM json_each(?)) THEN 'in_flight'
                   ELSE d.state END AS outcome, COUNT(*) AS n
       FROM calls c LEFT JOIN deliveries d ON d.call_id = c.id AND d.kind = 'classic' ${filter} GROUP BY outcome`,
    )
    .all(JSON.stringify(inFlightIds), ...args) as { outcome: string; n: number }[];
  const reasons = db
    .prepare(`SELECT COALESCE(c.drop_reason, 'unknown') AS reason, COUNT(*) AS n FROM calls c ${filter ? `${filter} AND` : 'WHERE'} c.status = 'dropped' GROUP BY reason ORDER BY n DESC, reason`)
    .all(...args) as { reason: string; n: number }[];

  const deliveries = Object.fromEntries(STATS_DELIVERY_STATES.map((s) => [s, 0])) as Record<StatsDeliveryState, number>;
  let calls = 0;
  let dropped = 0;
  let notForwarded = 0;
  for (const { outcome, n } of rows) {
    calls += n;
    if (outcome === 'dropped') dropped += n;
    else if (outcome === 'not_forwarded') notForwarded += n;
    // A delivery row never says 'dropped' for an accepted call; any state not listed counts as pending.
    else deliveries[(STATS_DELIVERY_STATES as readonly string[]).includes(outcome) ? (outcome as StatsDeliveryState) : 'pending'] += n;
  }
  return {
    since: formatOptionalTimestamp(f.since),
    sourceId: f.sourceId ?? null,
    calls,
    dropped,
    dropReasons: reasons.map((r) => ({ reason: r.reason, count: r.n })),
    notForwarded,
    deliveries,
    unfinished: deliveries.pending + deliveries.in_flight + deliveries.retrying,
  };
}
