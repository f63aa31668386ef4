import { randomUUID } from 'node:crypto';
import type { SyncResult } from '../../../../shared/simulation.contract';
import type { Json, NormalizedCall, Source } from '../../../../shared/types';
import { formatTimestamp } from '../../../../shared/timestamp';
import type { InternalCall } from '../../collector/ingest';
import { HttpError, notFound } from '../../errors';
import type { Store } from '../../store/store';
import type { SimulationDeps } from '../simulation-deps';
import { AudiencesRepo, type MemberChange, type StoredAudience } from './audiences.repo';
import { loadProfiles } from './profiles';
import { evaluate, type Definition } from './rules';
import { backgroundSlices } from '../../slice-meter';

export const SYNC_PATH = '/internal/audience';
const USER_AGENT = 'Webhook Lab (audience sync)';

// One sync at a time per audience, shared by every caller on the same store (the interval, the
// API, a config import), so two overlapping syncs can never send the same change twice.
const locks = new WeakMap<Store, Map<string, Promise<unknown>>>();

export function withAudienceLock<T>(store: Store, id: string, fn: () => Promise<T>): Promise<T> {
  let mine = locks.get(store);
  if (!mine) locks.set(store, (mine = new Map()));
  const held = mine;
  const prev = held.get(id) ?? Promise.resolve();
  const next = prev.catch(() => undefined).then(fn);
  const tail = next.catch(() => undefined);
  held.set(id, tail);
  tail.then(() => held.get(id) === tail && held.delete(id)).catch(() => undefined);
  return next;
}

/** Whether a sync of this audience is running or queued. */
export function isSyncing(store: Store, id: string): boolean {
  return locks.get(store)?.has(id) ?? false;
}

/** Current members (audience: true) or values (computed trait), by userId. */
export function currentMembers(store: Store, def: Definition, now: number): Map<string, Json> {
  const profiles = loadProfiles(store, def.type === 'computed_trait' && def.compute.kind === 'last_property' ? { propertiesOf: def.compute.event } : {});
  return evaluate(def, profiles.values(), now);
}

interface Change extends MemberChange {
  kind: 'entered' | 'exited' | 'changed';
}

/** Entered and changed users get their value; exited ones false (audience) or null (computed trait). */
export function diffMembers(previous: Map<string, string>, current: Map<string, Json>): Change[] {
  const changes: Change[] = [];
  for (const [userId, value] of current) {
    const before = previous.get(userId);
    if (before === undefined) changes.push({ userId, value, kind: 'entered' });
    else if (before !== JSON.stringify(value)) changes.push({ userId, value, kind: 'changed' });
  }
  for (const userId of previous.keys()) if (!current.has(userId)) changes.push({ userId, value: undefined, kind: 'exited' });
  return changes.sort((a, b) => (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0));
}

/**
 * Evaluates the audience now, sends one identify per changed user through each chosen source's
 * Webhooks destination, then records the new membership. Sending first means a failure leaves
 * the old membership, so the next sync sends the same changes again.
 */
export function syncAudience(deps: SimulationDeps, id: string): Promise<SyncResult> {
  return withAudienceLock(deps.store, id, async () => {
    const repo = deps.store.featureRepo((db) => new AudiencesRepo(db));
    const a = repo.get(id);
    if (!a) throw notFound(`audience ${id}`);
    const sources = a.sourceIds.map((sid) => deps.store.sources.get(sid)).filter((s): s is Source => s !== undefined);
    if (sources.length === 0) throw new HttpError(409, `sourceIds: none of the sources of audience "${a.name}" exists any more`);
    const now = deps.now();
    const changes = backgroundSlices.time('audience sync', () => diffMembers(repo.members(id), currentMembers(deps.store, a.definition, now)));
    const calls = changes.flatMap((c) => sources.map((source) => identifyFor(a, c, source, now)));
    const stored = calls.length > 0 ? await deps.ingest.inject(calls) : { calls: [] };
    await deps.store.writes.run(() => repo.applySync(id, changes, now));
    deps.events.emit({ type: 'audiences.changed' });
    return {
      audienceId: id,
      sent: stored.calls.length,
      entered: changes.filter((c) => c.kind === 'entered').length,
      exited: changes.filter((c) => c.kind === 'exited').length,
      changed: changes.filter((c) => c.kind === 'changed').length,
      callIds: stored.calls.map((c) => c.id),
    };
  });
}

function identifyFor(a: StoredAudience, c: Change, source: Source, now: number): InternalCall {
  const exitValue = a.type === 'audience' ? false : null;
  const at = formatTimestamp(now);
  const call: NormalizedCall = {
    type: 'identify',
    messageId: randomUUID(),
    userId: c.userId,
    traits: { [a.key]: c.value === undefined ? exitValue : c.value },
    context: { personas: { computation_class: a.type === 'audience' ? 'audience' : 'trait', computation_key: a.key, computation_id: a.id } },
    timestamp: at,
    receivedAt: at,
  };
  return { source, call, path: SYNC_PATH, userAgent: USER_AGENT };
}
