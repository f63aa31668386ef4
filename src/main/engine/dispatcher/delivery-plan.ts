import type { NormalizedCall, Settings, Source } from '../../../shared/types';
import { routesToWebhooks } from '../../../shared/routing';
import { buildWebhookBody } from '../../../shared/webhook-body';
import type { NewDelivery } from '../store/deliveries.repo';
import { userAgentOf } from '../../../shared/webhook-request';
import { signBody } from './sign';

/**
 * Whether (and how) a call goes to its source's Webhooks destination; null when it does not. The
 * body is serialized, and the User-Agent and signature fixed, once here: every scheduled attempt
 * sends exactly this request, whatever the source's secret or the settings become later.
 */
export function planDelivery(call: NormalizedCall, source: Source, settings: Settings, opts: { ignoreIntegrations?: boolean } = {}): NewDelivery | null {
  const wh = source.webhooks;
  if (!wh.enabled || wh.urls.length === 0) return null;
  if (!opts.ignoreIntegrations && !routesToWebhooks(call.integrations)) return null;
  const body = Buffer.from(JSON.stringify(buildWebhookBody(call, settings.payloadFormat, settings.aliasKeys)));
  return { urls: wh.urls, body, userAgent: userAgentOf(settings.userAgentProduct), signature: wh.sharedSecret ? signBody(wh.sharedSecret, body) : null };
}
