import type { DeliveryState, UrlState } from '../../../shared/types';
import { URL_STATE_BITS } from './url-states';
import { COMBINED_ORDER } from '../../../shared/url-outcome';

// The list filters (status, urlState) over Actions deliveries too, as SQL clauses on a call `c` whose
// Classic delivery is `d` (calls.repo.ts). Added only once the store has had anything of Actions
// (ActionsLedger.seen), so a Classic-only list keeps its plain query. A call's status is its Classic
// delivery's; for a call with none, its Actions parts' combined state (shared/url-outcome.ts
// combinedState: a rank per state in COMBINED_ORDER, the lowest wins), written here as SQL from that order.

const RANKS: Partial<Record<DeliveryState, number>> = Object.fromEntries(COMBINED_ORDER.map((s, i) => [s, i]));

/** One Actions delivery `a`'s rank; its first parameter: the ids of deliveries in flight (JSON). */
const RANK = `CASE WHEN a.id IN (SELECT value FROM json_each(?)) THEN ${RANKS.in_flight} ELSE CASE a.state ${COMBINED_ORDER.map((s, i) => `WHEN '${s}' THEN ${i}`).join(' ')} ELSE 99 END END`;
const ACTIONS_OF_CALL = 'FROM delivery_calls dc JOIN deliveries a ON a.id = dc.delivery_id WHERE dc.call_id = c.id';
const WAITING = 'EXISTS (SELECT 1 FROM actions_batch_items b WHERE b.call_id = c.id)';

export interface Clause {
  sql: string;
  args: unknown[];
}

/** Calls without a Classic delivery whose Actions parts combine to this status (none for dropped/not_forwarded). */
export function actionsStatusClause(status: DeliveryState, inFlightIds: string): Clause | null {
  const rank = RANKS[status];
  if (rank === undefined) return null;
  return {
    sql: `(d.id IS NULL AND c.status = 'accepted' AND MIN(COALESCE((SELECT MIN(${RANK}) ${ACTIONS_OF_CALL}), 99), CASE WHEN ${WAITING} THEN ${RANKS.pending} ELSE 99 END) = ?)`,
    args: [inFlightIds, rank],
  };
}

/** A call that is not forwarded has no Actions part either. */
export const NOT_IN_ACTIONS = `NOT EXISTS (SELECT 1 FROM delivery_calls dc WHERE dc.call_id = c.id) AND NOT ${WAITING}`;

/** Calls with an Actions request in this URL state (a waiting batch item is pending). */
export function actionsUrlStateClause(state: UrlState, inFlightIds: string): Clause {
  if (state === 'in_flight') return { sql: `EXISTS (SELECT 1 ${ACTIONS_OF_CALL} AND a.id IN (SELECT value FROM json_each(?)))`, args: [inFlightIds] };
  const out = state === 'pending' || state === 'retrying';
  const sql = `EXISTS (SELECT 1 ${ACTIONS_OF_CALL} AND (a.url_mask & ?) != 0${out ? ' AND a.id NOT IN (SELECT value FROM json_each(?))' : ''})`;
  return { sql: state === 'pending' ? `(${sql} OR ${WAITING})` : sql, args: [URL_STATE_BITS[state], ...(out ? [inFlightIds] : [])] };
}
