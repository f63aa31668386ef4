import { receiverUses, retargeted, type ReceiverUse } from '../../../shared/receiver-uses';
import type { WebhookSettings } from '../../../shared/types';
import type { Store } from '../store/store';

// What a mock receiver's URL change or removal does to the sources sending to it, in one place for
// every path that changes one: PATCH and DELETE on a receiver, a restart that found its ports taken,
// a config that gives it a new path or TLS.

export interface Rewritten {
  use: ReceiverUse;
  before: WebhookSettings;
  after: WebhookSettings;
}

/** Each used source's webhooks rewritten, in one transaction (detach and retarget share it). */
export function rewriteUses(store: Store, uses: ReceiverUse[], rewrite: (w: WebhookSettings) => WebhookSettings): Rewritten[] {
  return store.transaction(() =>
    uses.map((use) => {
      const before = store.sources.get(use.sourceId)!.webhooks;
      const after = store.sources.update(use.sourceId, { webhooks: rewrite(before) }).webhooks;
      return { use, before, after };
    }),
  );
}

/** A receiver's URL changed from `from` to `to`. */
export interface ReceiverMove {
  receiver: string;
  from: string;
  to: string;
}

export interface SourceFollowed {
  sourceId: string;
  sourceName: string;
  receiver: string;
  to: string;
}

/**
 * The sources sending to a receiver's old URL (pointsAt: query and credentials kept) send to its new
 * one from now on, Classic URLs and mappings alike, in one transaction. `skip`: sources whose URLs
 * are being given anew (a config file's). Deliveries already made keep the URL they were made with
 * (a delivery carries what it sends; README, Decisions).
 */
export function followReceivers(store: Store, moves: ReceiverMove[], skip: (sourceId: string) => boolean = () => false): SourceFollowed[] {
  return store.transaction(() =>
    moves.flatMap((m) => {
      if (m.from === m.to) return [];
      const uses = receiverUses(m.from, store.sources.list()).filter((u) => !skip(u.sourceId));
      rewriteUses(store, uses, (w) => retargeted(w, m.from, m.to));
      return uses.map((u) => ({ sourceId: u.sourceId, sourceName: u.sourceName, receiver: m.receiver, to: m.to }));
    }),
  );
}

/** `source "shop" → http://127.0.0.1:41234/hook (receiver "hook")`, for log lines and notes. */
export function describeFollowed(f: SourceFollowed): string {
  return `source "${f.sourceName}" → ${f.to} (receiver "${f.receiver}")`;
}
