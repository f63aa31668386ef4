import { HOP_BY_HOP_HEADERS, RESERVED_HEADERS } from './source.schema';
import { STANDARD_WEBHOOKS_HEADERS } from './standard-webhooks';

// The outbound webhook request's headers and User-Agent (SPEC §4), written once for the dispatcher,
// which sends them, and the Compose preview and Settings, which show them. Browser-safe: the body
// arrives as bytes (a Node Buffer is a Uint8Array), so no Buffer and no string measuring here.

export const DEFAULT_USER_AGENT_PRODUCT = 'Segment.io';

const RESERVED = new Set(RESERVED_HEADERS);
// Refused in settings since issue 22; a row stored before that must not fail every delivery.
const HOP_BY_HOP = new Set(HOP_BY_HOP_HEADERS);
const STANDARD_WEBHOOKS = new Set<string>(Object.values(STANDARD_WEBHOOKS_HEADERS));

/** `User-Agent` for a product setting: `Segment.io` → `Segment.io/1.0`. */
export function userAgentOf(product: string): string {
  const p = product.trim();
  if (p === '') return `${DEFAULT_USER_AGENT_PRODUCT}/1.0`;
  // A full product token ("Acme/2.3") is used as given rather than becoming "Acme/2.3/1.0".
  return p.includes('/') ? p : `${p}/1.0`;
}

export interface RequestHeadersInput {
  /** The whole User-Agent value (userAgentOf). */
  userAgent: string;
  /** X-Signature of `body`; null sends none. */
  signature: string | null;
  /** The URL's static headers (SPEC §2). */
  urlHeaders: Record<string, string>;
  /** The exact bytes that will be sent (and were signed); only its byte length is read. */
  body: Uint8Array;
  /**
   * webhook-id, webhook-timestamp and webhook-signature for this attempt (shared/standard-webhooks.ts
   * standardWebhooksHeaders); when given, static headers of those names are skipped so they cannot
   * replace the signed ones.
   */
  standardWebhooks?: Record<string, string> | null;
}

/**
 * Headers for one outbound POST (SPEC §4). Settings validation already refuses static headers that
 * would replace a reserved one; they are skipped here as well so a bad row in the store can never
 * change what is signed, framed or identified. Called once per attempt on the dispatcher's hot
 * path: one object, no intermediate arrays.
 */
export function buildRequestHeaders(o: RequestHeadersInput): Record<string, string> {
  const headers: Record<string, string> = {
    'User-Agent': o.userAgent,
    'Content-Type': 'application/json',
    'Content-Length': String(o.body.byteLength),
  };
  if (o.signature) headers['X-Signature'] = o.signature;
  const sw = o.standardWebhooks;
  for (const name in o.urlHeaders) {
    const lower = name.toLowerCase();
    if (!RESERVED.has(lower) && !HOP_BY_HOP.has(lower) && !(sw && STANDARD_WEBHOOKS.has(lower))) headers[name] = o.urlHeaders[name];
  }
  if (sw) Object.assign(headers, sw);
  return headers;
}

/** What node-fetch 2 (Segment's Actions request client) sends when a request has no User-Agent. */
const NODE_FETCH_USER_AGENT = 'node-fetch/1.0 (+https://github.com/bitinn/node-fetch)';

/** Names a Webhooks (Actions) request never takes from a mapping: the framing and the connection's own. */
const ACTIONS_NEVER = new Set(['content-length', 'host', 'connection', 'transfer-encoding']);

/**
 * Headers for one Webhooks (Actions) attempt, as Segment's request client sends them (captured from
 * @segment/actions-core's createRequestClient, cross-fetch -> node-fetch 2, with the webhook
 * destination's extendRequest): `user-agent: Segment (Actions)`, `x-signature`, then the mapping's
 * headers, sorted by name (node-fetch's Headers iterate sorted) and lowercased, `content-type:
 * application/json` with a body, then what node-fetch adds when they are missing: `accept: *\/*`,
 * `content-length` (0 without a body) and `accept-encoding: gzip,deflate`; host and connection come
 * from the HTTP client. A mapping's own User-Agent, X-Signature, Accept or Accept-Encoding replaces
 * Segment's in place, as there (the Destinations screen warns); its Content-Type counts only without
 * a body; Content-Length, Host and hop-by-hop names never. `urlHeaders` are the delivery's: the
 * mapping's headers (deliveries stored before held user-agent and content-type among them too, which
 * come out the same).
 */
export function buildActionsRequestHeaders(o: RequestHeadersInput): Record<string, string> {
  const headers: Record<string, string> = { 'user-agent': o.userAgent };
  if (o.signature) headers['x-signature'] = o.signature;
  const sw = o.standardWebhooks;
  const hasBody = o.body.byteLength > 0;
  // Names that differ only in case become one header with the values joined in the order written,
  // as fetch's Headers appends them (`x-dup: one, two`), kept under the first spelling: node-fetch
  // iterates its names sorted as first given (uppercase before lowercase), lowercased on the way out.
  const own = new Map<string, { first: string; value: string }>();
  for (const name of Object.keys(o.urlHeaders)) {
    const lower = name.toLowerCase();
    const before = own.get(lower);
    own.set(lower, before === undefined ? { first: name, value: o.urlHeaders[name] } : { first: before.first, value: `${before.value}, ${o.urlHeaders[name]}` });
  }
  const order = [...own.entries()].sort(([, a], [, b]) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
  for (const [lower, { value }] of order) {
    if (ACTIONS_NEVER.has(lower) || HOP_BY_HOP.has(lower)) continue;
    if (sw && STANDARD_WEBHOOKS.has(lower)) continue;
    if (lower === 'content-type' && hasBody) continue;
    // The text `undefined` (what a mapping's value resolving to nothing reads as): Segment's client
    // removes the header, its own of that name too (actions-core request-client mergeHeaders).
    if (value === 'undefined') delete headers[lower];
    else headers[lower] = value;
  }
  if (hasBody) headers['content-type'] = 'application/json';
  if (headers.accept === undefined) headers.accept = '*/*';
  headers['content-length'] = String(o.body.byteLength);
  // node-fetch's own, where the merge left none.
  if (headers['user-agent'] === undefined) headers['user-agent'] = NODE_FETCH_USER_AGENT;
  if (headers['accept-encoding'] === undefined) headers['accept-encoding'] = 'gzip,deflate';
  if (sw) Object.assign(headers, sw);
  return headers;
}
