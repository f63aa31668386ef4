import { useEffect, useMemo, useState } from 'react';
import { clientRequest, formatHttpRequest } from '../../../shared/preview/client-request';
import { goCode } from '../../../shared/preview/go-code';
import { normalizeForPreview, webhookPreview, type WebhookPreview } from '../../../shared/preview/webhook-preview';
import type { JsonObject } from '../../../shared/types';
import { DEFAULT_USER_AGENT_PRODUCT } from '../../../shared/webhook-request';
import { useAppShallow } from '../../store-context';
import type { Draft } from '../../stores/compose-model';
import { destinationPreviews, exampleWebhookId, type DestinationPreviews } from './destination-previews';
import { DEFAULT_COLLECTOR_URL } from '../../../shared/ports';

export interface Previews {
  http: string;
  go: string;
  webhook: WebhookPreview | null;
  webhookUrl: string | null;
  sourceName: string | null;
  hasSecret: boolean;
  /** Classic and each matching Actions mapping's request, side by side; null while computing or without a source. */
  destinations: DestinationPreviews | null;
}

function uuid(): string {
  return crypto.randomUUID();
}

/**
 * The three live previews for the draft as it stands, computed with the same pure builders the
 * tests check. Ids and times are fixed per edit, so the previews do not flicker while typing.
 */
export function usePreviews(draft: Draft, message: JsonObject): Previews {
  const { client, sources, settings, lastSend, previewActions } = useAppShallow((s) => ({
    previewActions: s.previewActions,
    client: s.clientState?.settings ?? null,
    sources: s.sources,
    settings: s.settings,
    lastSend: s.lastSend,
  }));
  // A fresh messageId after each send, as the next call the client queues will get a new one.
  const ids = useMemo(() => ({ messageId: uuid(), batchMessageId: uuid() }), [lastSend]);
  // An example Standard Webhooks id: the dispatcher makes one per delivery.
  const swId = useMemo(() => exampleWebhookId(), [lastSend]);
  const source = sources.find((s) => s.id === client?.sourceId) ?? null;
  const endpoint = client?.endpoint ?? DEFAULT_COLLECTOR_URL;
  const writeKey = client?.writeKey ?? source?.writeKey ?? '';
  const nowMs = useMemo(() => Date.now(), [draft]);

  const sync = useMemo(() => {
    const now = new Date(nowMs).toISOString();
    const req = clientRequest(draft.type, message, { endpoint, writeKey, ...ids, timestamp: now, sentAt: now });
    const item = (req.body.batch as JsonObject[])[0];
    const normalized = normalizeForPreview(item, { context: req.body.context as JsonObject, sentAt: now }, nowMs);
    return {
      http: formatHttpRequest({ ...req, body: JSON.stringify(req.body, null, 2) }),
      go: goCode(draft.type, message, { writeKey, endpoint }),
      normalized,
    };
  }, [draft.type, message, endpoint, writeKey, ids, nowMs]);

  const [webhook, setWebhook] = useState<WebhookPreview | null>(null);
  const secret = source?.webhooks.sharedSecret || undefined;
  const firstUrl = source?.webhooks.urls[0] ?? null;
  const [destinations, setDestinations] = useState<DestinationPreviews | null>(null);
  const webhooks = source?.webhooks ?? null;
  useEffect(() => {
    let live = true;
    if (!webhook || !webhooks || webhook.normalized !== sync.normalized) return undefined;
    destinationPreviews({ call: sync.normalized, webhooks, classic: webhook, example: { id: swId, timestamp: Math.floor(nowMs / 1000) }, previewActions }).then(
      (d) => live && setDestinations(d),
      // The engine refused or could not be reached: no destination previews rather than stale ones.
      () => live && setDestinations(null),
    );
    return () => {
      live = false;
    };
  }, [webhook, webhooks, sync.normalized, swId, nowMs, previewActions]);

  useEffect(() => {
    let live = true;
    void webhookPreview(sync.normalized, {
      format: settings?.payloadFormat ?? 'full',
      aliasKeys: settings?.aliasKeys ?? 'both',
      userAgentProduct: settings?.userAgentProduct ?? DEFAULT_USER_AGENT_PRODUCT,
      sharedSecret: secret,
      headers: firstUrl?.headers,
    }).then((p) => live && setWebhook(p));
    return () => {
      live = false;
    };
  }, [sync.normalized, settings?.payloadFormat, settings?.aliasKeys, settings?.userAgentProduct, secret, firstUrl]);

  return {
    http: sync.http,
    go: sync.go,
    webhook,
    webhookUrl: firstUrl?.url ?? null,
    sourceName: source?.name ?? null,
    hasSecret: Boolean(secret),
    destinations: webhooks ? destinations : null,
  };
}
