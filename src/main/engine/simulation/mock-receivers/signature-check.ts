import { timingSafeEqual, type Hmac } from 'node:crypto';
import type { SignatureCheck, StandardWebhooksCheck } from '../../../../shared/mock-receiver.schema';
import {
  checkHeaders, matchSignatures, secretKey, secretProblem, signatureValue, signedContent, STANDARD_WEBHOOKS_HEADERS, type CheckedHeaders,
} from '../../../../shared/standard-webhooks';
// The dispatcher's own HMACs: a receiver that disagrees with the sender is then a real finding.
import { hmacOf, signatureHmac } from '../../dispatcher/sign';
import { headerValue } from '../../../../shared/header-value';

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

/**
 * Checks the Standard Webhooks signature while the body streams in: HMAC-SHA256 over
 * `id.timestamp.` and then every body byte, with the receiver's whsec_ secret, compared with each
 * `v1,` signature of webhook-signature (shared/standard-webhooks.ts has the rules and the reasons).
 * Headers and the time are read when the request arrives.
 */
export class StandardWebhooksVerifier {
  private readonly hmac: Hmac | null = null;
  private readonly headerCheck: CheckedHeaders | null = null;
  private readonly received: { id: string | null; timestamp: string | null; signature: string | null };

  /** `nowSeconds`: Unix seconds when the request arrived (the timestamp's tolerance is from then). */
  constructor(private readonly secret: string | undefined, headers: Record<string, string | undefined>, nowSeconds: number) {
    const { id: ID, timestamp: TS, signature: SIG } = STANDARD_WEBHOOKS_HEADERS;
    const get = (name: string): string | null => headerValue(headers, name) ?? null;
    this.received = { id: get(ID), timestamp: get(TS), signature: get(SIG) };
    if (secret === undefined || secretProblem(secret) !== null) return;
    this.headerCheck = checkHeaders({ secret, headers, now: nowSeconds });
    // The expected signature is worth showing whenever id and timestamp are usable, even when the
    // timestamp is out of tolerance or the signature header is missing.
    const { id, timestamp } = this.received;
    if (id && timestamp && /^\d+$/.test(timestamp.trim())) {
      this.hmac = hmacOf('sha256', secretKey(secret)).update(signedContent(id, Number(timestamp.trim()), ''));
    }
  }

  update(chunk: Buffer): void {
    this.hmac?.update(chunk);
  }

  /** Call once, after the last chunk. */
  result(): StandardWebhooksCheck {
    const { id, timestamp, signature: received } = this.received;
    const base = { id, timestamp, received };
    if (this.secret === undefined) return { ...base, state: 'not_checked', expected: null, reason: null };
    const problem = secretProblem(this.secret);
    if (problem !== null) return { ...base, state: 'invalid', expected: null, reason: `this receiver's secret ${problem}` };
    const mac = this.hmac?.digest() ?? null;
    const expected = mac === null ? null : signatureValue(mac);
    if (!id && !timestamp && !received) {
      return { ...base, state: 'missing', expected, reason: 'no webhook-id, webhook-timestamp or webhook-signature header, but this receiver has a Standard Webhooks secret' };
    }
    const h = this.headerCheck!;
    if ('reason' in h) return { ...base, state: 'invalid', expected, reason: h.reason };
    const outcome = matchSignatures(h.signatures, mac!);
    return outcome.ok ? { ...base, state: 'valid', expected, reason: null } : { ...base, state: 'invalid', expected, reason: outcome.reason };
  }
}

export function checkStandardWebhooks(secret: string | undefined, headers: Record<string, string | undefined>, body: Buffer | string, nowSeconds: number): StandardWebhooksCheck {
  const verifier = new StandardWebhooksVerifier(secret, headers, nowSeconds);
  verifier.update(Buffer.from(body));
  return verifier.result();
}
