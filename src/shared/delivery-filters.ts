// The inspector's status filter values. In a file of their own, without zod, so the renderer's
// first bundle can list them without loading the API contract's schemas.
export const DELIVERY_FILTERS = ['delivered', 'retrying', 'failed', 'expired', 'dropped', 'pending', 'in_flight', 'not_forwarded'] as const;
