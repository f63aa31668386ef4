import { actionsUrlWarning } from '../../../shared/actions/private-url';
import type { Attempt, CallDetail, Delivery, UrlOutcome } from '../../../shared/types';

// How the call detail reads a delivery: its title, which of the call's URL outcomes are its own,
// where the call sits in an Actions batch, and the per-item statuses a receiver may answer a batch
// with. React-free so it is unit-tested.

type D = Pick<Delivery, 'id' | 'kind' | 'mapping' | 'method' | 'type' | 'callIds' | 'itemCount' | 'urls'>;

/** `besideActions`: the call also has Actions deliveries, so the Classic one is named as such. */
export function deliveryTitle(d: D, besideActions = false): string {
  if (d.kind === 'actions') return `Webhooks (Actions) · ${d.mapping ?? '?'} · ${d.method}`;
  if (d.type === 'delete') return 'Webhooks delivery (delete notification)';
  return besideActions ? 'Webhooks (Classic) · POST' : 'Webhooks delivery';
}

/**
 * How many URL timelines a delivery shows: its URLs, or more when an attempt names a later index.
 * A loop, not Math.max(...attempts): a delivery held over 100,000 attempts before rounds were capped
 * (and replays still add), and spreading that many arguments overflows the stack.
 */
export function urlCountOf(d: { urls: readonly unknown[]; attempts: readonly Pick<Attempt, 'urlIndex'>[] }): number {
  let count = d.urls.length;
  for (const a of d.attempts) if (a.urlIndex + 1 > count) count = a.urlIndex + 1;
  return count;
}

/** The outcomes of the call's summary that belong to this delivery, in its URL order. */
export function outcomesOf(d: Pick<Delivery, 'id' | 'kind'>, urls: readonly UrlOutcome[]): UrlOutcome[] {
  if (d.kind === 'actions') return urls.filter((u) => u.via?.deliveryId === d.id);
  return urls.filter((u) => !u.via);
}

/** Actions parts of the call still waiting in a mapping's batch (no delivery yet). */
export function waitingParts(urls: readonly UrlOutcome[]): UrlOutcome[] {
  return urls.filter((u) => u.via && u.via.deliveryId === null);
}

/** "Segment could not reach this URL from its cloud: …" for an Actions delivery's URL. */
export function deliveryUrlWarning(d: D): string | null {
  if (d.kind !== 'actions') return null;
  const url = d.urls[0]?.url;
  return url ? actionsUrlWarning(url) : null;
}

/** The 0-based position of `callId` in an Actions batch, or null when the delivery is no batch. */
export function batchPosition(d: Pick<Delivery, 'callIds'>, callId: number): number | null {
  const i = d.callIds?.indexOf(callId) ?? -1;
  return i >= 0 ? i : null;
}

/**
 * Per-item statuses of a batch answer: a JSON array exactly as long as the batch, of numbers or of
 * objects with a numeric `status` (what the mock receivers send, and a common receiver convention).
 * null when the body is anything else.
 */
export function itemStatuses(responseBody: string | null, itemCount: number): number[] | null {
  if (!responseBody) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(responseBody);
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || parsed.length !== itemCount) return null;
  const out: number[] = [];
  for (const item of parsed) {
    const s = typeof item === 'number' ? item : item !== null && typeof item === 'object' ? (item as { status?: unknown }).status : undefined;
    if (typeof s !== 'number' || !Number.isInteger(s)) return null;
    out.push(s);
  }
  return out;
}

/** The per-item statuses of the latest attempt that carries them. */
export function latestItemStatuses(d: Pick<Delivery, 'itemCount'> & { attempts: Attempt[] }): number[] | null {
  const answered = d.attempts.filter((a) => a.responseStatus !== null).sort((a, b) => b.startedAt.localeCompare(a.startedAt) || b.id - a.id);
  for (const a of answered) {
    const s = itemStatuses(a.responseBody, d.itemCount);
    if (s) return s;
  }
  return null;
}

/** The Actions deliveries of a call's detail that carry it in a batch, with its position. */
export function batchMemberships(detail: Pick<CallDetail, 'deliveries'>, callId: number): { deliveryId: number; mapping: string; item: number; size: number }[] {
  const out: { deliveryId: number; mapping: string; item: number; size: number }[] = [];
  for (const d of detail.deliveries) {
    if (d.kind !== 'actions') continue;
    const item = batchPosition(d, callId);
    if (item !== null) out.push({ deliveryId: d.id, mapping: d.mapping ?? '?', item, size: d.callIds!.length });
  }
  return out;
}
