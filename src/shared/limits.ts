// Size limits, in one place for the collector (which refuses or drops what is over them) and the
// batching client (which splits and refuses so that it never sends what the collector would refuse).
// SPEC §3 decision: KB = 1024 bytes, the most lenient reading, so no real client's valid request is
// refused: 32 KB = 32768 bytes and 500 KB = 512000 bytes.

/** A single call, as JSON (SPEC §3, real): the collector drops a larger one, the client refuses it. */
export const MAX_CALL_BYTES = 32 * 1024;

/** A whole batch request body (SPEC §3, real): the collector refuses a larger one, the client splits below it. */
export const MAX_BATCH_BYTES = 500 * 1024;

/** Items in one batch request (SPEC §3, real); also the most a client flush (flushAt) may gather. */
export const MAX_BATCH_ITEMS = 2500;

/**
 * Not a request limit, though close to MAX_BATCH_BYTES: the request bytes the collector parses and
 * has not yet committed, across all requests at once (one request is always admitted, so a full
 * batch never starves). It bounds memory under a flood, not what a client may send: about 1,300
 * typical events, enough for group commit to batch well (ten concurrent 40 KB batches fit), small
 * enough that hundreds of batches at once do not balloon the heap (measured: 240 MB peak RSS under
 * the official Node SDK's 200 concurrent batches, against 290 MB with 2 MB here).
 */
export const INGEST_BYTES_IN_FLIGHT = 512 * 1024;

/**
 * Not a SPEC limit either: the longest edited body the control API takes for a replay (characters of
 * JSON text). As large as a batch request, so any body a receiver could be sent fits with room to
 * spare; only a bound against a runaway paste.
 */
export const MAX_REPLAY_BODY_CHARS = 512_000;

/**
 * Not SPEC limits: how large one call's mapped data may be in a Webhooks (Actions) request (the body
 * of an unbatched mapping, or one item of a batch), as UTF-8 JSON: MAPPED_BODY_RATIO times the call's
 * own JSON (the whole event, as normalized), at least MIN_MAPPED_BODY_BYTES, at most
 * MAX_MAPPED_BODY_BYTES (mappedBodyLimit below). Segment publishes no such
 * limit (its webhook action sends whatever its mapping yields), but a mapping is a template: each
 * `{"@path": "$."}` field copies the whole call, and 20,000 of them made 600 MB of one 30 KB call;
 * 1,000 of them made 73 MB of 100 calls of 150 bytes. The default mapping (the whole event: 1 time)
 * and any that picks, renames or repeats a call's fields a few times stay far below. Relative to the
 * call, the Actions bodies one collector request can cause stay bounded too (it takes 500 KB at most:
 * 16 × 500 KB, plus 8 KB per call, per mapping), which a fixed limit per call could not do for 2,500
 * small calls. A mapping over it fails that one delivery, unsent, with its reason; evaluation stops there.
 */
export const MAX_MAPPED_BODY_BYTES = 512 * 1024;
export const MAPPED_BODY_RATIO = 16;
export const MIN_MAPPED_BODY_BYTES = 8 * 1024;

/** The most one call's mapped data may be, given the size of the call's JSON (as normalized). */
export function mappedBodyLimit(callBytes: number): number {
  return Math.min(MAX_MAPPED_BODY_BYTES, Math.max(MIN_MAPPED_BODY_BYTES, MAPPED_BODY_RATIO * callBytes));
}

/**
 * Not a SPEC limit: the most fields (object members and array items, a directive counting as one) a
 * mapping's `data` may have, checked when it is configured. Segment's mapping screens hold tens; the
 * bound keeps the work per call (up to 5 mappings, each walked for every call) small.
 */
export const MAX_MAPPING_DATA_FIELDS = 1000;

/**
 * Not a SPEC limit: the longest receiver URL (a Classic URL or an Actions mapping's), in characters.
 * Every delivery stores its URLs, so a long one costs every call (three 300 KB URLs added 192 MB
 * per 100 calls). Browsers and servers commonly stop near 2 KB; a receiver URL needs far less.
 */
export const MAX_RECEIVER_URL_CHARS = 2048;

/**
 * Not a SPEC limit: the most one Webhooks (Actions) batch request body may be (UTF-8 bytes). Segment's
 * default batch (1,000 calls) of whole events at the 32 KB call limit fits; a batch whose items would
 * pass it goes as several requests, each within it, as Segment's batch size field allows ("actual
 * batch sizes may be lower"). With MAX_MAPPED_BODY_BYTES per item, batches of 4,000 could otherwise
 * reach 2 GB.
 */
export const MAX_ACTIONS_BATCH_BODY_BYTES = 32 * 1024 * 1024;
