import type { CallDetail } from '../../shared/types';
import type { Store } from './store/store';
import type { TrackingPlans } from './tracking-plans/service';
import { forwardingOf } from './forwarding';
import { withAnsweredAttempts } from './in-flight-attempts';

// One read model of a call (issue 41): the detail getMessage answers, listMessageDetails pages
// (webhook-lab/testing reads those two) and the JSON Lines export writes a line of. It was assembled
// in two places, with different batch paging, and the details' list read each call twice. The engine
// makes one (engine.ts) on its store and tracking plans, and hands it to the API and the export.

export interface DetailOptions {
  /**
   * An Actions batch's body: cut to its first items (true: the detail, whose items getBatchItems
   * pages), or whole on its first call only ('unlessFirst': an export line; each of up to 4,000
   * members repeating a 30 MB body passed the longest string V8 makes).
   */
  pageBatches: true | 'unlessFirst';
}

export class CallDetails {
  constructor(
    private readonly store: Store,
    private readonly plans: Pick<TrackingPlans, 'detailOf'>,
  ) {}

  /**
   * These calls' details, in the order given, read in one go so that they agree with each other (the
   * per-URL outcomes of all of them in one query); a call deleted meanwhile (a clear, retention) is
   * left out. Each delivery carries its URLs' attempts as soon as they answered, though its round is
   * still out (in-flight-attempts.ts), and the call what its source's tracking plan found when it arrived.
   */
  many(ids: number[], o: DetailOptions): CallDetail[] {
    const { store, plans } = this;
    const urls = new Map(store.calls.summaries(ids).map((s) => [s.id, s.urls]));
    const out: CallDetail[] = [];
    for (const id of ids) {
      const call = store.calls.get(id);
      if (!call) continue;
      const callUrls = urls.get(id) ?? [];
      const deliveries = withAnsweredAttempts(store, store.deliveries.forCall(id, { pageBatches: o.pageBatches }));
      const { violations, planCheck } = plans.detailOf(id, call.status);
      out.push({ call, urls: callUrls, deliveries, violations, planCheck, forwarding: forwardingOf(store, call, deliveries.length, callUrls) });
    }
    return out;
  }

  /** One call's detail, or null when there is no such call. */
  one(id: number, o: DetailOptions): CallDetail | null {
    return this.many([id], o)[0] ?? null;
  }
}
