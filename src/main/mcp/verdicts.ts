import { z } from 'zod';
import type { CallDetail } from '../../shared/types';
import type { LabApi } from '../testing/transport';
import { headerValue } from '../../shared/header-value';

// get_call's signature verdicts (issue 39): for an attempt sent to one of the lab's own mock
// receivers, what that receiver found when it checked X-Signature and webhook-signature with its
// secrets (the record it kept of the request). A receiver outside the lab keeps its verdict to
// itself: its answer (a 401) is in the attempt, and verify_signature checks a signature on request.

export const signatureVerdictOutput = z.object({
  attemptId: z.number().int(),
  receiver: z.string(),
  /** X-Signature: valid, invalid, missing, or not_checked (the receiver has no secret). */
  signature: z.string(),
  standardWebhooks: z.string(),
  reason: z.string().nullable(),
  status: z.number().int().nullable(),
});
export type SignatureVerdict = z.infer<typeof signatureVerdictOutput>;

/** The receivers' requests read to find an attempt's (the newest first, as the receiver keeps them). */
const RECORDS = 1000;

const sentTo = (attemptUrl: string, receiverUrl: string) => attemptUrl === receiverUrl || attemptUrl.startsWith(`${receiverUrl}?`);

export async function signatureVerdicts(ops: LabApi, d: CallDetail): Promise<SignatureVerdict[]> {
  const attempts = d.deliveries.flatMap((del) => del.attempts.map((a) => ({ a, body: a.requestBody ?? del.body })));
  if (attempts.length === 0) return [];
  const receivers = (await ops('listReceivers', {})).filter((r) => attempts.some(({ a }) => sentTo(a.url, r.url)));
  const out: SignatureVerdict[] = [];
  for (const r of receivers) {
    const records = await ops('listReceiverRequests', { id: r.id, limit: RECORDS });
    for (const { a, body } of attempts) {
      if (!sentTo(a.url, r.url)) continue;
      // The request this attempt sent: the same bytes, signature and webhook-id, arrived after it started.
      const rec = records
        .filter((x) => x.body === body && x.headers['x-signature'] === (a.signature ?? undefined) && x.headers['webhook-id'] === headerValue(a.requestHeaders, 'webhook-id') && x.at >= a.startedAt.slice(0, 19))
        .sort((x, y) => x.at.localeCompare(y.at) || x.seq - y.seq)[0];
      if (!rec) continue;
      out.push({
        attemptId: a.id,
        receiver: r.name,
        signature: rec.signature.state,
        standardWebhooks: rec.standardWebhooks?.state ?? 'not_checked',
        reason: rec.signature.reason ?? rec.standardWebhooks?.reason ?? null,
        status: rec.response.status,
      });
    }
  }
  return out;
}
