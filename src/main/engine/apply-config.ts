import { randomUUID } from 'node:crypto';
import { sidesStopped, stoppedReason, type StoppedSide } from '../../shared/actions/mode';
import type { Config, ConfigWarning } from '../../shared/config.schema';
import type { MockReceiver } from '../../shared/mock-receiver.schema';
import type { Source } from '../../shared/types';
import { describeErrors, type FieldError } from '../../shared/validation-error';
import type { Store } from './store/store';
import { HttpError } from './errors';
import { ReceiversRepo } from './simulation/receivers.repo';
import { AudiencesRepo } from './simulation/audiences/audiences.repo';
import { planAudiencesConfig, type ConfigProblem } from './simulation/audiences/audience-service';
import type { TrackingPlans } from './tracking-plans/service';
import { resolveReceiverRefs, type LabAddresses } from './config-receivers';
import { configKeyCheck } from './sw-key-policy';
import { describeFollowed, followReceivers, type ReceiverMove, type SourceFollowed } from './simulation/receiver-moves';

/** A config that cannot be applied to what is stored; nothing of it was. 409 when it clashes with stored data, else 400. */
export class ConfigRefused extends HttpError {
  readonly fields: FieldError[];
  constructor(problems: ConfigProblem[]) {
    const fields = problems.map(({ path, message }) => ({ path, message }));
    super(problems.some((p) => p.conflict) ? 409 : 400, describeErrors(fields));
    this.fields = fields;
  }
}

export interface ConfigApplied {
  /** Sources the file turned Webhooks off for, or switched to a mode that no longer sends a side: the caller cancels those unfinished deliveries. */
  turnedOff: { sourceId: string; side: StoppedSide }[];
  /** Whether the file named any mock receiver (the running host reloads them). */
  receivers: boolean;
  audiences: { created: string[]; updated: number };
  /** What it adjusted: each mock receiver named in a source, and the URL it got here (config-receivers.ts); each source that followed a receiver the file moved. */
  warnings: ConfigWarning[];
}

/**
 * Applies a config (already parsed by its schema) whole or not at all. Everything in it is first
 * checked against what is stored, every problem named by its path (`sources[1].writeKey: already
 * used by source "checkout"`), and then written in ONE SQLite transaction: sources, settings, mock
 * receivers and audiences. Idempotent: sources, receivers and audiences are matched by name; a write
 * key or webhook settings given replace the stored ones, anything not given is left as it is. A value
 * held by another stored entry (a write key, a receiver's path or id, an audience's trait key) is
 * refused, even when the file gives that entry a new one: apply such a swap in two steps.
 * Synchronous: nothing else writes between the checks and the transaction.
 */
export function applyConfig(store: Store, plans: TrackingPlans, config: Config, now: number, lab: LabAddresses, staged?: StagedSources, planned?: ConfigPlan): ConfigApplied {
  // `planned`: made by the caller in this same turn of the loop, so nothing was written since.
  const plan = planned ?? planConfig(store, plans, config, now, lab);
  // The plans' mirror is read again whether the transaction commits or rolls back.
  try {
    const applied = applyInTransaction(store, config, plan, now, staged);
    const followed: ConfigWarning[] = applied.followed.map((f) => ({
      path: plan.moves.find((m) => m.receiver === f.receiver)!.at,
      code: 'mock_receiver_resolved',
      message: `${describeFollowed(f)}: it sent to the receiver's old URL, which would answer 404`,
    }));
    return { turnedOff: applied.turnedOff, receivers: applied.receivers, audiences: applied.audiences, warnings: [...plan.resolved.warnings, ...followed, ...plan.keyWarnings] };
  } finally {
    plan.plans.reload();
  }
}

export type ConfigPlan = ReturnType<typeof planConfig>;

/**
 * Everything a config is checked for against what is stored, each problem named by its path; throws
 * ConfigRefused when there is one. What it returns is what the transaction writes. Writes nothing.
 */
export function planConfig(store: Store, plans: TrackingPlans, config: Config, now: number, lab: LabAddresses) {
  const receivers = store.featureRepo((db) => new ReceiversRepo(db));
  const audiencesRepo = store.featureRepo((db) => new AudiencesRepo(db));
  const problems: ConfigProblem[] = [];

  config.sources.forEach((s, i) => {
    const holder = s.writeKey === undefined ? undefined : store.sources.byWriteKey(s.writeKey);
    if (holder && holder.name !== s.name) problems.push({ path: `sources[${i}].writeKey`, message: `already used by source "${holder.name}"`, conflict: true });
  });
  const stored = receivers.definitions();
  // A source may name a mock receiver instead of its URL: this lab's URL for it is written.
  const resolved = resolveReceiverRefs(config, stored, lab);
  problems.push(...resolved.problems);
  // A short Standard Webhooks key: refused when it is new to a stored source, else kept with a warning (README, Decisions).
  const keyWarnings: ConfigWarning[] = [];
  config.sources.forEach((s, i) => {
    const check = configKeyCheck(i, resolved.webhooks[i] ?? s.webhooks, store.sources.byName(s.name));
    if (check.problem) problems.push(check.problem);
    if (check.warning) keyWarnings.push(check.warning);
  });
  // A stored receiver the file gives a new path or TLS moves: the stored sources sending to it follow
  // it (as with PATCH), except those whose webhooks the file gives: the file's URLs are applied as given.
  const moves: (ReceiverMove & { at: string })[] = [];
  const receiverUrl = (r: Pick<MockReceiver, 'path' | 'tls'>) => lab.receiverBase(r.tls ?? false) + r.path;
  const receiverIds = config.mockReceivers.map((e, i) => {
    const existing = stored.find((r) => r.name === e.name);
    if (existing) moves.push({ receiver: e.name, from: receiverUrl(existing), to: receiverUrl(e), at: `mockReceivers[${i}].path` });
    const other = stored.find((r) => r.name !== e.name && r.path === e.path);
    if (other) problems.push({ path: `mockReceivers[${i}].path`, message: `"${e.path}" is used by receiver "${other.name}"`, conflict: true });
    const given = 'id' in e && typeof e.id === 'string' ? e.id : undefined;
    const sameId = !existing && given ? stored.find((r) => r.id === given) : undefined;
    if (sameId) problems.push({ path: `mockReceivers[${i}].id`, message: `is the id of receiver "${sameId.name}"`, conflict: true });
    return existing?.id ?? given ?? randomUUID();
  });
  const sourceNames = new Set([...store.sources.list().map((s) => s.name), ...config.sources.map((s) => s.name)]);
  const audiences = planAudiencesConfig(audiencesRepo, config.audiences, sourceNames);
  problems.push(...audiences.problems);
  const trackingPlans = plans.planConfig(config, (name) => store.sources.byName(name)?.id, now);
  problems.push(...trackingPlans.problems);
  if (problems.length > 0) throw new ConfigRefused(problems);
  return { receivers, resolved, keyWarnings, moves, receiverIds, audiences, plans, writeTrackingPlans: trackingPlans.write };
}

function applyInTransaction(store: Store, config: Config, plan: ConfigPlan, now: number, staged: StagedSources | undefined): Omit<ConfigApplied, 'warnings'> & { followed: SourceFollowed[] } {
  const { receivers, receiverIds, audiences, moves } = plan;
  const webhooks = plan.resolved.webhooks;
  return store.transaction(() => {
    // Sources written ahead (import-config.ts) become sources first; below, each is an unchanged update.
    if (staged) store.sources.adopt(staged.importId, staged.sources);
    const turnedOff: ConfigApplied['turnedOff'] = [];
    // The sources written ahead were written as the config gives them: as good as unchanged.
    const unchanged = staged && staged.receiversWere === JSON.stringify(receivers.definitions()) ? new Set([...staged.unchanged, ...staged.sources]) : new Set<Source>();
    config.sources.forEach((s, i) => {
      const existing = store.sources.byName(s.name);
      // Found unchanged by the config before this turn, and still the same object: nothing to do.
      if (existing && unchanged.has(existing)) return;
      if (existing) {
        const updated = store.sources.update(existing.id, { writeKey: s.writeKey, webhooks: webhooks[i], collectorFaults: s.collectorFaults });
        const side = sidesStopped(existing.webhooks, updated.webhooks);
        if (side) turnedOff.push({ sourceId: existing.id, side });
      } else store.sources.create({ name: s.name, writeKey: s.writeKey, webhooks: webhooks[i], collectorFaults: s.collectorFaults }, now);
    });
    if (Object.keys(config.settings).length > 0) store.settings.apply(config.settings);
    config.mockReceivers.forEach((e, i) => receivers.save({ ...e, id: receiverIds[i] } as MockReceiver, now));
    const given = new Set(config.sources.filter((s) => s.webhooks).map((s) => store.sources.byName(s.name)?.id));
    const followed = followReceivers(store, moves, (id) => given.has(id));
    const sourceId = (name: string) => store.sources.byName(name)?.id ?? '';
    plan.writeTrackingPlans();
    return { turnedOff, receivers: config.mockReceivers.length > 0, audiences: audiences.write(sourceId, now), followed };
  });
}

/** The new sources of a config written ahead of its transaction (import-config.ts), with their import's id. */
export interface StagedSources {
  importId: string;
  sources: Source[];
  /** Stored sources the config gives as they are (a source's object is replaced whenever it changes)... */
  unchanged: Set<Source>;
  /** ...with the mock receivers as they were then (JSON): the URLs a config names them by resolve to theirs. */
  receiversWere: string;
}

/** Cancels what a config turned off (turnedOff), with the reason each delivery shows. */
export async function cancelTurnedOff(applied: ConfigApplied, cancel: (sourceId: string, reason: string, side: StoppedSide) => Promise<number>): Promise<void> {
  for (const t of applied.turnedOff) await cancel(t.sourceId, stoppedReason(t.side, ' (config file)'), t.side);
}
