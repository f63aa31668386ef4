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

/**
 * Whether a source's URL sends to the receiver at `receiverUrl` (README, Decisions): the same scheme,
 * host and port as the lab writes them, and the receiver's path. The query, fragment and credentials
 * do not count: the receiver routes on the path alone, so `…/hook?x=1` reaches it too. Another spelling
 * of the host (`localhost`) does not count: the lab never writes one, and it may resolve elsewhere.
 */
export function pointsAt(url: string, receiverUrl: string): boolean {
  if (url === receiverUrl) return true;
  const u = parse(url);
  const r = parse(receiverUrl);
  return !!u && !!r && u.protocol === r.protocol && u.host === r.host && u.pathname === r.pathname;
}

function parse(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

export function receiverUses(url: string, sources: Pick<Source, 'id' | 'name' | 'webhooks'>[]): ReceiverUse[] {
  const uses: ReceiverUse[] = [];
  for (const s of sources) {
    const urls = s.webhooks.urls.flatMap((u, i) => (pointsAt(u.url, url) ? [i] : []));
    const mappings = (s.webhooks.mappings ?? []).filter((m) => typeof m.url === 'string' && pointsAt(m.url, url)).map((m) => m.name);
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
  const urls = webhooks.urls.filter((u) => !pointsAt(u.url, url));
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
 * The source's settings with the receiver's old URL replaced by its new one (its path, TLS or port
 * changed), in Classic URLs and mappings alike. A URL pointing at it (pointsAt) keeps its query,
 * fragment and credentials; a Classic URL the source already had is not repeated.
 */
/** `url` moved from a receiver's old URL to its new one when it points at it (pointsAt); else as it is. */
export function movedUrl(url: string, from: string, to: string): string {
  return pointsAt(url, from) ? moved(url, to) : url;
}

export function retargeted(webhooks: WebhookSettings, from: string, to: string): WebhookSettings {
  const move = (url: string) => movedUrl(url, from, to);
  const seen = new Set<string>();
  const urls = webhooks.urls.flatMap((u) => {
    const url = move(u.url);
    if (url !== u.url && (seen.has(url) || webhooks.urls.some((o) => o.url === url))) return [];
    seen.add(url);
    return [url === u.url ? u : { ...u, url }];
  });
  // A directive URL is left as written: what it resolves to is known per call only.
  const mappings = webhooks.mappings?.map((m) => (typeof m.url === 'string' && pointsAt(m.url, from) ? { ...m, url: moved(m.url, to) } : m));
  return { ...webhooks, urls, ...(mappings ? { mappings } : {}) };
}

/** `url` at the receiver's new origin and path, with its own credentials, query and fragment. */
function moved(url: string, to: string): string {
  const u = new URL(url);
  const t = new URL(to);
  if (!u.username && !u.password && !u.search && !u.hash) return to;
  t.username = u.username;
  t.password = u.password;
  t.search = u.search;
  t.hash = u.hash;
  return t.href;
}
