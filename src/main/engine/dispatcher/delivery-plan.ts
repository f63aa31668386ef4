import { newWebhookId } from '../../../shared/webhook-id';
import type { ActionsMapping, NormalizedCall, Settings, Source, WebhookSettings } from '../../../shared/types';
import { routesToWebhooks } from '../../../shared/routing';
import { buildWebhookBody } from '../../../shared/webhook-body';
import type { ActiveDelivery, NewActionsDelivery, NewDelivery } from '../store/delivery.types';
import type { ActionsPlan, DeliveryPlanner, SourcePlan } from '../store/arrivals';
import { userAgentOf } from '../../../shared/webhook-request';
import { ACTIONS_USER_AGENT, actionsHeaders } from '../../../shared/actions/request';
import { buildActionsRequest } from '../actions/request';
import { isNotSentReason, mapData, type NotSentReason } from '../actions/mapping-kit';
import { writtenTarget, isStaticTarget, resolveTarget, type ActionsTarget } from '../actions/target';
import { matchesTrigger } from '../actions/trigger';
import { ACTIONS_TIMEOUT_MS } from '../../../shared/actions/retry-classes';
import { actionsMappings, forwardsClassic, mappingBatches } from '../../../shared/actions/mode';
import { signBody } from './sign';

/**
 * What a delivery is sent to and signed with: a source's Webhooks URLs and secrets, and the version of
 * its Standard Webhooks secret, which the delivery keeps instead of the secret (store/source-secrets.ts;
 * absent: a secret the lab does not keep, the probe's).
 */
export type DeliveryTarget = Pick<WebhookSettings, 'urls' | 'sharedSecret' | 'standardWebhooksSecret'> & { standardWebhooksVersion?: number | null };

/** A source's target as it stands: its Webhooks settings with its current secret version. */
export function targetOf(source: Pick<Source, 'webhooks' | 'secretVersions'>): WebhookSettings & DeliveryTarget {
  return { ...source.webhooks, standardWebhooksVersion: source.secretVersions?.standardWebhooksSecret?.version ?? null };
}

/**
 * The delivery of a call to these URLs; null when there are none. The body is serialized, and the
 * User-Agent and signature fixed, once here: every scheduled attempt sends exactly this request,
 * whatever the source's secret or the settings become later. Replay plans with the source's current
 * URLs and secret (README: replay is the one way to send with the current settings).
 */
export function planDelivery(call: NormalizedCall, target: DeliveryTarget, settings: Settings): NewDelivery | null {
  if (target.urls.length === 0) return null;
  const body = Buffer.from(JSON.stringify(buildWebhookBody(call, settings.payloadFormat, settings.aliasKeys)));
  return {
    urls: target.urls,
    body,
    userAgent: userAgentOf(settings.userAgentProduct),
    signature: target.sharedSecret ? signBody(target.sharedSecret, body) : null,
    standardWebhooks: standardWebhooksOf(target),
  };
}

/**
 * Standard Webhooks of a new delivery: its webhook-id, fixed now (receivers deduplicate on it), and
 * the version of the secret each attempt signs with, fixed like X-Signature; null when the source has none.
 */
export function standardWebhooksOf(target: Pick<DeliveryTarget, 'standardWebhooksSecret' | 'standardWebhooksVersion'>): NewDelivery['standardWebhooks'] {
  return target.standardWebhooksSecret ? { id: newWebhookId(), version: target.standardWebhooksVersion ?? null } : null;
}

/**
 * An Actions mapping's delivery of a body already built (one call's data, or a batch's array):
 * one URL with Segment's and the mapping's headers (lowercased, as they reach a receiver), the
 * mapping's method, Actions' timeout, and X-Signature over `signedText` (the first item's data, as
 * Segment signs a batch: shared/actions/request.ts), frozen with the source's shared secret.
 */
export function actionsDelivery(
  mapping: ActionsMapping,
  to: ActionsTarget,
  body: string,
  signedText: string | null,
  target: Omit<DeliveryTarget, 'urls'>,
  callIds: number[],
): NewActionsDelivery {
  return {
    urls: [{ url: to.url, headers: actionsHeaders(to.headers) }],
    body: Buffer.from(body),
    userAgent: ACTIONS_USER_AGENT,
    signature: signedText !== null && target.sharedSecret ? signBody(target.sharedSecret, signedText) : null,
    standardWebhooks: standardWebhooksOf(target),
    mapping: mapping.name,
    method: mapping.method,
    timeoutMs: ACTIONS_TIMEOUT_MS,
    callIds,
  };
}

/**
 * A batch item's stored data: '' when the call's data resolved to nothing (the array holds null, and a
 * first item so signs nothing). Throws a NotSentReason (over the limit, not an object, the kit failed).
 */
export function batchItemData(mapping: ActionsMapping, call: NormalizedCall): string {
  return mapData(mapping.data, call).text ?? '';
}

/**
 * The request of a mapping whose data for this call cannot be sent (over MAX_MAPPED_BODY_BYTES, not an
 * object as Segment requires, or the mapping kit failed on it): never sent, stored failed with the
 * reason (store/arrivals.ts), carrying only this call even when the mapping batches, so its
 * neighbours in the batch go out without it (as Segment drops an invalid item from a batch). No body,
 * signature or Standard Webhooks id.
 */
function unsentDelivery(mapping: ActionsMapping, err: NotSentReason, call: NormalizedCall): NewActionsDelivery {
  // Where it would have gone, when that resolved (the data was what failed): a replay with an edited
  // body goes there. When the URL or headers are what failed, the directive is kept as written (not
  // a URL): a replay is refused (manual-rounds.ts), never sent to the directive's text.
  let to: ActionsTarget;
  try {
    to = resolveTarget(mapping, call);
  } catch {
    to = writtenTarget(mapping);
  }
  return { ...actionsDelivery(mapping, to, '', null, {}, []), notSent: `not sent: ${err.message}` };
}

/**
 * Whether a delivery is one of those (failed without an attempt: every other failure is an
 * attempt's): it holds no request, so it is never sent again as stored (replay refuses it without an
 * edited body, a bulk retry leaves it out).
 */
export function neverSent(d: Pick<ActiveDelivery, 'kind' | 'state' | 'attemptCount'>): boolean {
  return d.kind === 'actions' && d.state === 'failed' && d.attemptCount === 0;
}

/**
 * Whether a delivery whose source was deleted can be sent again as it first went: a manual round
 * then resends its own request (User-Agent and X-Signature fixed at creation, round.ts). Not when
 * it signed with Standard Webhooks (each attempt signs anew, and the deleted source's secrets are
 * retired), nor an edited body that needs an X-Signature, nor a delivery older than its fixed
 * request (the lab cannot tell whether it was signed).
 */
export function resendableWithoutSource(d: Pick<ActiveDelivery, 'frozen' | 'standardWebhooks'>, bodyEdited: boolean): boolean {
  return d.frozen !== null && d.standardWebhooks === null && !(bodyEdited && d.frozen.signature !== null);
}

/** A batch's body and signed text from its items' stored data, in queue order (as buildActionsRequest would make them). */
export function batchRequest(items: readonly { data: string }[]): { body: string; signedText: string | null } {
  return { body: `[${items.map((i) => i.data || 'null').join(',')}]`, signedText: items[0].data === '' ? null : items[0].data };
}

/**
 * A call's Actions part: for each mapping whose trigger matches it, a delivery of its own, or an
 * item queued in the mapping's batch. callIds of the deliveries are filled in by the store.
 */
export function planActions(call: NormalizedCall, mappings: readonly ActionsMapping[], target: DeliveryTarget): ActionsPlan | null {
  let plan: ActionsPlan | null = null;
  for (const m of mappings) {
    if (!matchesTrigger(call, m.trigger)) continue;
    plan ??= { deliveries: [], items: [] };
    try {
      if (mappingBatches(m)) {
        // Resolved now, as Segment resolves the payload when the event arrives; a directive's target
        // keys the batch (Segment batches on url, method and headers), a literal one follows edits.
        const to = resolveTarget(m, call);
        plan.items.push({ mapping: m, data: batchItemData(m, call), target: isStaticTarget(m) ? '' : JSON.stringify(to) });
      } else {
        const req = buildActionsRequest(m, [call]);
        plan.deliveries.push(actionsDelivery(m, req, req.body, req.signedText, target, []));
      }
    } catch (err) {
      if (!isNotSentReason(err)) throw err;
      plan.deliveries.push(unsentDelivery(m, err, call));
    }
  }
  return plan;
}

/**
 * The rule for calls as they arrive (the store asks it: arrivals.ts): a source forwards when its
 * Webhooks destination is on and has a URL (Classic) or a mapping (Actions), as its mode says; a
 * call goes unless its `integrations` turn Webhooks off, in either mode. A Classic-only source gets
 * the same one closure per request as before Actions.
 */
export function arrivalPlanner(settings: () => Settings): DeliveryPlanner {
  return (source) => {
    // The secret version rides along only for a source that has a Standard Webhooks secret (no copy per request otherwise).
    const wh: WebhookSettings & DeliveryTarget = source.webhooks.standardWebhooksSecret ? targetOf(source) : source.webhooks;
    if (!wh.enabled) return null;
    const classic = forwardsClassic(wh);
    const mappings = actionsMappings(wh);
    if (!classic && mappings.length === 0) return null;
    const s = settings();
    const plan: SourcePlan = {
      classic: classic ? (call) => (routesToWebhooks(call.integrations) ? planDelivery(call, wh, s) : null) : null,
      actions: mappings.length > 0 ? (call) => (routesToWebhooks(call.integrations) ? planActions(call, mappings, wh) : null) : null,
    };
    return plan;
  };
}
