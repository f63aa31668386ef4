// The inspector's status filter values. In a file of their own, without zod, so the renderer's
// first bundle can list them without loading the API contract's schemas.
export const DELIVERY_FILTERS = ['delivered', 'retrying', 'failed', 'expired', 'dropped', 'pending', 'in_flight', 'canceled', 'not_forwarded', 'blocked'] as const;

/** The inspector's per-URL filter (urlState): calls with at least one URL in that state. */
export const URL_STATE_FILTERS = ['failed', 'retrying', 'in_flight', 'expired', 'pending', 'delivered', 'canceled', 'not_attempted'] as const;

/** The Inspector's filters, as its list asks the engine for calls (renderer/stores/inspector-merge.ts applies them to live summaries). */
export type StatusFilter = (typeof DELIVERY_FILTERS)[number];
export type UrlStateFilter = (typeof URL_STATE_FILTERS)[number];

export interface InspectorFilters {
  status?: StatusFilter;
  /** Calls with at least one URL in this state. */
  urlState?: UrlStateFilter;
  type?: string;
  sourceId?: string;
  q?: string;
  /** Search inside request bodies too (the engine's `body=1`). */
  body?: boolean;
  /** Only calls with tracking plan violations. */
  violations?: boolean;
  /** Show the calls of the source "probe" (Check a receiver's): hidden unless set, or that source is the one filtered on. */
  probe?: boolean;
}
