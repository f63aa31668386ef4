import { userAgentOf } from '../../../shared/webhook-request';
import { signBody } from './sign';

// The header rule itself is shared with the Compose preview (src/shared/webhook-request.ts); this
// is the Node half, signing with node:crypto on the dispatcher's side.

/** The request a body gets from the current settings and secret: a new delivery's, or a replay's. */
export function currentRequest(userAgentProduct: string, secret: string | undefined, body: Buffer): { userAgent: string; signature: string | null } {
  return { userAgent: userAgentOf(userAgentProduct), signature: secret ? signBody(secret, body) : null };
}
