import { userAgentOf } from '../../../shared/webhook-request';
import { ACTIONS_USER_AGENT } from '../../../shared/actions/request';
import { secretProblem, standardWebhooksHeaders } from '../../../shared/standard-webhooks';
import { signBody } from './sign';
import { signStandardWebhook } from './standard-webhooks-sign';

// The header rule itself is shared with the Compose preview (src/shared/webhook-request.ts); this
// is the Node half, signing with node:crypto on the dispatcher's side.

/** The request a body gets from the current settings and secret: a new delivery's, or a replay's. */
export function currentRequest(userAgentProduct: string, secret: string | undefined, body: Buffer): { userAgent: string; signature: string | null } {
  return { userAgent: userAgentOf(userAgentProduct), signature: secret ? signBody(secret, body) : null };
}

/**
 * The same for a Webhooks (Actions) body: Segment's user-agent, and X-Signature over the data of the
 * one call or, for a batch (a JSON array of the items' data), over the first item's data only, as
 * Segment signs it (shared/actions/request.ts). Re-serializing the first item of a body this code
 * wrote gives back its exact text: JSON.stringify output parses and stringifies to itself.
 */
export function currentActionsRequest(secret: string | undefined, body: Buffer, batch: boolean): { userAgent: string; signature: string | null } {
  if (!secret || body.length === 0) return { userAgent: ACTIONS_USER_AGENT, signature: null };
  let signed: string | Buffer = body;
  if (batch) {
    let first: unknown;
    try {
      const items: unknown = JSON.parse(body.toString('utf8'));
      first = Array.isArray(items) ? items[0] : items;
    } catch {
      // An edited replay body that is not JSON: nothing to find a first item in, sign what is sent.
      return { userAgent: ACTIONS_USER_AGENT, signature: signBody(secret, body) };
    }
    if (first === undefined) return { userAgent: ACTIONS_USER_AGENT, signature: null };
    signed = JSON.stringify(first);
  }
  return { userAgent: ACTIONS_USER_AGENT, signature: signBody(secret, signed) };
}


/**
 * webhook-id, webhook-timestamp and webhook-signature for one attempt sent at `atMs` (epoch ms):
 * signed now, not at creation, because receivers refuse a timestamp more than 5 minutes off, and
 * a retry can go out hours after the first attempt (as Svix re-signs each attempt). One `v1,…`
 * signature per secret, space-separated (during a rotation window: the new secret's and the old's,
 * as Svix sends them; a receiver accepts when any matches). null when no secret is a usable whsec_
 * secret (settings validation refuses those; never throw mid-round).
 */
export function standardWebhooksFor(sw: { id: string; secrets: readonly string[] } | null, body: Buffer, atMs: number): Record<string, string> | null {
  const secrets = sw?.secrets.filter((s) => secretProblem(s) === null) ?? [];
  if (sw === null || secrets.length === 0) return null;
  const timestamp = Math.floor(atMs / 1000);
  const text = body.toString('utf8');
  const signature = secrets.map((secret) => signStandardWebhook({ secret, id: sw.id, timestamp, body: text })).join(' ');
  return standardWebhooksHeaders(sw.id, timestamp, signature);
}
