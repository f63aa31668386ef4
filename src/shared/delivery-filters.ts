// The inspector's status filter values. In a file of their own, without zod, so the renderer's
// first bundle can list them without loading the API contract's schemas.
export const DELIVERY_FILTERS = ['delivered', 'retrying', 'failed', 'expired', 'dropped', 'pending', 'in_flight', 'canceled', 'not_forwarded', 'blocked'] as const;

/** The inspector's per-URL filter (urlState): calls with at least one URL in that state. */
export const URL_STATE_FILTERS = ['failed', 'retrying', 'in_flight', 'expired', 'pending', 'delivered', 'canceled', 'not_attempted'] as const;
