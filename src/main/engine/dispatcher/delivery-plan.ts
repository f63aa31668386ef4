import type { NormalizedCall, Settings, WebhookSettings } from '../../../shared/types';
import { routesToWebhooks } from '../../../shared/routing';
import { buildWebhookBody } from '../../../shared/webhook-body';
import type { NewDelivery } from '../store/delivery.types';
import type { DeliveryPlanner } from '../store/arrivals';
import { userAgentOf } from '../../../shared/webhook-request';
import { signBody } from './sign';

/** What a delivery is sent to and signed with: a source's Webhooks URLs and shared secret. */
export type DeliveryTarget = Pick<WebhookSettings, 'urls' | 'sharedSecret'>;

/**
 * The delivery of a call to these URLs; null when there are none. The body is serialized, and the
 * User-Agent and signature fixed, once here: every scheduled attempt sends exactly this request,
 * whatever the source's secret or the settings become later. Replay plans with the source's current
 * URLs and secret (README: replay is the one way to send with the current settings).
 */
export function planDelivery(call: NormalizedCall, target: DeliveryTarget, settings: Settings): NewDelivery | null {
  if (target.urls.length === 0) return null;
  const body = Buffer.from(JSON.stringify(buildWebhookBody(call, settings.payloadFormat, settings.aliasKeys)));
  return { urls: target.urls, body, userAgent: userAgentOf(settings.userAgentProduct), signature: target.sharedSecret ? signBody(target.sharedSecret, body) : null };
}

/**
 * The rule for calls as they arrive (the store asks it: arrivals.ts): a source forwards when its
 * Webhooks destination is on and has a URL, and a call goes unless its `integrations` turn Webhooks off.
 */
export function arrivalPlanner(settings: () => Settings): DeliveryPlanner {
  return (source) => {
    const wh = source.webhooks;
    if (!wh.enabled || wh.urls.length === 0) return null;
    const s = settings();
    return (call) => (routesToWebhooks(call.integrations) ? planDelivery(call, wh, s) : null);
  };
}
