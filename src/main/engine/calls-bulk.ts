import { setImmediate as nextTurn } from 'node:timers/promises';
import { RETRY_MATCHING_MAX, type ApiHandlers } from '../../shared/api.contract';
import type { DeliveryState, UrlState } from '../../shared/types';
import type { CallFilter } from './store/calls.repo';
import type { Store } from './store/store';
import type { Dispatcher } from './dispatcher/dispatcher';
import type { EventHub } from './event-hub';
import { CLEAR_CHUNK } from './store/clear-calls';
import { neverSent, resendableWithoutSource } from './dispatcher/delivery-plan';
import { lanesOf } from './dispatcher/lanes';
import { backgroundSlices } from './slice-meter';
import { probeFilter } from './probe/probe-filter';

/** Calls looked at per step of a bulk retry; the event loop turns between steps. */
const RETRY_CHUNK = 100;

export interface BulkDeps {
  store: Store;
  dispatcher: Dispatcher;
  events: EventHub;
}

/** Acting on many calls at once: retry what failed under the current filters, or clear everything. */
export function bulkCallHandlers(d: BulkDeps): Pick<ApiHandlers, 'retryMatching' | 'clearCalls'> {
  const { store, dispatcher } = d;
  return {
    retryMatching: async ({ dryRun, ...given }) => {
      const filter = probeFilter(store, given);
      // Only failed and expired deliveries are retried: a status filter naming another state matches none.
      const states: DeliveryState[] = filter.status === undefined ? ['failed', 'expired'] : filter.status === 'failed' || filter.status === 'expired' ? [filter.status] : [];
      let matched = 0;
      for (const status of states) matched += store.calls.list({ ...filter, status, limit: 1 }).total;
      // A call sent both ways reads as its Classic delivery (delivered, say) while one of its Actions
      // requests failed: without a status filter, those calls are looked for by their Actions parts.
      const actionsParts = filter.status === undefined && filter.urlState === undefined && store.actions.seen();
      if (dryRun && !actionsParts) return { matched, retried: 0 };
      const passes: Omit<CallFilter, 'limit'>[] = states.map((status) => ({ ...filter, status }));
      if (actionsParts) for (const urlState of states as UrlState[]) passes.push({ ...filter, urlState });
      const seen = new Set<number>();
      const deliveries: { id: number; lanes: string[] }[] = [];
      for (const [k, pass] of passes.entries()) {
        let before: number | undefined;
        while (seen.size < RETRY_MATCHING_MAX) {
          const ids = backgroundSlices.time('bulk retry', () => {
            const chunk = store.calls.ids({ ...pass, before, limit: Math.min(RETRY_CHUNK, RETRY_MATCHING_MAX - seen.size) });
            for (const callId of chunk) {
              if (seen.has(callId)) continue;
              seen.add(callId);
              // A request never sent (its mapped body passed the limit) has nothing to send again.
              // Nor has a signed one whose source was deleted (it would go out unsigned: manual-rounds.ts).
              const failed = store.deliveriesOfCall(callId).filter((d) => states.includes(d.state) && !neverSent(d) && (store.sources.get(d.sourceId) !== undefined || resendableWithoutSource(d, false)));
              // The status passes are counted above; a call found only by its Actions parts adds itself.
              if (k >= states.length && failed.length > 0) matched++;
              if (!dryRun) for (const d of failed) deliveries.push({ id: d.id, lanes: lanesOf(d.urls) });
            }
            return chunk;
          });
          if (ids.length < RETRY_CHUNK) break;
          before = ids[ids.length - 1];
          await nextTurn();
        }
      }
      if (dryRun || matched === 0) return { matched, retried: 0 };
      return { matched, retried: dispatcher.retryInBackground(deliveries) };
    },

    clearCalls: async () => {
      const cutoff = store.clearer.cutoff();
      const canceled = await dispatcher.cancelUpTo(cutoff.callId, 'canceled: the calls were cleared', CLEAR_CHUNK);
      let removed = 0;
      for (;;) {
        const chunk = await store.writes.run((tx) => backgroundSlices.time('clear calls', () => store.clearer.deleteCallsChunk(tx, cutoff)));
        store.calls.forgetMessageIds(chunk.messageIds);
        removed += chunk.removed;
        if (chunk.removed < CLEAR_CHUNK) break;
      }
      while ((await store.writes.run(() => backgroundSlices.time('clear calls', () => store.clearer.deleteRequestsChunk(cutoff)))) === CLEAR_CHUNK);
      for (;;) {
        const retired = await store.writes.run(() => backgroundSlices.time('clear calls', () => store.clearer.deleteRetiredChunk(cutoff)));
        store.calls.forgetMessageIds(retired);
        if (retired.length < CLEAR_CHUNK) break;
      }
      if (removed > 0) d.events.emit({ type: 'calls.removed', count: removed });
      return { removed, canceled };
    },
  };
}
