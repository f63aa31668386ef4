import { RESERVED_HEADERS } from '../../../shared/source.schema';
import { signBody } from './sign';

export const DEFAULT_USER_AGENT_PRODUCT = 'Segment.io';

const RESERVED = new Set(RESERVED_HEADERS);

export interface RequestHeadersInput {
  /** The whole User-Agent value (userAgentOf). */
  userAgent: string;
  /** X-Signature of `body`; null sends none. */
  signature: string | null;
  /** The URL's static headers (SPEC §2). */
  urlHeaders: Record<string, string>;
  /** The exact bytes that will be sent (and were signed). */
  body: Buffer;
}

/**
 * Headers for one outbound POST (SPEC §4). Settings validation already refuses static headers that
 * would replace a reserved one; they are skipped here as well so a bad row in the store can never
 * change what is signed, framed or identified.
 */
export function buildRequestHeaders(o: RequestHeadersInput): Record<string, string> {
  const headers: Record<string, string> = {
    'User-Agent': o.userAgent,
    'Content-Type': 'application/json',
    'Content-Length': String(o.body.length),
  };
  if (o.signature) headers['X-Signature'] = o.signature;
  for (const name in o.urlHeaders) {
    if (!RESERVED.has(name.toLowerCase())) headers[name] = o.urlHeaders[name];
  }
  return headers;
}

/** The request a body gets from the current settings and secret: a new delivery's, or a replay's. */
export function currentRequest(userAgentProduct: string, secret: string | undefined, body: Buffer): { userAgent: string; signature: string | null } {
  return { userAgent: userAgentOf(userAgentProduct), signature: secret ? signBody(secret, body) : null };
}

/** `User-Agent` for a product setting: `Segment.io` → `Segment.io/1.0`. */
export function userAgentOf(product: string): string {
  const p = product.trim();
  if (p === '') return `${DEFAULT_USER_AGENT_PRODUCT}/1.0`;
  // A full product token ("Acme/2.3") is used as given rather than becoming "Acme/2.3/1.0".
  return p.includes('/') ? p : `${p}/1.0`;
}
