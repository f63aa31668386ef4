import { createHmac } from 'node:crypto';

/**
 * X-Signature value (SPEC §4, real): lowercase hex HMAC-SHA1 keyed with the shared secret, over
 * the exact bytes sent. A string body is signed as its UTF-8 bytes, which is what goes on the wire.
 */
export function signBody(secret: string, body: Buffer | string): string {
  return createHmac('sha1', secret).update(body).digest('hex');
}
