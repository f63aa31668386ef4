import type { ActionsMapping, ActionsMethod } from '../types';

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
//   Headers (node-fetch 2: names lowercased, iterated sorted), then node-fetch adds accept,
//   content-length and accept-encoding; a `json` of undefined sends no body and no content-type.
//   The order on the wire: shared/webhook-request.ts buildActionsRequestHeaders.

export const ACTIONS_USER_AGENT = 'Segment (Actions)';
/** Header name of the Actions signature, lowercased as it goes out. */
export const ACTIONS_SIGNATURE_HEADER = 'x-signature';
/** Segment's batch size default when batching is turned on, and its maximum. */
export const ACTIONS_DEFAULT_BATCH_SIZE = 1000;
export const ACTIONS_MAX_BATCH_SIZE = 4000;

export interface ActionsRequest {
  url: string;
  method: ActionsMethod;
  /** The mapping's own headers, as written; Segment's are added per attempt (buildActionsRequestHeaders). */
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
 * Segment's own headers a mapping may replace (its request client merges the mapping's headers over
 * them): allowed, with a warning on the Destinations screen. Content-Type counts only for a request
 * without a body (with one, the client sets application/json).
 */
export const ACTIONS_REPLACEABLE_HEADERS: Record<string, string> = {
  'user-agent': 'replaces Segment\'s "Segment (Actions)"',
  'x-signature': "replaces the HMAC Segment computes with the shared secret: receivers that verify it will refuse the request",
  accept: 'replaces the "*/*" Segment\'s client sends',
  'accept-encoding': 'replaces the "gzip,deflate" Segment\'s client sends',
  'content-type': 'sent only when the data resolves to nothing: with a body, Segment\'s client sends application/json',
};

/** The warning for a mapping header that replaces one of Segment's, or null. */
export function actionsHeaderWarning(name: string): string | null {
  const w = ACTIONS_REPLACEABLE_HEADERS[name.toLowerCase()];
  return w === undefined ? null : `${name}: ${w}`;
}

/** Warnings for header names that differ only in case: Segment sends them as one header with both values. */
export function actionsHeaderTwins(headers: Record<string, string | object>): string[] {
  const seen = new Map<string, string>();
  const warnings: string[] = [];
  for (const name of Object.keys(headers)) {
    const first = seen.get(name.toLowerCase());
    if (first === undefined) seen.set(name.toLowerCase(), name);
    else warnings.push(`${name}: also given as "${first}" (header names are case-insensitive): Segment sends one header with both values, "${name.toLowerCase()}: ${shown(headers[first])}, ${shown(headers[name])}"`);
  }
  return warnings;
}

const shown = (v: string | object) => (typeof v === 'string' ? v : JSON.stringify(v));

/**
 * The headers an Actions delivery stores: the mapping's, as written. Segment's own (user-agent,
 * x-signature, content-type, accept, content-length, accept-encoding) are added per attempt, in the
 * order its client sends them (shared/webhook-request.ts buildActionsRequestHeaders).
 */
export function actionsHeaders(own: Record<string, string>): Record<string, string> {
  return { ...own };
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
