import { actionsMappings, sendsClassic } from '../../../shared/actions/mode';
import { actionsUrlWarning } from '../../../shared/actions/private-url';
import { ACTIONS_USER_AGENT } from '../../../shared/actions/request';
import { mappingValueText } from '../../../shared/actions/mapping-value';
import { buildActionsRequestHeaders } from '../../../shared/webhook-request';
import type { ActionsPreviewItem } from '../../../shared/actions.contract';
import { hmacSha1Hex } from '../../../shared/preview/signature';
import { signStandardWebhookWeb } from '../../../shared/preview/standard-webhooks-web';
import type { WebhookPreview } from '../../../shared/preview/webhook-preview';
import { secretProblem, standardWebhooksHeaders } from '../../../shared/standard-webhooks';
import type { ActionsMapping, NormalizedCall, WebhookSettings } from '../../../shared/types';
import { judgeForwarding, type ForwardingInput } from '../../../shared/forwarding';
import type { Forwarding } from '../../../shared/types';
import { routesToWebhooks } from '../../../shared/routing';
import { newWebhookId } from '../../../shared/webhook-id';

// What each request the source's Webhooks destination would send for the call being composed looks
// like, Classic and every matching Actions mapping, with what each signature covers. The Actions
// requests come from the engine (previewActions: Segment's mapping kit and FQL run there only, with
// the dispatcher's own builder), the Classic one and the signatures from the shared modules the
// dispatcher uses (standard-webhooks.ts), so the preview and the wire cannot drift; only the
// Standard Webhooks id and timestamp are examples (they are made per delivery and per attempt).

/** The engine's previewActions operation (shared/actions.contract.ts). */
export type PreviewActions = (call: NormalizedCall, mappings: ActionsMapping[]) => Promise<ActionsPreviewItem[]>;

export interface RequestPreview {
  kind: 'classic' | 'actions';
  /** "Classic" or the mapping's name. */
  title: string;
  method: string;
  url: string | null;
  /** Further Classic URLs that get the same request. */
  moreUrls: number;
  headers: Record<string, string>;
  /** The exact body text. */
  body: string;
  /** X-Signature's value; null when unsigned. */
  signature: string | null;
  /** What X-Signature is the HMAC-SHA1 of, in words. */
  signatureNote: string;
  /** The exact text signed, when it is not the body (an Actions batch: the first event's data). */
  signedText: string | null;
  /** Batch mappings: the body is an array, shown with this one call. */
  batchNote: string | null;
  /** Segment's Actions destination would refuse the URL (private network). */
  urlWarning: string | null;
  /** The mapping's trigger in words (Actions). */
  trigger: string | null;
}

export interface SkippedMapping {
  name: string;
  trigger: string;
}

export interface DestinationPreviews {
  requests: RequestPreview[];
  /** Whether the call would be forwarded, and why not: the judge and words the inspector uses (shared/forwarding.ts). */
  forwarding: Forwarding;
  /** Actions mappings this call does not match. */
  skipped: SkippedMapping[];
  /** The example Standard Webhooks id and timestamp used, when the source has a secret. */
  sw: { id: string; timestamp: number } | null;
}

export interface StandardWebhooksExample {
  id: string;
  /** Unix seconds. */
  timestamp: number;
}

/** An example webhook-id, made as the dispatcher makes them (shared/webhook-id.ts). */
export const exampleWebhookId = newWebhookId;

async function withStandardWebhooks(headers: Record<string, string>, body: string, secret: string | null, ex: StandardWebhooksExample): Promise<Record<string, string>> {
  if (!secret) return headers;
  const signature = await signStandardWebhookWeb({ secret, id: ex.id, timestamp: ex.timestamp, body });
  return { ...headers, ...standardWebhooksHeaders(ex.id, ex.timestamp, signature) };
}

function byteLength(text: string): number {
  return new TextEncoder().encode(text).length;
}

export async function destinationPreviews(args: {
  call: NormalizedCall;
  webhooks: WebhookSettings;
  /** The Classic request, as webhookPreview built it (body, headers, X-Signature). */
  classic: WebhookPreview | null;
  example: StandardWebhooksExample;
  previewActions: PreviewActions;
}): Promise<DestinationPreviews> {
  const { call, webhooks, classic, example } = args;
  const sharedSecret = webhooks.sharedSecret || null;
  const rawSw = webhooks.standardWebhooksSecret?.trim() || null;
  // A secret the engine would refuse is never stored; guard anyway so a preview cannot throw.
  const swSecret = rawSw && secretProblem(rawSw) === null ? rawSw : null;
  const requests: RequestPreview[] = [];
  const skipped: SkippedMapping[] = [];
  const matches: ForwardingInput['matches'] = [];

  if (sendsClassic(webhooks) && classic) {
    requests.push({
      kind: 'classic',
      title: 'Classic',
      method: 'POST',
      url: webhooks.urls[0]?.url ?? null,
      moreUrls: Math.max(0, webhooks.urls.length - 1),
      headers: await withStandardWebhooks(classic.headers, classic.body, swSecret, example),
      body: classic.body,
      signature: classic.signature,
      signatureNote: classic.signature ? `X-Signature = HMAC-SHA1(shared secret, the body bytes: ${byteLength(classic.body)} B)` : 'unsigned (no shared secret)',
      signedText: null,
      batchNote: null,
      urlWarning: null,
      trigger: null,
    });
  }

  const mappings = actionsMappings(webhooks);
  if (mappings.length > 0) {
    const items = await args.previewActions(call, mappings);
    for (const [i, item] of items.entries()) {
      const m = mappings[i];
      const trigger = item.trigger ?? 'every call';
      matches.push({ name: item.name, trigger: item.trigger ?? '', matches: item.matches });
      if (!item.matches) {
        skipped.push({ name: item.name, trigger: item.triggerError ? `${trigger} (cannot be read: ${item.triggerError})` : trigger });
        continue;
      }
      const r = item.request;
      if (!r) {
        // As the engine records it: this mapping's request is not sent for this call.
        requests.push({ kind: 'actions', title: m.name, method: m.method, url: mappingValueText(m.url), moreUrls: 0, headers: {}, body: '', signature: null, signatureNote: item.notSent ?? 'not sent', signedText: null, batchNote: null, urlWarning: null, trigger });
        continue;
      }
      const signature = sharedSecret && r.signedText !== null ? await hmacSha1Hex(sharedSecret, r.signedText) : null;
      // As the dispatcher sends them: Segment's client's headers and order, the mapping's among them.
      const headers = buildActionsRequestHeaders({ userAgent: ACTIONS_USER_AGENT, signature, urlHeaders: r.headers, body: new TextEncoder().encode(r.body) });
      let signatureNote: string;
      if (r.signedText === null) signatureNote = 'no body and no X-Signature: the data mapping resolved to nothing for this call';
      else if (!signature) signatureNote = 'unsigned (no shared secret)';
      else if (r.batch) signatureNote = "X-Signature = HMAC-SHA1(shared secret, JSON.stringify(data)) of the FIRST event only, not the array body: a receiver that verifies the raw body fails";
      else signatureNote = 'X-Signature = HMAC-SHA1(shared secret, JSON.stringify(data)), which here is the body';
      requests.push({
        kind: 'actions',
        title: m.name,
        method: r.method,
        url: r.url,
        moreUrls: 0,
        headers: await withStandardWebhooks(headers, r.body, swSecret, example),
        body: r.body,
        signature,
        signatureNote,
        signedText: r.batch ? r.signedText : null,
        batchNote: r.batch
          ? `Batch mapping: the body is a JSON array, shown here with this one call; up to ${m.batchSize!.toLocaleString('en-US')} matching calls go in one request`
          : null,
        urlWarning: actionsUrlWarning(r.url),
        trigger,
      });
    }
  }
  // As the engine plans it: a request goes when the call routes to Webhooks, the destination is on,
  // and there is a Classic URL or a matching mapping (a mapping's request not sent still makes a delivery).
  const sent = webhooks.enabled && routesToWebhooks(call.integrations) && requests.some((r) => r.kind === 'actions' || r.url !== null);
  const forwarding = judgeForwarding({ status: 'accepted', sent, integrations: call.integrations, webhooks, matches });
  return { requests, forwarding, skipped, sw: swSecret ? example : null };
}
