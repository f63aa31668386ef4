import { z } from 'zod';
import { op } from './api-op';

// Verify a signature (issue 39, the MCP tool verify_signature): a body, a secret and the signatures
// a receiver got → which matched, for Classic (X-Signature, HMAC-SHA1 hex over the body) and Standard
// Webhooks (webhook-signature, HMAC-SHA256 over `id.timestamp.body`), and what was signed. Given a
// source, every version of its secrets the lab still keeps is tried (a rotation keeps the one before
// for its window), so the answer can name the version that made a signature. Given an attempt the
// lab made, its exact bytes and signatures are read from the lab (an agent's copy may be cut or
// masked). Spread into `api` by api.contract.ts; the engine side is
// src/main/engine/verify-signature.ts. No secret is ever answered.

export const verifySignatureSchema = z
  .strictObject({
    /** The body exactly as received (the signed bytes, as UTF-8 text). */
    body: z.string().max(2_000_000).optional(),
    /**
     * An attempt the lab made (its id, and its call's, as a call's detail gives them): its exact bytes
     * and the signature headers it sent are checked, and its source's secrets tried. What is given
     * besides (a body, a signature) replaces the attempt's.
     */
    callId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
    /** Below 1 while the attempt's round is still out (the detail shows it answered, not yet recorded). */
    attemptId: z.number().int().min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER).optional(),
    /** X-Signature as received. */
    xSignature: z.string().max(1000).optional(),
    /** webhook-id, webhook-timestamp and webhook-signature as received (Standard Webhooks). */
    webhookId: z.string().max(1000).optional(),
    webhookTimestamp: z.string().max(100).optional(),
    webhookSignature: z.string().max(5000).optional(),
    /** The shared secret the receiver checks X-Signature with. */
    secret: z.string().max(1024).optional(),
    /** The whsec_ secret the receiver checks webhook-signature with. */
    standardWebhooksSecret: z.string().max(1024).optional(),
    /** A source (id or name): each version of its secrets the lab keeps is tried too, and named when it matched. */
    source: z.string().min(1).max(200).optional(),
  })
  .refine((v) => (v.callId === undefined) === (v.attemptId === undefined), {
    message: 'give callId and attemptId together: the attempt, and the call it belongs to',
    path: ['attemptId'],
  })
  .refine((v) => v.body !== undefined || v.attemptId !== undefined, {
    message: 'give the body received, or callId and attemptId of the attempt that sent it',
    path: ['body'],
  })
  .refine((v) => v.secret !== undefined || v.standardWebhooksSecret !== undefined || v.source !== undefined || v.attemptId !== undefined, {
    message: 'give a secret, a standardWebhooksSecret, or a source whose secrets to try',
    path: ['secret'],
  })
  .refine((v) => v.xSignature !== undefined || v.webhookSignature !== undefined || v.attemptId !== undefined, {
    message: 'give the signature received: xSignature (X-Signature) or webhookSignature with webhookId and webhookTimestamp',
    path: ['xSignature'],
  });

const verdict = z.enum(['valid', 'invalid', 'missing', 'not_checked']);
/** Which secret a signature matched: a version of the source's (`current` when it is the one in use), or the one given. */
const matchedBy = z.object({ version: z.number().int().nullable(), current: z.boolean(), given: z.boolean() }).nullable();

export const verifySignatureOutput = z.object({
  /** X-Signature; null when none was given. */
  classic: z
    .object({
      state: verdict,
      received: z.string().nullable(),
      /** What a receiver holding the matched (else the first tried) secret computes. */
      expected: z.string().nullable(),
      reason: z.string().nullable(),
      matched: matchedBy,
      /** What was signed, in words. */
      signed: z.string(),
    })
    .nullable(),
  /** webhook-signature; null when none was given. */
  standardWebhooks: z
    .object({
      /** The verdict a receiver gives now, with the matched secret (else the first tried): timestamp tolerance included. */
      state: verdict,
      reason: z.string().nullable(),
      /** Each `v1,` signature received, in order, with the secret that made it when one tried did. */
      signatures: z.array(z.object({ signature: z.string(), matched: matchedBy })),
      matched: matchedBy,
      /** The signed content: `webhook-id.webhook-timestamp.` then the body. */
      signed: z.string(),
    })
    .nullable(),
  /** Versions of the source's secrets tried (newest first); empty without a source. */
  versionsTried: z.object({ sharedSecret: z.array(z.number().int()), standardWebhooksSecret: z.array(z.number().int()) }),
  /**
   * Given an attempt: the version of each of its source's secrets that signed it (X-Signature: the one
   * current when its call arrived; webhook-signature: its delivery's own), and whether the lab still
   * keeps it (`kept: false`: retired and erased, so it cannot be tried); null for a secret it was not
   * signed with. null when no attempt was given.
   */
  madeWith: z
    .object({
      sharedSecret: z.object({ version: z.number().int(), kept: z.boolean() }).nullable(),
      standardWebhooksSecret: z.object({ version: z.number().int(), kept: z.boolean() }).nullable(),
    })
    .nullable(),
});
export type VerifySignatureResult = z.infer<typeof verifySignatureOutput>;

export const signatureOps = {
  verifySignature: op<VerifySignatureResult>()('POST', '/signatures/verify', verifySignatureSchema, { output: verifySignatureOutput }),
};
