// What getStats answers: the calls received (since a time, for a source) counted by what became of
// them. One GROUP BY in the store, so a pipeline can poll it while thousands of calls settle
// (`webhook-lab check`, src/main/cli-check.ts).

/** Delivery states of the Webhooks destination a call can be in; `unfinished` sums the first three. */
export const STATS_DELIVERY_STATES = ['pending', 'in_flight', 'retrying', 'delivered', 'failed', 'expired', 'canceled'] as const;
export type StatsDeliveryState = (typeof STATS_DELIVERY_STATES)[number];

export interface CallStats {
  /** The filter the counts are for (echoed back; since as an ISO time). */
  since: string | null;
  sourceId: string | null;
  /** Calls received: accepted and dropped. */
  calls: number;
  /** Calls the collector dropped (never forwarded), by reason, most frequent first. */
  dropped: number;
  dropReasons: { reason: string; count: number }[];
  /** Calls their source's tracking plan blocked: stored, never forwarded (docs/tracking-plans.md); absent from older labs. */
  blocked?: number;
  /**
   * Accepted calls the Webhooks destination was not given (off, or not routed there): no Classic
   * delivery, no Actions delivery carrying them and no place in a waiting Actions batch.
   */
  notForwarded: number;
  /**
   * Deliveries by state, counted per call they carry: a call's Classic delivery once, and each
   * Actions delivery carrying it once (a batch of 20 calls counts 20); a call waiting in an Actions
   * batch counts as pending. In mode `both`, or with several matching mappings, one call counts
   * several times, so these can add up to more than `calls`.
   */
  deliveries: Record<StatsDeliveryState, number>;
  /** pending + in_flight + retrying: deliveries (and batch places) that may still change. */
  unfinished: number;
}
