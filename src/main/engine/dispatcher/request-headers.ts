import { RESERVED_HEADERS } from '../../../shared/source.schema';
import { signBody } from './sign';

export const DEFAULT_USER_AGENT_PRODUCT = 'Segment.io';

const RESERVED = new Set(RESERVED_HEADERS);

export interface RequestHeadersInput {
  /** Product part of User-Agent, e.g. `Segment.io` → `Segment.io/1.0`. */
  userAgentProduct: string;
  /** Shared secret; absent or empty means the request is not signed. */
  secret?: string;
  /** The URL's static headers (SPEC §2). */
  urlHeaders: Record<string, string>;
  /** The exact bytes that will be sent (and signed). */
  body: Buffer;
}

/**
 * Headers for one outbound POST (SPEC §4). Settings validation already refuses static headers that
 * would replace a reserved one; they are skipped here as well so a bad row in the store can never
 * change what is signed, framed or identified.
 */
export function buildRequestHeaders(o: RequestHeadersInput): { headers: Record<string, string>; signature: string | null } {
  const headers: Record<string, string> = {
    'User-Agent': userAgent(o.userAgentProduct),
    'Content-Type': 'application/json',
    'Content-Length': String(o.body.length),
  };
  let signature: string | null = null;
  if (o.secret) {
    signature = signBody(o.secret, o.body);
    headers['X-Signature'] = signature;
  }
  for (const name in o.urlHeaders) {
    if (!RESERVED.has(name.toLowerCase())) headers[name] = o.urlHeaders[name];
  }
  return { headers, signature };
}

function userAgent(product: string): string {
  const p = product.trim();
  if (p === '') return `${DEFAULT_USER_AGENT_PRODUCT}/1.0`;
  // A full product token ("Acme/2.3") is used as given rather than becoming "Acme/2.3/1.0".
  return p.includes('/') ? p : `${p}/1.0`;
}
