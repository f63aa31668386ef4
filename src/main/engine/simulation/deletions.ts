import { randomUUID } from 'node:crypto';
import type { DeletionNotification, DeletionRequest } from '../../../shared/simulation.contract';
import type { DeliveryState, Source } from '../../../shared/types';
import { formatTimestamp } from '../../../shared/timestamp';
import type { InternalCall } from '../collector/ingest';
import type { Db } from '../store/database';
import type { Store } from '../store/store';
import type { Feature, SimulationDeps } from './simulation-deps';

export const DELETION_PATH = '/internal/deletion';
const USER_AGENT = 'Webhook Lab (deletion request)';

interface DeletionRow {
  id: string;
  user_id: string;
  created_at: number;
  purge: number;
  purged_calls: number;
  /** JSON: the notices sent, with the source's name as it was (the source may be deleted later). */
  call_ids: string;
}

type Sent = Omit<DeletionNotification, 'deliveryState'>;

/**
 * Deletion requests (SPEC §6): one `delete` notice per source that has received calls for the
 * userId and has Webhooks enabled, stored and forwarded like any call so the inspector shows it.
 */
export class Deletions implements Feature<'listDeletions' | 'createDeletion'> {
  constructor(private readonly deps: SimulationDeps) {}

  handlers() {
    return {
      listDeletions: (): DeletionRequest[] => this.list(),
      createDeletion: (input: { userId: string; purge: boolean }): Promise<DeletionRequest> => this.create(input.userId, input.purge),
    };
  }

  async create(userId: string, purge: boolean): Promise<DeletionRequest> {
    const { store, ingest, now } = this.deps;
    // Affected sources are decided before any purge, which would erase the evidence.
    const affected = affectedSources(store.db, userId)
      .map((id) => store.sources.get(id))
      .filter((s): s is Source => s !== undefined && s.webhooks.enabled && s.webhooks.urls.length > 0);
    // Purge first, then send: the new notices are never part of what is purged.
    if (purge) await settleRounds(store.db, userId);
    const purgedCalls = purge ? await store.writes.run(() => purgeUser(store, userId)) : 0;
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
    const row: DeletionRow = { id: randomUUID(), user_id: userId, created_at: now(), purge: purge ? 1 : 0, purged_calls: purgedCalls, call_ids: JSON.stringify(sent) };
    await store.writes.run(() =>
      store.db
        .prepare('INSERT INTO deletions (id, user_id, created_at, purge, purged_calls, call_ids) VALUES (@id, @user_id, @created_at, @purge, @purged_calls, @call_ids)')
        .run(row),
    );
    this.deps.events.emit({ type: 'deletions.changed' });
    return this.view(row, deliveryStates(store.db, sent.map((s) => s.callId)));
  }

  list(): DeletionRequest[] {
    const rows = this.deps.store.db.prepare('SELECT * FROM deletions ORDER BY created_at DESC, rowid DESC').all() as DeletionRow[];
    const callIds = rows.flatMap((r) => (JSON.parse(r.call_ids) as Sent[]).map((s) => s.callId));
    const states = deliveryStates(this.deps.store.db, callIds);
    return rows.map((r) => this.view(r, states));
  }

  private view(r: DeletionRow, states: Map<number, DeliveryState>): DeletionRequest {
    const notifications = (JSON.parse(r.call_ids) as Sent[]).map((s) => ({ ...s, deliveryState: states.get(s.callId) ?? null }));
    return {
      id: r.id,
      userId: r.user_id,
      createdAt: new Date(r.created_at).toISOString(),
      purge: r.purge === 1,
      purgedCalls: r.purged_calls,
      status: statusOf(notifications),
      notifications,
    };
  }
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

function affectedSources(db: Db, userId: string): string[] {
  const rows = db
    .prepare(`SELECT DISTINCT k.source_id FROM calls c JOIN source_keys k ON k.key = c.source_key
      WHERE c.user_id = ? AND c.type != 'delete'`)
    .all(userId) as { source_id: string }[];
  return rows.map((r) => r.source_id);
}

/** A round in flight ends within the 5 s timeout; rows removed under it would leave stray attempts. */
const SETTLE_MS = 8000;

/**
 * Waits (bounded) until none of the user's deliveries is pending or in flight, so the purge does
 * not pull rows from under a round the dispatcher is running. Retrying ones are simply removed:
 * their next round is read from the table, so removing them cancels it.
 */
async function settleRounds(db: Db, userId: string): Promise<void> {
  const busy = db.prepare(`SELECT 1 FROM deliveries d JOIN calls c ON c.id = d.call_id
    WHERE c.user_id = ? AND d.state IN ('pending', 'in_flight') LIMIT 1`);
  const until = Date.now() + SETTLE_MS;
  while (busy.get(userId) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
}

/**
 * Removes the user's calls with their deliveries and attempts, and their items from the stored
 * request bodies. Earlier deletion notices stay: they are the record of what was asked of receivers.
 * Runs inside one write-queue job (one transaction).
 */
function purgeUser(store: Store, userId: string): number {
  const { db } = store;
  const rows = db
    .prepare("SELECT id, request_id AS requestId, batch_index AS batchIndex FROM calls WHERE user_id = ? AND type != 'delete'")
    .all(userId) as { id: number; requestId: number; batchIndex: number | null }[];
  store.requests.redact(rows);
  return store.calls.remove(rows.map((r) => r.id));
}

function deliveryStates(db: Db, callIds: number[]): Map<number, DeliveryState> {
  if (callIds.length === 0) return new Map();
  const rows = db
    .prepare('SELECT call_id, state FROM deliveries WHERE call_id IN (SELECT value FROM json_each(?))')
    .all(JSON.stringify(callIds)) as { call_id: number; state: DeliveryState }[];
  return new Map(rows.map((r) => [r.call_id, r.state]));
}
