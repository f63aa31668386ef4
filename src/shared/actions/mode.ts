import type { ActionsMapping, DestinationMode, WebhookSettings } from '../types';

// The one way to read a source's destination mode and mappings: settings stored before Actions
// existed have neither field, and mean Classic only.

export function webhookMode(w: Pick<WebhookSettings, 'mode'>): DestinationMode {
  return w.mode ?? 'classic';
}

export function webhookMappings(w: Pick<WebhookSettings, 'mappings'>): ActionsMapping[] {
  return w.mappings ?? [];
}

/** Whether the source sends Classic requests (to its `urls`). */
export function sendsClassic(w: Pick<WebhookSettings, 'mode'>): boolean {
  return webhookMode(w) !== 'actions';
}

/** Whether the source sends Webhooks (Actions) requests (one per matching mapping). */
export function sendsActions(w: Pick<WebhookSettings, 'mode'>): boolean {
  return webhookMode(w) !== 'classic';
}
