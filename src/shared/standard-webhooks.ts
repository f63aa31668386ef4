// Standard Webhooks signatures (standardwebhooks.com; the `standardwebhooks` npm package is the
// reference our tests check against). Three headers: webhook-id, webhook-timestamp (Unix seconds)
// and webhook-signature = `v1,` + base64 HMAC-SHA256 of `${id}.${timestamp}.${body}`, keyed with the
// bytes of a `whsec_` + base64 secret. Browser-safe: the HMAC is passed in (Node crypto in the
// engine: dispatcher/standard-webhooks-sign.ts; WebCrypto in the renderer: preview/standard-webhooks-web.ts).
//
// For whoever sends: the id names the message, so it stays the same across retries (receivers
// deduplicate on it); the timestamp is when the attempt is sent, and receivers refuse one more than
// 5 minutes off, so an attempt retried later must be signed again with its own timestamp.

import { headerValue } from './header-value';

export const SECRET_PREFIX = 'whsec_';
export const STANDARD_WEBHOOKS_HEADERS = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;
/** How far webhook-timestamp may be from now, either way, as the reference library allows. */
export const TOLERANCE_SECONDS = 5 * 60;
const MAX_KEY_BYTES = 64;
/** The spec asks for 24 to 64 random bytes: new keys shorter than this are refused (older ones still sign). */
export const MIN_NEW_KEY_BYTES = 24;

export type HmacSha256 = (key: Uint8Array, content: Uint8Array) => Uint8Array;
export type HmacSha256Async = (key: Uint8Array, content: Uint8Array) => Promise<Uint8Array>;

export function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
  return btoa(s);
}

/** Standard, padded base64 only; null otherwise. */
export function fromBase64(text: string): Uint8Array | null {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return null;
  const bin = atob(text);
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

export const SECRET_SHAPE = `"${SECRET_PREFIX}" followed by standard base64 of a 1 to ${MAX_KEY_BYTES} byte key (usually 24 or 32 random bytes), e.g. whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw`;

/** Why `secret` is not a usable `whsec_` secret, or null. */
export function secretProblem(secret: string): string | null {
  if (!secret.startsWith(SECRET_PREFIX)) return `must start with "${SECRET_PREFIX}": expected ${SECRET_SHAPE}`;
  const key = fromBase64(secret.slice(SECRET_PREFIX.length));
  if (key === null) return `the part after "${SECRET_PREFIX}" is not base64: expected ${SECRET_SHAPE}`;
  if (key.length === 0 || key.length > MAX_KEY_BYTES) return `the key is ${key.length} bytes: expected ${SECRET_SHAPE}`;
  return null;
}

/**
 * A usable secret whose key is shorter than the spec's 24 bytes: kept working when it was stored or
 * written in a config file before the rule (with this warning), refused as new input. null otherwise.
 */
export function shortKeyWarning(secret: string): string | null {
  if (secret === '' || secretProblem(secret) !== null) return null;
  const n = fromBase64(secret.slice(SECRET_PREFIX.length))!.length;
  return n >= MIN_NEW_KEY_BYTES
    ? null
    : `the key is ${n} bytes; the Standard Webhooks spec asks for ${MIN_NEW_KEY_BYTES} to ${MAX_KEY_BYTES} random bytes: generate a new secret (a new one this short is refused)`;
}

/** The HMAC key of a `whsec_` secret; throws when secretProblem() would name one. */
export function secretKey(secret: string): Uint8Array {
  const problem = secretProblem(secret);
  if (problem !== null) throw new Error(`Standard Webhooks secret ${problem}`);
  return fromBase64(secret.slice(SECRET_PREFIX.length))!;
}

/** The text the signature covers. */
export function signedContent(id: string, timestamp: number, body: string): string {
  return `${id}.${timestamp}.${body}`;
}

/** webhook-signature's value for a computed HMAC. */
export function signatureValue(mac: Uint8Array): string {
  return `v1,${toBase64(mac)}`;
}

export interface SignInput {
  secret: string;
  id: string;
  /** Unix seconds. */
  timestamp: number;
  /** The exact body text sent. */
  body: string;
}

/** The three headers for one request. */
export function standardWebhooksHeaders(id: string, timestamp: number, signature: string): Record<string, string> {
  return {
    [STANDARD_WEBHOOKS_HEADERS.id]: id,
    [STANDARD_WEBHOOKS_HEADERS.timestamp]: String(timestamp),
    [STANDARD_WEBHOOKS_HEADERS.signature]: signature,
  };
}

export function sign(hmac: HmacSha256, s: SignInput): string {
  return signatureValue(hmac(secretKey(s.secret), new TextEncoder().encode(signedContent(s.id, s.timestamp, s.body))));
}

export async function signAsync(hmac: HmacSha256Async, s: SignInput): Promise<string> {
  return signatureValue(await hmac(secretKey(s.secret), new TextEncoder().encode(signedContent(s.id, s.timestamp, s.body))));
}

export interface VerifyInput {
  secret: string;
  /** The received headers; names in any case. */
  headers: Record<string, string | undefined>;
  body: string;
  /** Unix seconds now. */
  now: number;
}

export type VerifyOutcome = { ok: true } | { ok: false; reason: string };

/** What verification needs from the headers and secret, before the body: or why it cannot pass. */
export type CheckedHeaders = { reason: string } | { key: Uint8Array; id: string; timestamp: number; signatures: string[] };

/**
 * Everything verification checks before the HMAC: headers present, timestamp in tolerance, secret,
 * a v1 signature. Separate from the body so a receiver can hash a body as it streams in
 * (`signedContent(id, timestamp, '')` first, then the body's bytes).
 */
export function checkHeaders(v: Omit<VerifyInput, 'body'>): CheckedHeaders {
  const get = (name: string): string | undefined => headerValue(v.headers, name);
  const { id: ID, timestamp: TS, signature: SIG } = STANDARD_WEBHOOKS_HEADERS;
  const id = get(ID);
  const ts = get(TS);
  const sig = get(SIG);
  const missing = [[ID, id], [TS, ts], [SIG, sig]].filter(([, value]) => !value).map(([name]) => name);
  if (missing.length > 0) return { reason: `missing header${missing.length > 1 ? 's' : ''} ${missing.join(', ')}` };
  if (!/^\d+$/.test(ts!.trim())) return { reason: `${TS} "${ts}" is not Unix seconds` };
  const timestamp = Number(ts!.trim());
  const skew = v.now - timestamp;
  if (skew > TOLERANCE_SECONDS) return { reason: `${TS} is ${skew} s old; receivers accept at most ${TOLERANCE_SECONDS} s (a replayed or re-sent request must be signed again)` };
  if (-skew > TOLERANCE_SECONDS) return { reason: `${TS} is ${-skew} s in the future; receivers accept at most ${TOLERANCE_SECONDS} s (check the sender's clock)` };
  const problem = secretProblem(v.secret);
  if (problem !== null) return { reason: `secret ${problem}` };
  const signatures = sig!.split(' ').filter((s) => s.startsWith('v1,')).map((s) => s.slice(3));
  if (signatures.length === 0) return { reason: `${SIG} has no "v1,<base64>" signature` };
  const key = fromBase64(v.secret.slice(SECRET_PREFIX.length))!;
  return { key, id: id!, timestamp, signatures };
}

type Prepared = { reason: string } | { key: Uint8Array; content: Uint8Array; signatures: string[] };

function prepare(v: VerifyInput): Prepared {
  const h = checkHeaders(v);
  if ('reason' in h) return h;
  return { key: h.key, content: new TextEncoder().encode(signedContent(h.id, h.timestamp, v.body)), signatures: h.signatures };
}

/** The outcome once the HMAC over `id.timestamp.body` is known: any one of the v1 signatures matching is enough. */
export function matchSignatures(signatures: string[], mac: Uint8Array): VerifyOutcome {
  // A lab's checker, not a guard: plain comparison is fine (receivers should compare in constant time).
  if (signatures.includes(toBase64(mac))) return { ok: true };
  return {
    ok: false,
    reason: 'no v1 signature matches: wrong secret (use the key bytes after "whsec_", base64-decoded), or the body was changed (sign the raw body as received, not re-serialized JSON)',
  };
}

/** Check a received request (space-separated `v1,…` signatures; any one matching is enough). */
export function verify(hmac: HmacSha256, v: VerifyInput): VerifyOutcome {
  const p = prepare(v);
  return 'reason' in p ? { ok: false, reason: p.reason } : matchSignatures(p.signatures, hmac(p.key, p.content));
}

export async function verifyAsync(hmac: HmacSha256Async, v: VerifyInput): Promise<VerifyOutcome> {
  const p = prepare(v);
  return 'reason' in p ? { ok: false, reason: p.reason } : matchSignatures(p.signatures, await hmac(p.key, p.content));
}
