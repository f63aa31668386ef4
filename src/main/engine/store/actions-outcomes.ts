import type { ActionsMapping, ActionsMethod, ActionsVia, DeliveryState, WebhookUrl } from '../../../shared/types';
import type { Db } from './database';
import { maskUrlPassword } from '../../../shared/url-credentials';
import type { ActionsPart } from './call-summary';
import { answeredCount, hasUrlOut, urlOutcomes, type InFlight, type InFlightRound, type StoredUrlState } from './url-states';

// Where a page's calls stand with Webhooks (Actions): one query for the page (delivery_calls ⋈
// deliveries, and actions_batch_items for calls still waiting), turned into the parts a summary
// shows after its Classic URLs (call-summary.ts withActions).

export interface ActionsDeliveryPart {
  id: number;
  mapping: string;
  method: ActionsMethod;
  itemCount: number;
  /** The call's position in the delivery's array. */
  item: number;
  state: DeliveryState;
  attemptCount: number;
  nextAttemptAt: number | null;
  urls: WebhookUrl[];
  urlStates: StoredUrlState[] | null;
}

/** A call's part in an Actions delivery, with the rounds of it in flight laid over. */
export function deliveryPart(d: ActionsDeliveryPart, rounds: Set<InFlightRound> | undefined): ActionsPart {
  const outcome = urlOutcomes(d.urls.slice(0, 1), d.urlStates, rounds)[0] ?? { url: '', state: d.state === 'canceled' ? 'canceled' : 'pending', lastStatus: null, attempts: 0, startedAt: null };
  const via: ActionsVia = { kind: 'actions', mapping: d.mapping, method: d.method, deliveryId: d.id };
  if (d.itemCount > 1) via.batch = { size: d.itemCount, item: d.item };
  outcome.via = via;
  // Counting its URLs answered in a round still out, as the Classic summary and the detail do.
  return { deliveryId: d.id, state: hasUrlOut(rounds) ? 'in_flight' : d.state, attemptCount: d.attemptCount + answeredCount(rounds), nextAttemptAt: d.nextAttemptAt, outcome };
}

/** A call waiting in its mapping's batch: `queued` items so far of the batch size. */
export function waitingPart(mapping: string, m: Pick<ActionsMapping, 'url' | 'method' | 'batchSize'> | undefined, queued: number): ActionsPart {
  const via: ActionsVia = { kind: 'actions', mapping, method: m?.method ?? 'POST', deliveryId: null, waiting: { queued, of: m?.batchSize ?? queued } };
  return {
    deliveryId: null,
    state: 'pending',
    attemptCount: 0,
    nextAttemptAt: null,
    outcome: { url: maskUrlPassword(m === undefined ? '' : typeof m.url === 'string' ? m.url : JSON.stringify(m.url)), state: 'pending', lastStatus: null, attempts: 0, startedAt: null, via },
  };
}

export class ActionsOutcomes {
  private readonly stmt;

  constructor(
    db: Db,
    private readonly inFlight: InFlight,
    /** A source's current mapping by name (what a waiting item's method and batch size are). */
    private readonly mappingOf: (sourceId: string, name: string) => ActionsMapping | undefined,
  ) {
    this.stmt = db.prepare(`SELECT dc.call_id AS call_id, dc.item AS item, d.id AS id, d.mapping AS mapping, d.method AS method,
        d.item_count AS item_count, d.state AS state, d.attempt_count AS attempts, d.next_attempt_at AS next, d.urls AS urls,
        d.url_states AS url_states, NULL AS source_id, NULL AS queued
      FROM delivery_calls dc JOIN deliveries d ON d.id = dc.delivery_id WHERE dc.call_id IN (SELECT value FROM json_each(@ids))
      UNION ALL
      SELECT b.call_id, NULL, NULL, b.mapping, NULL, NULL, 'pending', 0, NULL, NULL, NULL, b.source_id,
        (SELECT COUNT(*) FROM actions_batch_items q WHERE q.source_id = b.source_id AND q.mapping = b.mapping)
      FROM actions_batch_items b WHERE b.call_id IN (SELECT value FROM json_each(@ids))`);
  }

  /** The Actions parts of these calls, by call id: deliveries oldest first, then batches waiting. */
  of(callIds: number[]): Map<number, ActionsPart[]> {
    const out = new Map<number, ActionsPart[]>();
    if (callIds.length === 0) return out;
    const rows = (this.stmt.all({ ids: JSON.stringify(callIds) }) as Row[]).sort((a, b) => a.call_id - b.call_id || (a.id ?? Infinity) - (b.id ?? Infinity));
    for (const r of rows) {
      const part =
        r.id === null
          ? waitingPart(r.mapping, this.mappingOf(r.source_id!, r.mapping), r.queued ?? 0)
          : deliveryPart(
              {
                id: r.id,
                mapping: r.mapping,
                method: r.method!,
                itemCount: r.item_count ?? 1,
                item: r.item ?? 0,
                state: r.state,
                attemptCount: r.attempts,
                nextAttemptAt: r.next,
                urls: JSON.parse(r.urls!) as WebhookUrl[],
                urlStates: r.url_states === null ? null : (JSON.parse(r.url_states) as StoredUrlState[]),
              },
              this.inFlight.of(r.id),
            );
      let list = out.get(r.call_id);
      if (!list) out.set(r.call_id, (list = []));
      list.push(part);
    }
    return out;
  }
}

interface Row {
  call_id: number;
  item: number | null;
  id: number | null;
  mapping: string;
  method: ActionsMethod | null;
  item_count: number | null;
  state: DeliveryState;
  attempts: number;
  next: number | null;
  urls: string | null;
  url_states: string | null;
  source_id: string | null;
  queued: number | null;
}
