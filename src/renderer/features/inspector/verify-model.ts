import { verifyStandardWebhookWeb } from '../../../shared/preview/standard-webhooks-web';
import { STANDARD_WEBHOOKS_HEADERS, TOLERANCE_SECONDS } from '../../../shared/standard-webhooks';
import type { Delivery, SecretVersion } from '../../../shared/types';
import { headerValue as header } from '../../../shared/header-value';

// What the inspector's verify box checks an attempt against. X-Signature covers the body for Classic
// and for a single Actions request (there JSON.stringify(data) is the body), but for an Actions batch
// only the first event's data, as Segment signs it; the Standard Webhooks signature covers
// id.timestamp.body. React-free so the rules are unit-tested.

export interface SignatureTarget {
  /** The exact text X-Signature is the HMAC-SHA1 of. */
  text: string;
  /** Set when that is not the body: what it is, in words. */
  note: string | null;
}

/** Is this delivery an Actions batch (its body a JSON array of the carried calls' data)? */
export function isActionsBatch(d: Pick<Delivery, 'kind' | 'callIds'>): boolean {
  return d.kind === 'actions' && d.callIds !== undefined;
}

/** What an attempt's X-Signature covers, given its delivery and the exact body it sent. */
export function signatureTarget(d: Pick<Delivery, 'kind' | 'callIds'>, body: string): SignatureTarget {
  if (!isActionsBatch(d)) return { text: body, note: null };
  let first: unknown;
  try {
    const items = JSON.parse(body) as unknown;
    if (!Array.isArray(items) || items.length === 0) throw new Error('not an array');
    first = items[0];
  } catch {
    // An edited replay body that is no longer an array: the dispatcher signed what it sent.
    return { text: body, note: 'This batch body is not a JSON array (edited), so X-Signature was made over the body as sent.' };
  }
  return {
    text: JSON.stringify(first),
    note:
      "An Actions batch: X-Signature covers only the FIRST event's data, JSON.stringify(body[0]), not the array body (Segment signs a batch that way; a receiver verifying the raw body fails). Checked that way.",
  };
}

export type SwStatus = 'match' | 'mismatch' | 'unsigned' | 'no-secret';

export interface SwResult {
  status: SwStatus;
  explanation: string;
}


/** Whether the attempt carried a Standard Webhooks signature. */
export function hasStandardWebhooks(headers: Record<string, string>): boolean {
  return header(headers, STANDARD_WEBHOOKS_HEADERS.signature) !== undefined;
}

/**
 * Check an attempt's webhook-signature with a pasted whsec_ secret. The timestamp tolerance is not
 * applied (the attempt is stored, so it is old by now); how old it is, is said. Several space-separated
 * `v1,…` signatures (a rotation window's: the new secret's first, then the old one's) pass when any
 * one matches, and the explanation says which.
 */
export async function verifyStandardWebhooksAttempt(args: { headers: Record<string, string>; body: string; secret: string; nowMs: number }): Promise<SwResult> {
  const { headers, body, secret } = args;
  if (!hasStandardWebhooks(headers)) {
    return { status: 'unsigned', explanation: 'No webhook-signature was sent: the source had no Standard Webhooks secret when this attempt was made.' };
  }
  if (secret.trim() === '') return { status: 'no-secret', explanation: 'Paste the whsec_ secret to check webhook-signature.' };
  const ts = Number(header(headers, STANDARD_WEBHOOKS_HEADERS.timestamp) ?? NaN);
  // As of the attempt's own timestamp: the tolerance check passes, everything else is checked.
  const now = Number.isFinite(ts) ? ts : Math.floor(args.nowMs / 1000);
  const r = await verifyStandardWebhookWeb({ secret: secret.trim(), headers, body, now });
  const age = Number.isFinite(ts) ? Math.floor(args.nowMs / 1000) - ts : null;
  const ageNote =
    age !== null && age > TOLERANCE_SECONDS
      ? ` Its webhook-timestamp is ${age} s old: a receiver checking it now would refuse it (more than ${TOLERANCE_SECONDS} s); the timestamp check is skipped here because the attempt is stored.`
      : ' The timestamp tolerance (5 min) is not checked for a stored attempt.';
  const sigs = header(headers, STANDARD_WEBHOOKS_HEADERS.signature)!.split(' ').filter((s) => s.startsWith('v1,'));
  if (sigs.length > 1) {
    const rotation = ` (during a rotation window the lab sends the new secret's signature first, then the old one's; a receiver accepts any one)`;
    if (!r.ok) return { status: 'mismatch', explanation: `Mismatch: none of the ${sigs.length} v1 signatures${rotation} matches with this secret: ${r.reason}.${ageNote}` };
    let which = 0;
    for (let i = 0; i < sigs.length && which === 0; i++) {
      const others = Object.entries(headers).filter(([k]) => k.toLowerCase() !== STANDARD_WEBHOOKS_HEADERS.signature);
      const one = await verifyStandardWebhookWeb({ secret: secret.trim(), headers: { ...Object.fromEntries(others), [STANDARD_WEBHOOKS_HEADERS.signature]: sigs[i] }, body, now });
      if (one.ok) which = i + 1;
    }
    return { status: 'match', explanation: `Match: signature ${which} of the ${sigs.length} in webhook-signature${rotation} is the v1 HMAC-SHA256 of webhook-id.webhook-timestamp.body with this secret.${ageNote}` };
  }
  if (r.ok) return { status: 'match', explanation: `Match: v1 HMAC-SHA256 of webhook-id.webhook-timestamp.body with this secret equals webhook-signature.${ageNote}` };
  return { status: 'mismatch', explanation: `Mismatch: ${r.reason}.${ageNote}` };
}

/**
 * "Use the source's" did not match, and the lab knows why: the attempt was signed with an earlier
 * version of that secret than the source's current one (a rotation or an edit since). Standard
 * Webhooks: the delivery names its version. Classic: X-Signature is signed when its delivery is made,
 * so a current version made after `signedBy` is later. Names versions only, never an old secret.
 * null when the lab cannot tell (then the generic mismatch stands).
 */
export function laterSecretNote(args: {
  which: 'shared' | 'standard';
  current: SecretVersion | null | undefined;
  /** Standard Webhooks: the version the delivery signs with. */
  signedWith?: number | null;
  /** Classic: when the delivery was made (its first attempt), ISO. */
  signedBy?: string | null;
}): string | null {
  const { current } = args;
  if (!current) return null;
  if (args.which === 'standard') {
    if (args.signedWith === null || args.signedWith === undefined || current.version <= args.signedWith) return null;
    return (
      `This attempt was signed with version ${args.signedWith} of the source's Standard Webhooks secret; ` +
      `the source's secret is now version ${current.version}, a later one, so it does not match here. Paste version ${args.signedWith} to check the signature.`
    );
  }
  if (!args.signedBy || Date.parse(current.createdAt) <= Date.parse(args.signedBy)) return null;
  return (
    `This attempt's X-Signature was signed with an earlier version of the source's shared secret; ` +
    `the source's secret is now version ${current.version}, made after this delivery, so it does not match here. Paste the earlier version to check the signature.`
  );
}

/** What the lab's own check of an attempt (verifySignature with its ids) found for one signature, in the verify box's words. */
export interface LabVerdict {
  status: 'match' | 'mismatch' | 'no-secret';
  explanation: string;
}

/**
 * The engine tried every version of the source's secret it keeps (never showing one): the version
 * that matched, or, when the one that signed is erased, that it is "since retired". `matchedVersion`:
 * the version whose HMAC equals a signature received; `madeWith`: the version that signed it as the
 * lab knows it; `current`: the source's version now.
 */
export function labVerdict(args: {
  which: 'shared' | 'standard';
  matchedVersion: number | null;
  madeWith: { version: number; kept: boolean } | null;
  current: number | null;
  tried: number[];
}): LabVerdict {
  const secret = args.which === 'shared' ? 'shared secret' : 'Standard Webhooks secret';
  const now = args.current === null ? '' : ` (the source's is now version ${args.current})`;
  if (args.matchedVersion !== null) {
    return {
      status: 'match',
      explanation: `Signed with version ${args.matchedVersion} of the source's ${secret}: ✓ match${now}. The lab keeps that version until nothing needs it; it was checked without being shown.`,
    };
  }
  if (args.madeWith && !args.madeWith.kept) {
    return {
      status: 'no-secret',
      explanation: `Signed with version ${args.madeWith.version} of the source's ${secret}, since retired${now}: the lab no longer keeps it, so it cannot be checked here. Paste it if you still have it.`,
    };
  }
  const tried = args.tried.length === 0 ? 'none kept' : args.tried.map((v) => `version ${v}`).join(', ');
  return {
    status: 'mismatch',
    explanation: args.madeWith
      ? `Mismatch: no version of the source's ${secret} the lab keeps (${tried}) made this signature: the bytes or the signature differ from what was signed.`
      : `Mismatch: no version of the source's ${secret} the lab keeps (${tried}) made this signature, and the lab cannot tell which version signed it.`,
  };
}
