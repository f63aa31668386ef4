import type { ActionsMapping, DestinationMode, WebhookSettings } from '../types';

// The one way to read a source's destination mode and mappings: settings stored before Actions
// existed have neither field, and mean Classic only.

export function webhookMode(w: Pick<WebhookSettings, 'mode'>): DestinationMode {
  return w.mode ?? 'classic';
}

export function webhookMappings(w: Pick<WebhookSettings, 'mappings'>): ActionsMapping[] {
  return w.mappings ?? [];
}

/** Whether a mapping batches its calls (it has a batch size): its requests' bodies are arrays, signed over the first item. */
export function mappingBatches<M extends Pick<ActionsMapping, 'batchSize'>>(m: M): m is M & { batchSize: number } {
  return m.batchSize !== undefined;
}

/** The source's mapping of that name, as configured now. */
export function mappingNamed(w: Pick<WebhookSettings, 'mappings'>, name: string | null): ActionsMapping | undefined {
  return webhookMappings(w).find((m) => m.name === name);
}

/** Whether the source sends Classic requests (to its `urls`). */
export function sendsClassic(w: Pick<WebhookSettings, 'mode'>): boolean {
  return webhookMode(w) !== 'actions';
}

/** Whether the source sends Webhooks (Actions) requests (one per matching mapping). */
export function sendsActions(w: Pick<WebhookSettings, 'mode'>): boolean {
  return webhookMode(w) !== 'classic';
}

/** Whether the source's Classic side forwards (Webhooks on or not: its callers ask that first): a mode with Classic and a URL. */
export function forwardsClassic(w: Pick<WebhookSettings, 'mode' | 'urls'>): boolean {
  return sendsClassic(w) && w.urls.length > 0;
}

/** The mappings the source's Actions requests come from: its mappings in a mode with Actions, none otherwise. */
export function actionsMappings(w: Pick<WebhookSettings, 'mode' | 'mappings'>): ActionsMapping[] {
  return sendsActions(w) ? webhookMappings(w) : [];
}

/** Whether the source's Actions side forwards (Webhooks on or not: its callers ask that first): a mode with Actions and a mapping. */
export function forwardsActions(w: Pick<WebhookSettings, 'mode' | 'mappings'>): boolean {
  return actionsMappings(w).length > 0;
}

/** What a change of a source's Webhooks settings stops sending, if anything. */
export type StoppedSide = 'all' | 'classic' | 'actions';

/**
 * Turning Webhooks off stops everything; switching the mode to `actions` stops its Classic requests,
 * to `classic` its Actions ones. Their unfinished deliveries are canceled then (README, Decisions):
 * nobody keeps retrying a receiver the source no longer sends to.
 */
export function sidesStopped(before: Pick<WebhookSettings, 'enabled' | 'mode'>, after: Pick<WebhookSettings, 'enabled' | 'mode'>): StoppedSide | null {
  if (!after.enabled) return before.enabled ? 'all' : null;
  if (sendsClassic(before) && !sendsClassic(after)) return 'classic';
  if (sendsActions(before) && !sendsActions(after)) return 'actions';
  return null;
}

/** The reason a delivery canceled by such a change shows. */
export function stoppedReason(side: StoppedSide, where = ''): string {
  const what = side === 'all' ? 'Webhooks was turned off for its source' : `its source's mode no longer sends ${side === 'classic' ? 'Classic' : 'Actions'} requests`;
  return `canceled: ${what}${where}`;
}
