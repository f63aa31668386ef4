import type { CallSummary, DeliveryState, UrlOutcome } from './types';

// How a call's per-URL outcomes read at a glance in the inspector's list, in the app and in the rows
// painted before it runs (src/renderer/first-page/first-page.ts, which the build bundles with these).

const FAILED: ReadonlySet<UrlOutcome['state']> = new Set(['failed', 'expired']);

/** "1 of 5 URLs failed" when some but not all of the URLs failed (or expired); otherwise null. */
export function urlOutcomeNote(urls: readonly UrlOutcome[]): string | null {
  const n = partlyFailed(urls);
  return n ? `${n.failed} of ${n.total} URLs failed` : null;
}

/** The same, short, for a narrow list: "⚠1/5". */
export function urlOutcomeNoteShort(urls: readonly UrlOutcome[]): string | null {
  const n = partlyFailed(urls);
  return n ? `⚠${n.failed}/${n.total}` : null;
}

function partlyFailed(urls: readonly UrlOutcome[]): { failed: number; total: number } | null {
  const failed = urls.filter((u) => FAILED.has(u.state)).length;
  return failed === 0 || failed === urls.length ? null : { failed, total: urls.length };
}

/** A call that counts as delivered although a URL failed, expired or is retrying: not plain green. */
export function deliveredWithFailures(call: Pick<CallSummary, 'deliveryState' | 'urls'>): boolean {
  return call.deliveryState === 'delivered' && call.urls.some((u) => FAILED.has(u.state) || u.state === 'retrying');
}

/** When the oldest attempt still out started (epoch ms), or null when none is. */
export function inFlightSince(urls: readonly UrlOutcome[]): number | null {
  let since: number | null = null;
  for (const u of urls) {
    if (u.state !== 'in_flight' || !u.startedAt) continue;
    const t = Date.parse(u.startedAt);
    if (since === null || t < since) since = t;
  }
  return since;
}

/** What each delivery state and URL state reads as (the two share most names). */
export const STATE_LABELS: Record<DeliveryState | UrlOutcome['state'], string> = {
  pending: 'pending',
  in_flight: 'in flight',
  delivered: 'delivered',
  retrying: 'retrying',
  failed: 'failed',
  expired: 'expired',
  canceled: 'canceled',
  dropped: 'dropped',
  not_attempted: 'not attempted',
};

export const URL_STATE_LABELS: Record<UrlOutcome['state'], string> = STATE_LABELS;

// Worst first: the state an Actions-only call shows is the first of these any of its parts has
// (notes/actions-design.md: any in flight > retrying > pending; then failed, expired, canceled as the
// worst; delivered only when all are). The engine's summaries, its list filter's SQL (actions-filter.ts)
// and an opened export's rows all use it.
export const COMBINED_ORDER: readonly DeliveryState[] = ['in_flight', 'retrying', 'pending', 'failed', 'expired', 'canceled', 'delivered'];

/** The combined state of a call's Actions parts (a state not in the order counts as delivered). */
export function combinedState(parts: readonly { state: DeliveryState }[]): DeliveryState {
  let best = COMBINED_ORDER.length - 1;
  for (const p of parts) {
    const k = COMBINED_ORDER.indexOf(p.state);
    if (k >= 0 && k < best) best = k;
  }
  return COMBINED_ORDER[best];
}
