import { sign, verify, type HmacSha256, type SignInput, type VerifyInput, type VerifyOutcome } from '../../../shared/standard-webhooks';
import { hmacOf } from './sign';

// Node's HMAC for Standard Webhooks (src/shared/standard-webhooks.ts): synchronous, so the
// dispatcher signs on its send path and mock receivers verify without awaiting.

export const hmacSha256Node: HmacSha256 = (key, content) => hmacOf('sha256', key).update(content).digest();

/** webhook-signature's value (`v1,<base64>`) for one request. */
export function signStandardWebhook(s: SignInput): string {
  return sign(hmacSha256Node, s);
}

export function verifyStandardWebhook(v: VerifyInput): VerifyOutcome {
  return verify(hmacSha256Node, v);
}
