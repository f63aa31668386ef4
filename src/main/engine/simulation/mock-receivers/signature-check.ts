import { timingSafeEqual, type Hmac } from 'node:crypto';
import type { SignatureCheck } from '../../../../shared/mock-receiver.schema';
// The dispatcher's own HMAC: a receiver that disagrees with the sender is then a real finding.
import { signatureHmac } from '../../dispatcher/sign';

/**
 * Checks X-Signature while the body streams in, so the digest covers every byte even when the
 * stored copy of the body is truncated.
 */
export class SignatureVerifier {
  private readonly hmac: Hmac | null;

  constructor(private readonly secret: string | undefined) {
    this.hmac = secret === undefined ? null : signatureHmac(secret);
  }

  update(chunk: Buffer): void {
    this.hmac?.update(chunk);
  }

  /** Call once, after the last chunk. `header` is the X-Signature value, undefined when absent. */
  result(header: string | undefined): SignatureCheck {
    const received = header ?? null;
    if (!this.hmac) return { state: 'not_checked', received, expected: null, reason: null };
    const expected = this.hmac.digest('hex');
    return judge(expected, received);
  }
}

export function checkSignature(secret: string | undefined, body: Buffer | string, header: string | undefined): SignatureCheck {
  const verifier = new SignatureVerifier(secret);
  verifier.update(Buffer.from(body));
  return verifier.result(header);
}

function judge(expected: string, received: string | null): SignatureCheck {
  if (received === null) return { state: 'missing', received, expected, reason: 'no X-Signature header, but this receiver has a secret' };
  const got = received.trim();
  if (got === '') return { state: 'invalid', received, expected, reason: 'X-Signature is empty' };
  if (equal(got, expected)) return { state: 'valid', received, expected, reason: null };
  // Receivers compare hex strings byte for byte, so an uppercase digest fails them too.
  if (got.toLowerCase() === expected) {
    return { state: 'invalid', received, expected, reason: 'digest matches but is not lowercase hex' };
  }
  return { state: 'invalid', received, expected, reason: `expected HMAC-SHA1 ${expected}, got ${got}` };
}

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
