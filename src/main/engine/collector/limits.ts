// SPEC §3 decision: KB = 1024 bytes, the most lenient reading, so no real client's valid request is refused.
export const MAX_CALL_BYTES = 32 * 1024;
export const MAX_BATCH_BYTES = 500 * 1024;
export const MAX_BATCH_ITEMS = 2500;
