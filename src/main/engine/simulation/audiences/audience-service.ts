import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { audienceConfigSchema, audienceInputSchema, audienceUpdateSchema, Audience, AudienceMember, AudienceRule, ComputedTraitDef, SyncResult } from '../../../../shared/simulation.contract';
import { ValidationError, type FieldError } from '../../../../shared/validation-error';
import { conflict, HttpError, notFound } from '../../errors';
import type { Feature, SimulationDeps } from '../simulation-deps';
import { AudiencesRepo, toAudience } from './audiences.repo';
import { currentMembers, isSyncing, syncAudience, withAudienceLock } from './audience-sync';
import { audienceKey, type Definition } from './rules';
import { naturalOrder } from '../../../../shared/natural-order';

type Ops = 'listAudiences' | 'createAudience' | 'updateAudience' | 'listAudienceMembers' | 'deleteAudience' | 'previewAudience' | 'syncAudience';
type AudienceInput = z.output<typeof audienceInputSchema>;
type AudienceUpdate = z.output<typeof audienceUpdateSchema>;
export type AudienceConfigEntry = z.output<typeof audienceConfigSchema>;

const PREVIEW_LIMIT = 1000;
/** How often due interval syncs are looked for; intervals are at least 1 s. */
const TICK_MS = 200;

/** A 404 that names the offending input field, like a validation error does. */
class FieldNotFound extends HttpError {
  readonly fields: FieldError[];
  constructor(path: string, message: string) {
    super(404, `${path}: ${message}`);
    this.fields = [{ path, message }];
  }
}

/**
 * Audiences and computed traits (SPEC §6). Interval syncs are driven from the table (one ticker
 * looks for due audiences), so audiences created or changed by a config import need no wiring here.
 */
export class Audiences implements Feature<Ops> {
  private ticker: NodeJS.Timeout | null = null;
  private readonly running = new Set<Promise<unknown>>();
  /** After a failed interval sync, wait a full interval before trying again (no log storm). */
  private readonly backoffUntil = new Map<string, number>();
  private readonly repo: AudiencesRepo;

  constructor(private readonly deps: SimulationDeps) {
    this.repo = deps.store.featureRepo((db) => new AudiencesRepo(db));
  }

  start(): void {
    this.ticker ??= setInterval(() => this.tick(), TICK_MS);
    this.ticker.unref();
  }

  async stop(): Promise<void> {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = null;
    await Promise.allSettled([...this.running]);
  }

  list(): Audience[] {
    return this.repo.list().map(toAudience);
  }

  /**
   * After a config import committed (planAudiencesConfig): audiences it created are synced at once,
   * as one created from the API is; changed ones send their differences at their next sync.
   */
  async configApplied(applied: { created: string[]; updated: number }): Promise<void> {
    if (applied.created.length + applied.updated > 0) this.deps.events.emit({ type: 'audiences.changed' });
    for (const id of applied.created) await syncAudience(this.deps, id);
  }

  handlers() {
    const { deps, repo } = this;
    return {
      listAudiences: (): Audience[] => this.list(),
      createAudience: async (input: AudienceInput) => {
        input.sourceIds.forEach((id, i) => {
          if (!deps.store.sources.get(id)) throw new FieldNotFound(`sourceIds[${i}]`, `no source with id "${id}"`);
        });
        const id = await createStored(deps, { name: input.name, definition: definitionOf(input), sourceIds: input.sourceIds, syncIntervalMs: input.syncIntervalMs ?? null });
        const sync = await syncAudience(deps, id);
        return { ...toAudience(repo.get(id)!), sync };
      },
      updateAudience: async (input: AudienceUpdate) => {
        input.sourceIds?.forEach((sid, i) => {
          if (!deps.store.sources.get(sid)) throw new FieldNotFound(`sourceIds[${i}]`, `no source with id "${sid}"`);
        });
        // Inside the audience's lock: an interval sync never evaluates half an edit.
        await withAudienceLock(deps.store, input.id, () => updateStored(deps, input));
        deps.events.emit({ type: 'audiences.changed' });
        const sync = await syncAudience(deps, input.id);
        return { ...toAudience(repo.get(input.id)!), sync };
      },
      listAudienceMembers: ({ id, limit }: { id: string; limit: number }) => {
        if (!repo.get(id)) throw notFound(`audience ${id}`);
        return repo.memberList(id, limit) as { members: AudienceMember[]; total: number };
      },
      deleteAudience: async ({ id }: { id: string }) => {
        const removed = await deps.store.writes.run(() => repo.delete(id));
        if (!removed) throw notFound(`audience ${id}`);
        deps.events.emit({ type: 'audiences.changed' });
        return { ok: true as const };
      },
      previewAudience: (input: { type: 'audience' | 'computed_trait'; rule?: AudienceRule; compute?: ComputedTraitDef }) => {
        const members = currentMembers(deps.store, definitionOf(input), deps.now());
        const ids = [...members.keys()].sort(naturalOrder);
        const list: AudienceMember[] = ids.slice(0, PREVIEW_LIMIT).map((userId) => ({ userId, value: members.get(userId) as AudienceMember['value'] }));
        return { members: list, total: ids.length };
      },
      syncAudience: ({ id }: { id: string }): Promise<SyncResult> => syncAudience(deps, id),
    };
  }

  private tick(): void {
    const now = this.deps.now();
    let due: string[];
    try {
      due = this.repo.due(now);
    } catch {
      return; // the store closed under us at shutdown
    }
    for (const id of due) {
      if (isSyncing(this.deps.store, id) || (this.backoffUntil.get(id) ?? 0) > now) continue;
      const p = syncAudience(this.deps, id)
        .then(() => this.backoffUntil.delete(id))
        .catch((err: unknown) => {
          const interval = this.repo.get(id)?.syncIntervalMs ?? 60_000;
          this.backoffUntil.set(id, this.deps.now() + interval);
          this.deps.log(`audience sync failed (${id}): ${(err as Error).message}`);
        })
        .finally(() => this.running.delete(p));
      this.running.add(p);
    }
  }
}

function definitionOf(input: { type: 'audience' | 'computed_trait'; rule?: AudienceRule; compute?: ComputedTraitDef }, prefix = ''): Definition {
  if (input.type === 'audience') {
    if (!input.rule) throw new ValidationError([{ path: `${prefix}rule`, message: 'an audience needs a rule' }]);
    return { type: 'audience', rule: input.rule };
  }
  if (!input.compute) throw new ValidationError([{ path: `${prefix}compute`, message: 'a computed trait needs a computation' }]);
  return { type: 'computed_trait', compute: input.compute };
}

interface NewAudience {
  name: string;
  definition: Definition;
  sourceIds: string[];
  syncIntervalMs: number | null;
}

/** Inserts (checks and insert in one write job, so two creates cannot both pass the checks). */
async function createStored(deps: SimulationDeps, a: NewAudience): Promise<string> {
  const repo = deps.store.featureRepo((db) => new AudiencesRepo(db));
  const id = randomUUID();
  const key = audienceKey(a.name);
  await deps.store.writes.run(() => {
    if (repo.byName(a.name)) throw conflict(`name: an audience named "${a.name}" already exists`);
    const sameKey = repo.byKey(key);
    // Two audiences writing the same trait key would overwrite each other at the receiver.
    if (sameKey) throw conflict(`name: its key "${key}" is already used by "${sameKey.name}"`);
    repo.insert({ ...a, id, key }, deps.now());
  });
  deps.events.emit({ type: 'audiences.changed' });
  return id;
}

/** Applies an edit over the stored audience (fields left out keep their value). */
async function updateStored(deps: SimulationDeps, input: AudienceUpdate): Promise<void> {
  const repo = deps.store.featureRepo((db) => new AudiencesRepo(db));
  const current = repo.get(input.id);
  if (!current) throw notFound(`audience ${input.id}`);
  const type = input.type ?? current.type;
  const definition = definitionOf({
    type,
    rule: input.rule ?? (current.definition.type === 'audience' ? current.definition.rule : undefined),
    compute: input.compute ?? (current.definition.type === 'computed_trait' ? current.definition.compute : undefined),
  });
  const next = {
    definition,
    sourceIds: input.sourceIds ?? current.sourceIds,
    syncIntervalMs: input.syncIntervalMs === undefined ? current.syncIntervalMs : input.syncIntervalMs,
  };
  await deps.store.writes.run(() => {
    if (input.name !== undefined && input.name !== current.name) {
      const other = repo.byName(input.name);
      if (other && other.id !== current.id) throw conflict(`name: an audience named "${input.name}" already exists`);
      repo.rename(current.id, input.name);
    }
    repo.updateDefinition(current.id, next);
  });
}

/** A problem of a config file's entry; `conflict`: it clashes with what is stored (409, else 400). */
export interface ConfigProblem {
  path: string;
  message: string;
  conflict?: boolean;
}

/**
 * The config file's `audiences` (SPEC §8 style: idempotent, matched by name), checked whole against
 * the stored audiences before anything is written: `write` (run inside the import's one transaction)
 * then cannot fail for what is in the file. A missing audience is created (and synced once the import
 * committed, see Audiences.configApplied); an existing one whose definition, sources or interval
 * differ is updated (its next sync sends the differences). Sources are named: a name must be a
 * stored source or one of the file's (`sourceNames`), whose ids `sourceId` gives at write time.
 */
export function planAudiencesConfig(
  repo: AudiencesRepo,
  entries: AudienceConfigEntry[],
  sourceNames: ReadonlySet<string>,
): { problems: ConfigProblem[]; write: (sourceId: (name: string) => string, now: number) => { created: string[]; updated: number } } {
  const problems: ConfigProblem[] = [];
  const newKeys = new Map<string, string>();
  const names = new Set<string>();
  const planned = entries.map((e, i) => {
    e.sources.forEach((name, j) => {
      if (!sourceNames.has(name)) problems.push({ path: `audiences[${i}].sources[${j}]`, message: `no source named "${name}"` });
    });
    let definition: Definition | undefined;
    try {
      definition = definitionOf(e, `audiences[${i}].`);
    } catch (err) {
      problems.push(...(err as ValidationError).fields);
    }
    if (names.has(e.name)) problems.push({ path: `audiences[${i}].name`, message: `duplicate audience name "${e.name}"` });
    names.add(e.name);
    const existing = repo.byName(e.name);
    if (!existing) {
      // Two audiences writing the same trait key would overwrite each other at the receiver.
      const key = audienceKey(e.name);
      const stored = repo.byKey(key);
      if (stored) problems.push({ path: `audiences[${i}].name`, message: `its key "${key}" is already used by "${stored.name}"`, conflict: true });
      else if (newKeys.has(key)) problems.push({ path: `audiences[${i}].name`, message: `its key "${key}" is also the key of "${newKeys.get(key)}"` });
      newKeys.set(key, e.name);
    }
    return { entry: e, existing, key: audienceKey(e.name), definition: definition! };
  });
  const write = (sourceId: (name: string) => string, now: number) => {
    const out = { created: [] as string[], updated: 0 };
    for (const { entry, existing, key, definition } of planned) {
      const a = { definition, sourceIds: entry.sources.map(sourceId), syncIntervalMs: entry.syncIntervalMs ?? null };
      if (!existing) {
        const id = randomUUID();
        repo.insert({ ...a, id, name: entry.name, key }, now);
        out.created.push(id);
      } else if (JSON.stringify([existing.definition, existing.sourceIds, existing.syncIntervalMs]) !== JSON.stringify([a.definition, a.sourceIds, a.syncIntervalMs])) {
        repo.updateDefinition(existing.id, a);
        out.updated++;
      }
    }
    return out;
  };
  return { problems, write };
}
