import { hmacWeb } from './hmac-web';

// X-Signature (SPEC §4, real): lowercase hex HMAC-SHA1 of the exact body bytes, keyed with the
// shared secret, in the browser (the Compose preview, the inspector's verify box).

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

export async function hmacSha1Hex(secret: string, body: string | Uint8Array): Promise<string> {
  const enc = new TextEncoder();
  return hex(await hmacWeb('SHA-1', enc.encode(secret), typeof body === 'string' ? enc.encode(body) : body));
}

export type VerifyStatus = 'match' | 'mismatch' | 'unsigned' | 'no-secret';

export interface VerifyResult {
  status: VerifyStatus;
  computed: string | null;
  /** One or more sentences saying why, for people debugging their receiver. */
  explanation: string;
}

/**
 * Check a pasted secret against what was sent, and when it does not match, find the likely cause
 * among the mistakes receivers make most: whitespace in the secret, signing re-serialized JSON,
 * comparing in another case.
 */
export async function verifySignature(args: { body: string; signature: string | null; secret: string }): Promise<VerifyResult> {
  const { body, signature, secret } = args;
  if (!signature) {
    return {
      status: 'unsigned',
      computed: secret ? await hmacSha1Hex(secret, body) : null,
      explanation: 'No X-Signature was sent: the source had no shared secret when this attempt was made.',
    };
  }
  if (!secret) return { status: 'no-secret', computed: null, explanation: 'Paste the shared secret to check the signature.' };
  const computed = await hmacSha1Hex(secret, body);
  if (computed === signature) {
    return { status: 'match', computed, explanation: 'Match: HMAC-SHA1 of the exact body bytes with this secret equals X-Signature.' };
  }
  const reasons: string[] = [];
  if (computed === signature.toLowerCase()) reasons.push('The header differs only in letter case; compare lowercase hex.');
  const trimmed = secret.trim();
  if (trimmed !== secret && (await hmacSha1Hex(trimmed, body)) === signature) {
    reasons.push('The secret you pasted has leading or trailing whitespace; without it, it matches.');
  }
  if (reasons.length === 0) {
    reasons.push(
      'This is not the secret the attempt was signed with (it may have been changed since), ' +
        'or the receiver is signing different bytes. Sign the raw body exactly as received: ' +
        'parsing and re-serializing the JSON changes whitespace and key order, and so the signature.',
    );
  }
  return { status: 'mismatch', computed, explanation: `Mismatch. ${reasons.join(' ')}` };
}
