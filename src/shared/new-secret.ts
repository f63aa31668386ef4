import { SECRET_PREFIX } from './standard-webhooks';

/**
 * A random secret of 32 bytes from the platform's CSPRNG (Web Crypto: the renderer and Node alike):
 * hex for X-Signature's shared secret, `whsec_` and base64 for Standard Webhooks. The engine makes
 * one when asked to rotate without a value; the Destinations screen proposes one before a rotation,
 * so it can be copied to a receiver first.
 */
export function newSecret(which: 'sharedSecret' | 'standardWebhooksSecret'): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(32));
  if (which === 'sharedSecret') return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return SECRET_PREFIX + btoa(String.fromCharCode(...bytes));
}
