import type { ActionsMapping, ActionsMethod, NormalizedCall } from '../types';
import { mappedDataText } from './data-mapping';

// The request Segment's Webhooks (Actions) destination makes for one mapping, as its source shows
// (segmentio/action-destinations, packages/destination-actions/src/destinations/webhook/):
// - send/index.ts perform: `request(url, { method, headers, json: data })`; performBatch:
//   `json: payload.map(({ data }) => data)` with url, method and headers taken from the first
//   payload, after batching on `batch_keys` default ['url', 'method', 'headers'].
// - index.ts extendRequest: `X-Signature` = createHmac('sha1', sharedSecret)
//   .update(JSON.stringify(payload.data), 'utf8').digest('hex'), only when the payload has `data`.
//   For a batch that payload is the first event's, so the signature covers the first item's data,
//   not the body (__test__/webhook.test.ts checks it against `JSON.stringify(body[0])`). Kept: it
//   is the trap a receiver verifying the raw body falls into.
// - packages/core: create-request-client.ts sets `user-agent: Segment (Actions)`; request-client.ts
//   sets `content-type: application/json` for `json`, and merges every header through fetch's
//   Headers, which lowercases names, so they reach the receiver lowercased; a `json` of undefined
//   sends no body and no content-type.

export const ACTIONS_USER_AGENT = 'Segment (Actions)';
/** Header name of the Actions signature, lowercased as it goes out. */
export const ACTIONS_SIGNATURE_HEADER = 'x-signature';
/** Segment's batch size default when batching is turned on, and its maximum. */
export const ACTIONS_DEFAULT_BATCH_SIZE = 1000;
export const ACTIONS_MAX_BATCH_SIZE = 4000;

export interface ActionsRequest {
  url: string;
  method: ActionsMethod;
  /** Lowercased names; without x-signature (sign signedText, then add it) and content-length. */
  headers: Record<string, string>;
  /** The exact body text; '' when a single call's data resolved to nothing. */
  body: string;
  /**
   * What X-Signature is the HMAC-SHA1 of (with the source's shared secret): the data of the one
   * call, or for a batch of the first call only. null: nothing to sign, send no X-Signature.
   */
  signedText: string | null;
  /** How many calls it carries; a batch body is an array of this many items. */
  callCount: number;
  batch: boolean;
}

/**
 * The request for `calls` under `mapping`: one call unbatched, or a batch (a mapping with a
 * batchSize always sends an array, even of one). Calls must all have matched the mapping's trigger;
 * the caller splits them into batches of at most batchSize. Throws MappedDataTooLarge when a call's
 * data passes MAX_MAPPED_BODY_BYTES.
 */
export function buildActionsRequest(mapping: ActionsMapping, calls: readonly NormalizedCall[]): ActionsRequest {
  if (calls.length === 0) throw new Error('an Actions request carries at least one call');
  const batch = mapping.batchSize !== undefined;
  if (!batch && calls.length > 1) throw new Error(`mapping "${mapping.name}" does not batch: one call per request`);
  // Each call's data as its JSON text, held to MAX_MAPPED_BODY_BYTES (throws MappedDataTooLarge).
  const data = calls.map((c) => mappedDataText(mapping.data, c));
  // An item that resolved to nothing is null in the array, as JSON.stringify writes it in the real body.
  const body = batch ? `[${data.map((d) => d ?? 'null').join(',')}]` : (data[0] ?? '');
  const headers = actionsHeaders(mapping.headers, body !== '');
  return {
    url: mapping.url,
    method: mapping.method,
    headers,
    body,
    signedText: data[0] ?? null,
    callCount: calls.length,
    batch,
  };
}

/** Segment's headers then the mapping's (validation refuses reserved names; skipped here too). */
export function actionsHeaders(own: Record<string, string>, hasBody: boolean): Record<string, string> {
  const out: Record<string, string> = { 'user-agent': ACTIONS_USER_AGENT };
  if (hasBody) out['content-type'] = 'application/json';
  for (const name of Object.keys(own)) {
    const lower = name.toLowerCase();
    if (!(lower in out) && lower !== ACTIONS_SIGNATURE_HEADER) out[lower] = own[name];
  }
  return out;
}

/**
 * Calls go into the same batch only with the same key: Segment batches each mapping on its own and
 * within it by url, method and headers (batch_keys). Ours are fixed per mapping, so the key is the
 * mapping's name with them: editing a mapping starts a new batch instead of mixing old and new.
 */
export function batchKey(mapping: Pick<ActionsMapping, 'name' | 'url' | 'method' | 'headers'>): string {
  const headers = Object.keys(mapping.headers)
    .map((k) => [k.toLowerCase(), mapping.headers[k]] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([mapping.name, mapping.url, mapping.method, headers]);
}
