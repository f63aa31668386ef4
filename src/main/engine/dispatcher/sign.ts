import { createHmac, type Hmac } from 'node:crypto';

// The one HMAC of the Node side (SPEC §4, real): lowercase hex HMAC-SHA1 keyed with the shared
// secret, over the exact bytes sent. The dispatcher signs with it and the mock receivers verify with
// it; the browser's twin, over WebCrypto, is src/shared/preview/signature.ts.

/** A running X-Signature HMAC, for bodies that arrive in chunks; digest('hex') gives the header value. */
export function signatureHmac(secret: string): Hmac {
  return createHmac('sha1', secret);
}

/** X-Signature value of a whole body. A string body is signed as its UTF-8 bytes, which is what goes on the wire. */
export function signBody(secret: string, body: Buffer | string): string {
  return signatureHmac(secret).update(body).digest('hex');
}
