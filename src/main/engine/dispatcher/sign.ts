import { createHmac, type Hmac } from 'node:crypto';

// The HMACs of the Node side, in one place: X-Signature (SPEC §4, real) is lowercase hex HMAC-SHA1
// keyed with the shared secret over the exact bytes sent; Standard Webhooks is HMAC-SHA256 keyed
// with a whsec_ secret's bytes (standard-webhooks-sign.ts). The dispatcher signs with them and the
// mock receivers verify with them; the browser's twins, over WebCrypto, are
// src/shared/preview/signature.ts and src/shared/preview/standard-webhooks-web.ts.

export type HmacAlgorithm = 'sha1' | 'sha256';

/** A running HMAC, for content that arrives in chunks. */
export function hmacOf(algorithm: HmacAlgorithm, key: string | Uint8Array): Hmac {
  return createHmac(algorithm, key);
}

/** A running X-Signature HMAC, for bodies that arrive in chunks; digest('hex') gives the header value. */
export function signatureHmac(secret: string): Hmac {
  return hmacOf('sha1', secret);
}

/** X-Signature value of a whole body. A string body is signed as its UTF-8 bytes, which is what goes on the wire. */
export function signBody(secret: string, body: Buffer | string): string {
  return signatureHmac(secret).update(body).digest('hex');
}
