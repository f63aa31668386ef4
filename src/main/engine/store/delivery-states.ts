import type { DeliveryState } from '../../../shared/types';

// The states of a delivery the dispatcher still owes a receiver (issue 41: stated once). Retention
// keeps their calls, a cancel ends them, a secret version stays while one needs it, and a lane parks
// only them. Migration 17's partial index repeats the SQL as written then (a migration is history);
// tests/unit/delivery-states.test.ts holds it equal to this, or SQLite would stop using that index.

export const UNFINISHED_STATES = ['pending', 'in_flight', 'retrying'] as const satisfies readonly DeliveryState[];

/** The list as SQL: `state IN ${UNFINISHED_SQL}`. */
export const UNFINISHED_SQL = `(${UNFINISHED_STATES.map((s) => `'${s}'`).join(', ')})`;

const unfinished: ReadonlySet<DeliveryState> = new Set(UNFINISHED_STATES);

export function isUnfinished(state: DeliveryState): boolean {
  return unfinished.has(state);
}
