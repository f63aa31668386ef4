import { signAsync, verifyAsync, type HmacSha256Async, type SignInput, type VerifyInput, type VerifyOutcome } from '../standard-webhooks';
import { hmacWeb } from './hmac-web';

// Standard Webhooks (src/shared/standard-webhooks.ts) signed and checked in the browser: the renderer's
// preview and verify box.

export const hmacSha256Web: HmacSha256Async = (key, content) => hmacWeb('SHA-256', key, content);

export function signStandardWebhookWeb(s: SignInput): Promise<string> {
  return signAsync(hmacSha256Web, s);
}

export function verifyStandardWebhookWeb(v: VerifyInput): Promise<VerifyOutcome> {
  return verifyAsync(hmacSha256Web, v);
}
