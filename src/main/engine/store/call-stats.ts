import { STATS_DELIVERY_STATES, type CallStats, type StatsDeliveryState } from '../../../shared/call-stats';
import type { Db } from './database';
import type { SourceKeys } from './source-keys';
import { formatOptionalTimestamp } from '../../../shared/timestamp';
import { UNFINISHED_STATES } from './delivery-states';

export interface StatsFilter {
  /** Epoch ms: calls received at or after. */
  since?: number;
  sourceId?: string;
}

/**
 * Counts the calls by outcome in aggregate queries (no rows leave SQLite). A delivery whose round is
 * being sent now is stored as pending or retrying; `inFlightIds` (store.inFlight) moves it to
 * in_flight, as the inspector shows it.
 *
 * Deliveries are counted per call they carry: a call's Classic delivery counts once, and so does
 * each Actions delivery carrying it (an Actions batch of 20 calls that failed counts 20 failed); a
 * call still waiting in its mapping's batch counts as pending. A call is not forwarded when it has
 * none of these. So with Actions, the delivery counts can add up to more than the calls. The Actions
 * parts are counted only once the store has had any (`actions`: ActionsLedger.seen), so a
 * Classic-only store keeps its one query.
 */
export function callStats(db: Db, sourceKeys: SourceKeys, inFlightIds: number[], f: StatsFilter, actions = false): CallStats {
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
  const inFlight = JSON.stringify(inFlightIds);
  // One row per call: its Classic delivery's state; a call without one is 'actions_only' when an
  // Actions delivery carries it or it waits in a batch (counted by the parts below), else not forwarded.
  const noClassic = actions
    ? `CASE WHEN EXISTS (SELECT 1 FROM delivery_calls dc WHERE dc.call_id = c.id) OR EXISTS (SELECT 1 FROM actions_batch_items b WHERE b.call_id = c.id)
         THEN 'actions_only' ELSE 'not_forwarded' END`
    : "'not_forwarded'";
  const perCall = `SELECT 'call' AS part, CASE WHEN c.status = 'dropped' THEN 'dropped' WHEN c.status = 'blocked' THEN 'blocked'
                   WHEN d.id IS NULL THEN ${noClassic}
                   WHEN d.state IN ('pending', 'retrying') AND d.id IN (SELECT value FROM json_each(?)) THEN 'in_flight'
                   ELSE d.state END AS outcome, COUNT(*) AS n
       FROM calls c LEFT JOIN deliveries d ON d.call_id = c.id AND d.kind = 'classic' ${filter} GROUP BY outcome`;
  const actionsParts = `SELECT 'actions', CASE WHEN a.state IN ('pending', 'retrying') AND a.id IN (SELECT value FROM json_each(?)) THEN 'in_flight'
                   ELSE a.state END, COUNT(*)
       FROM calls c JOIN delivery_calls dc ON dc.call_id = c.id JOIN deliveries a ON a.id = dc.delivery_id ${filter} GROUP BY 2
     UNION ALL
     SELECT 'actions', 'pending', COUNT(*) FROM calls c JOIN actions_batch_items b ON b.call_id = c.id ${filter}`;
  const rows = db
    .prepare(actions ? `${perCall} UNION ALL ${actionsParts}` : perCall)
    .all(...(actions ? [inFlight, ...args, inFlight, ...args, ...args] : [inFlight, ...args])) as { part: 'call' | 'actions'; outcome: string; n: number }[];
  const reasons = db
    .prepare(`SELECT COALESCE(c.drop_reason, 'unknown') AS reason, COUNT(*) AS n FROM calls c ${filter ? `${filter} AND` : 'WHERE'} c.status = 'dropped' GROUP BY reason ORDER BY n DESC, reason`)
    .all(...args) as { reason: string; n: number }[];

  const deliveries = Object.fromEntries(STATS_DELIVERY_STATES.map((s) => [s, 0])) as Record<StatsDeliveryState, number>;
  let calls = 0;
  let dropped = 0;
  let notForwarded = 0;
  let blocked = 0;
  for (const { part, outcome, n } of rows) {
    if (part === 'call') calls += n;
    if (outcome === 'dropped') dropped += n;
    else if (outcome === 'not_forwarded') notForwarded += n;
    else if (outcome === 'blocked') blocked += n;
    else if (outcome === 'actions_only') continue;
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
    blocked,
    deliveries,
    unfinished: UNFINISHED_STATES.reduce((n, s) => n + deliveries[s], 0),
  };
}
