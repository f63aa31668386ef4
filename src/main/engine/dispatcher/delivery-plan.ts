import type { NormalizedCall, Settings, Source, WebhookUrl } from '../../../shared/types';
import { routesToWebhooks } from '../../../shared/routing';
import { buildWebhookBody } from '../../../shared/webhook-body';

export interface DeliveryPlan {
  urls: WebhookUrl[];
  /** Serialized once here; every attempt signs and sends these exact bytes. */
  body: Buffer;
}

/** Whether (and how) a call goes to its source's Webhooks destination; null when it does not. */
export function planDelivery(call: NormalizedCall, source: Source, settings: Settings, opts: { ignoreIntegrations?: boolean } = {}): DeliveryPlan | null {
  const wh = source.webhooks;
  if (!wh.enabled || wh.urls.length === 0) return null;
  if (!opts.ignoreIntegrations && !routesToWebhooks(call.integrations)) return null;
  return { urls: wh.urls, body: Buffer.from(JSON.stringify(buildWebhookBody(call, settings.payloadFormat, settings.aliasKeys))) };
}
