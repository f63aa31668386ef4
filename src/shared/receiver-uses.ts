import type { Source, WebhookSettings } from './types';

// Which sources send to a mock receiver's URL, and what removing it from them does (issue 26): the
// engine refuses to delete a receiver still in use unless asked to detach it, and the receivers screen
// says the same before the user confirms. One rule for both.

export interface ReceiverUse {
  sourceId: string;
  sourceName: string;
  /** Indexes of its Classic URLs that are the receiver's. */
  urls: number[];
  /** Names of its Actions mappings whose URL is the receiver's: detaching cannot remove those (a mapping needs a URL). */
  mappings: string[];
  /** What removing the URLs does to the source: nothing more, or its Webhooks go off (no URL left), or Actions only (mode both, no URL left). */
  effect: 'url_removed' | 'webhooks_off' | 'actions_only';
}

export function receiverUses(url: string, sources: Pick<Source, 'id' | 'name' | 'webhooks'>[]): ReceiverUse[] {
  const uses: ReceiverUse[] = [];
  for (const s of sources) {
    const urls = s.webhooks.urls.flatMap((u, i) => (u.url === url ? [i] : []));
    const mappings = (s.webhooks.mappings ?? []).filter((m) => m.url === url).map((m) => m.name);
    if (urls.length === 0 && mappings.length === 0) continue;
    uses.push({ sourceId: s.id, sourceName: s.name, urls, mappings, effect: detached(s.webhooks, url).effect });
  }
  return uses;
}

/**
 * The source's settings without the receiver's Classic URLs. A source left with no URL cannot keep
 * Classic Webhooks enabled: in mode `classic` its Webhooks are turned off, in mode `both` it keeps
 * sending its Actions mappings only.
 */
export function detached(webhooks: WebhookSettings, url: string): { webhooks: WebhookSettings; effect: ReceiverUse['effect'] } {
  const urls = webhooks.urls.filter((u) => u.url !== url);
  const mode = webhooks.mode ?? 'classic';
  if (urls.length > 0 || !webhooks.enabled || mode === 'actions') return { webhooks: { ...webhooks, urls }, effect: 'url_removed' };
  if (mode === 'both') return { webhooks: { ...webhooks, urls, mode: 'actions' }, effect: 'actions_only' };
  return { webhooks: { ...webhooks, urls, enabled: false }, effect: 'webhooks_off' };
}

/** "checkout (its only URL: Webhooks turned off)", for messages. */
export function describeUse(u: ReceiverUse): string {
  if (u.mappings.length) return `source "${u.sourceName}" (mapping ${u.mappings.map((m) => `"${m}"`).join(', ')})`;
  const effect = u.effect === 'webhooks_off' ? ': its only URL, so its Webhooks would be turned off' : u.effect === 'actions_only' ? ': its only URL, so it would send Actions only' : '';
  return `source "${u.sourceName}"${effect}`;
}

/**
 * The source's settings with the receiver's old URL replaced by its new one (its path or TLS was
 * edited), in Classic URLs and mappings alike; a Classic URL the source already had is not repeated.
 */
export function retargeted(webhooks: WebhookSettings, from: string, to: string): WebhookSettings {
  const had = webhooks.urls.some((u) => u.url === to);
  const urls = webhooks.urls.flatMap((u) => (u.url !== from ? [u] : had ? [] : [{ ...u, url: to }]));
  const mappings = webhooks.mappings?.map((m) => (m.url === from ? { ...m, url: to } : m));
  return { ...webhooks, urls, ...(mappings ? { mappings } : {}) };
}
