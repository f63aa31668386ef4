import { signAsync, verifyAsync, type HmacSha256Async, type SignInput, type VerifyInput, type VerifyOutcome } from '../standard-webhooks';

// WebCrypto's HMAC for Standard Webhooks (src/shared/standard-webhooks.ts), for the renderer's
// preview and verify box; globalThis.crypto.subtle exists in browsers and in Node 20, so tests run it too.

export const hmacSha256Web: HmacSha256Async = async (key, content) => {
  const k = await crypto.subtle.importKey('raw', key as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await crypto.subtle.sign('HMAC', k, content as Uint8Array<ArrayBuffer>));
};

export function signStandardWebhookWeb(s: SignInput): Promise<string> {
  return signAsync(hmacSha256Web, s);
}

export function verifyStandardWebhookWeb(v: VerifyInput): Promise<VerifyOutcome> {
  return verifyAsync(hmacSha256Web, v);
}
