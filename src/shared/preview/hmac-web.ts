// The browser's one HMAC helper (WebCrypto): X-Signature's SHA-1 and Standard Webhooks' SHA-256 both
// go through it. globalThis.crypto.subtle exists in browsers and in Node 20, so tests run it too.

export type HmacHash = 'SHA-1' | 'SHA-256';

export async function hmacWeb(hash: HmacHash, key: Uint8Array, data: Uint8Array): Promise<Uint8Array> {
  const k = await crypto.subtle.importKey('raw', key as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash }, false, ['sign']);
  return new Uint8Array(await crypto.subtle.sign('HMAC', k, data as Uint8Array<ArrayBuffer>));
}
