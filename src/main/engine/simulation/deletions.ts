import { randomUUID } from 'node:crypto';
import type { DeletionNotification, DeletionRequest } from '../../../shared/simulation.contract';
import { forwardsClassic, sendsClassic } from '../../../shared/actions/mode';
import type { DeliveryState, Source } from '../../../shared/types';
import { formatTimestamp } from '../../../shared/timestamp';
import type { InternalCall } from '../collector/ingest';
import type { Store } from '../store/store';
import { DeletionsRepo, type DeletionRow } from './deletions.repo';
import type { Feature, SimulationDeps } from './simulation-deps';

export const DELETION_PATH = '/internal/deletion';
const USER_AGENT = 'Webhook Lab (deletion request)';

type Sent = Omit<DeletionNotification, 'deliveryState'>;
type Skipped = DeletionRequest['skipped'][number];
/** What a request's row keeps per source: a notice sent, or the reason none was (rows before skips hold notices only). */
type Entry = Sent | (Skipped & { callId?: undefined });

export const ACTIONS_NO_DELETE = 'sends only Webhooks (Actions), which has no delete action: Segment sends no deletion notice through Actions mappings';
const NO_URL = 'has Webhooks enabled but no Classic URL to send the notice to';

/**
 * Deletion requests (SPEC §6): one `delete` notice per source that has received calls for the
 * userId and has Webhooks enabled, stored and forwarded like any call so the inspector shows it. The
 * notice is a Classic request: Segment's Actions webhook destination has no delete action, so a
 * source sending only Actions gets none (its Classic URLs, if any are left, are not used), and the
 * request says so per source (skipped). A source in `both` mode gets the Classic notice.
 */
export class Deletions implements Feature<'listDeletions' | 'createDeletion'> {
  private readonly repo: DeletionsRepo;

  constructor(private readonly deps: SimulationDeps) {
    this.repo = deps.store.featureRepo((db) => new DeletionsRepo(db));
  }

  handlers() {
    return {
      listDeletions: (): DeletionRequest[] => this.list(),
      createDeletion: (input: { userId: string; purge: boolean }): Promise<DeletionRequest> => this.create(input.userId, input.purge),
    };
  }

  async create(userId: string, purge: boolean): Promise<DeletionRequest> {
    const { store, ingest, now } = this.deps;
    // Affected sources are decided before any purge, which would erase the evidence.
    const enabled = store.userCalls
      .sourcesOf(userId)
      .map((id) => store.sources.get(id))
      .filter((s): s is Source => s !== undefined && s.webhooks.enabled);
    const affected = enabled.filter((s) => forwardsClassic(s.webhooks));
    const skipped: Skipped[] = enabled
      .filter((s) => !affected.includes(s))
      .map((s) => ({ sourceId: s.id, sourceName: s.name, reason: sendsClassic(s.webhooks) ? NO_URL : ACTIONS_NO_DELETE }));
    // Purge first, then send: the new notices are never part of what is purged.
    if (purge) await settleRounds(store, userId);
    // One write job (one transaction); earlier deletion notices are kept (see CallErasure.ofUser).
    const purgedCalls = purge ? await store.writes.run((tx) => store.erasure.ofUser(tx, userId)) : 0;
    if (purgedCalls > 0) this.deps.events.emit({ type: 'calls.removed', count: purgedCalls });

    const at = formatTimestamp(now());
    const calls: InternalCall[] = affected.map((source) => ({
      source,
      call: { type: 'delete', messageId: randomUUID(), userId, timestamp: at, receivedAt: at },
      path: DELETION_PATH,
      userAgent: USER_AGENT,
    }));
    const stored = calls.length > 0 ? await ingest.inject(calls) : { calls: [] };
    const sent: Sent[] = stored.calls.map((c, i) => ({ sourceId: affected[i].id, sourceName: affected[i].name, callId: c.id }));
    const entries: Entry[] = [...sent, ...skipped];
    const row: DeletionRow = { id: randomUUID(), user_id: userId, created_at: now(), purge: purge ? 1 : 0, purged_calls: purgedCalls, call_ids: JSON.stringify(entries) };
    await store.writes.run(() => this.repo.add(row));
    this.deps.events.emit({ type: 'deletions.changed' });
    return this.view(row, store.outcomes.statesOf(sent.map((s) => s.callId)));
  }

  list(): DeletionRequest[] {
    const rows = this.repo.list();
    const callIds = rows.flatMap((r) => sentOf(r).map((s) => s.callId));
    const states = this.deps.store.outcomes.statesOf(callIds);
    return rows.map((r) => this.view(r, states));
  }

  private view(r: DeletionRow, states: Map<number, DeliveryState>): DeletionRequest {
    const notifications = sentOf(r).map((s) => ({ ...s, deliveryState: states.get(s.callId) ?? null }));
    const skipped = (JSON.parse(r.call_ids) as Entry[]).filter((e): e is Skipped => e.callId === undefined);
    return {
      id: r.id,
      userId: r.user_id,
      createdAt: formatTimestamp(r.created_at),
      purge: r.purge === 1,
      purgedCalls: r.purged_calls,
      status: statusOf(notifications),
      notifications,
      skipped,
    };
  }
}

function sentOf(r: DeletionRow): Sent[] {
  return (JSON.parse(r.call_ids) as Entry[]).filter((e): e is Sent => e.callId !== undefined);
}

/** done when every notice was delivered, failed when one ended without delivery, else pending. */
export function statusOf(notifications: DeletionNotification[]): DeletionRequest['status'] {
  if (notifications.length === 0) return 'no_sources';
  const states = notifications.map((n) => n.deliveryState);
  if (states.some((s) => s === 'failed' || s === 'expired' || s === 'dropped')) return 'failed';
  // A delivery row missing (null) was pruned by retention, which only removes finished ones.
  if (states.every((s) => s === 'delivered' || s === null)) return 'done';
  return 'pending';
}

/** A round in flight ends within the 5 s timeout; rows removed under it would leave stray attempts. */
const SETTLE_MS = 8000;

/**
 * Waits (bounded) until none of the user's deliveries is pending or in flight, so the purge does
 * not pull rows from under a round the dispatcher is running. Retrying ones are simply removed:
 * their next round is read from the table, so removing them cancels it.
 */
async function settleRounds(store: Store, userId: string): Promise<void> {
  const until = Date.now() + SETTLE_MS;
  while (store.userCalls.hasRoundUnderway(userId) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
}
