import { randomBytes, randomUUID } from 'node:crypto';
import type { Source, WebhookSettings } from '../../../shared/types';
import type { CollectorFaults } from '../../../shared/collector-faults';
import type { Db } from './database';
import { conflict, notFound } from '../errors';
import { formatTimestamp } from '../../../shared/timestamp';

interface SourceRow {
  id: string;
  name: string;
  write_key: string;
  created_at: number;
  webhooks: string;
}

export function newWriteKey(): string {
  return `wk_${randomBytes(18).toString('base64url')}`;
}

const noWebhooks = (): WebhookSettings => ({ enabled: false, urls: [] });

/**
 * Sources are few and read on every request: kept in memory, written through to SQLite. Except their
 * collectorFaults, kept in memory only: a fault left on would otherwise make the lab look broken at
 * the next start (the config file sets them at every start; README, Decisions).
 */
export class SourcesRepo {
  private byId = new Map<string, Source>();
  private byKey = new Map<string, Source>();
  private readonly insertStmt;
  private readonly updateStmt;
  private readonly deleteStmt;

  /** onCreate: gives a new source its key for call rows (source-keys.ts) with the source itself. */
  constructor(
    private readonly db: Db,
    private readonly onCreate: (id: string) => void = () => {},
  ) {
    this.insertStmt = db.prepare(
      'INSERT INTO sources (id, name, write_key, created_at, webhooks) VALUES (@id, @name, @write_key, @created_at, @webhooks)',
    );
    this.updateStmt = db.prepare('UPDATE sources SET name = @name, write_key = @write_key, webhooks = @webhooks WHERE id = @id');
    this.deleteStmt = db.prepare('DELETE FROM sources WHERE id = ?');
    for (const row of db.prepare('SELECT * FROM sources ORDER BY created_at, name').all() as SourceRow[]) {
      this.index(fromRow(row));
    }
  }

  list(): Source[] {
    return [...this.byId.values()];
  }

  get(id: string): Source | undefined {
    return this.byId.get(id);
  }

  byWriteKey(key: string): Source | undefined {
    return this.byKey.get(key);
  }

  byName(name: string): Source | undefined {
    return this.list().find((s) => s.name === name);
  }

  create(input: { name: string; writeKey?: string; webhooks?: WebhookSettings; collectorFaults?: CollectorFaults | null }, now: number): Source {
    if (this.byName(input.name)) throw conflict(`name: a source named "${input.name}" already exists`);
    const writeKey = input.writeKey ?? newWriteKey();
    if (this.byKey.has(writeKey)) throw conflict('writeKey: already used by another source');
    const source: Source = {
      id: randomUUID(),
      name: input.name,
      writeKey,
      createdAt: formatTimestamp(now),
      webhooks: input.webhooks ?? noWebhooks(),
      collectorFaults: input.collectorFaults ?? null,
    };
    this.insertStmt.run(toRow(source));
    this.onCreate(source.id);
    this.index(source);
    return source;
  }

  update(id: string, patch: { name?: string; writeKey?: string; webhooks?: WebhookSettings; collectorFaults?: CollectorFaults | null }): Source {
    const current = this.byId.get(id);
    if (!current) throw notFound(id);
    if (patch.name && patch.name !== current.name && this.byName(patch.name)) {
      throw conflict(`name: a source named "${patch.name}" already exists`);
    }
    if (patch.writeKey && patch.writeKey !== current.writeKey && this.byKey.has(patch.writeKey)) {
      throw conflict('writeKey: already used by another source');
    }
    const next: Source = { ...current, ...stripUndefined(patch) };
    this.updateStmt.run(toRow(next));
    this.byKey.delete(current.writeKey);
    this.index(next);
    return next;
  }

  delete(id: string): void {
    const current = this.byId.get(id);
    if (!current) throw notFound(id);
    this.deleteStmt.run(id);
    this.byId.delete(id);
    this.byKey.delete(current.writeKey);
  }

  /** Puts the sources back as they were (a transaction that wrote them rolled back: Store.transaction). */
  restore(sources: readonly Source[]): void {
    this.byId = new Map();
    this.byKey = new Map();
    for (const s of sources) this.index(s);
  }

  private index(s: Source): void {
    this.byId.set(s.id, s);
    this.byKey.set(s.writeKey, s);
  }
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function fromRow(r: SourceRow): Source {
  return { id: r.id, name: r.name, writeKey: r.write_key, createdAt: formatTimestamp(r.created_at), webhooks: JSON.parse(r.webhooks), collectorFaults: null };
}

function toRow(s: Source): SourceRow {
  return { id: s.id, name: s.name, write_key: s.writeKey, created_at: Date.parse(s.createdAt), webhooks: JSON.stringify(s.webhooks) };
}
