import { randomBytes, randomUUID } from 'node:crypto';
import type { SecretVersion, Source, WebhookSettings } from '../../../shared/types';
import type { CollectorFaults } from '../../../shared/collector-faults';
import type { Db } from './database';
import { conflict, notFound } from '../errors';
import { formatTimestamp } from '../../../shared/timestamp';
import { SourceSecrets, type CurrentSecret, type SecretKind } from './source-secrets';

interface SourceRow {
  id: string;
  name: string;
  write_key: string;
  created_at: number;
  webhooks: string;
}

/** A source to create, as the API and a config give it. */
export interface NewSource {
  name: string;
  writeKey?: string;
  webhooks?: WebhookSettings;
  collectorFaults?: CollectorFaults | null;
}

export function newWriteKey(): string {
  return `wk_${randomBytes(18).toString('base64url')}`;
}

const noWebhooks = (): WebhookSettings => ({ enabled: false, urls: [] });

/** The WebhookSettings field of each kind of secret (source-secrets.ts). */
const SECRET_FIELDS = { shared: 'sharedSecret', standard: 'standardWebhooksSecret' } as const satisfies Record<SecretKind, keyof WebhookSettings>;
export type SecretField = (typeof SECRET_FIELDS)[SecretKind];

/**
 * Sources are few and read on every request: kept in memory, written through to SQLite. Except their
 * collectorFaults, kept in memory only: a fault left on would otherwise make the lab look broken at
 * the next start (the config file sets them at every start; README, Decisions). Their secrets are
 * written to source_secrets, versioned (source-secrets.ts), never into the sources row; the Source
 * in memory carries the current ones in its webhooks, as the API shows them.
 */
export class SourcesRepo {
  private byId = new Map<string, Source>();
  private byKey = new Map<string, Source>();
  /** Names are unique: a config import looks each of its sources up by name (a scan each made it quadratic, issue 38). */
  private byNameMap = new Map<string, Source>();
  /** Names and write keys of the sources a config import is writing (stage): no one else may take them meanwhile. */
  private readonly reserved = { names: new Set<string>(), keys: new Set<string>() };
  private readonly insertStmt;
  private readonly stageStmt;
  private readonly updateStmt;
  private readonly deleteStmt;
  readonly secrets: SourceSecrets;
  private readonly createTx: (source: Source, now: number) => Source;
  private readonly updateTx: (row: SourceRow, next: Source, current: Source, now: number) => Source;

  /** onCreate: gives a new source its key for call rows (source-keys.ts) with the source itself. */
  constructor(
    private readonly db: Db,
    private readonly onCreate: (id: string) => void = () => {},
    /** Sources an import staged and took back: their keys are gone (source-keys.ts forgets them). */
    private readonly onUnstage: (ids: string[]) => void = () => {},
  ) {
    this.insertStmt = db.prepare(
      'INSERT INTO sources (id, name, write_key, created_at, webhooks) VALUES (@id, @name, @write_key, @created_at, @webhooks)',
    );
    this.stageStmt = db.prepare(
      'INSERT INTO sources (id, name, write_key, created_at, webhooks, import_id) VALUES (@id, @name, @write_key, @created_at, @webhooks, @import_id)',
    );
    this.updateStmt = db.prepare('UPDATE sources SET name = @name, write_key = @write_key, webhooks = @webhooks WHERE id = @id');
    this.deleteStmt = db.prepare('DELETE FROM sources WHERE id = ?');
    this.secrets = new SourceSecrets(db);
    this.createTx = inTransaction(db, (source: Source, now: number) => {
      this.insertStmt.run(toRow(source, now));
      return this.writeSecrets(source, undefined, now);
    });
    this.updateTx = inTransaction(db, (row: SourceRow, next: Source, current: Source, now: number) => {
      this.updateStmt.run(row);
      return this.writeSecrets(next, current, now);
    });
    dropUnfinishedImports(db);
    for (const row of db.prepare('SELECT * FROM sources ORDER BY created_at, name').all() as SourceRow[]) {
      this.index(withSecrets(fromRow(row), this.secrets.current(row.id)));
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
    return this.byNameMap.get(name);
  }

  create(input: NewSource, now: number): Source {
    this.nameFree(input.name);
    const writeKey = input.writeKey ?? newWriteKey();
    this.keyFree(writeKey);
    const source = this.createTx(newSource(input, writeKey, now), now);
    this.onCreate(source.id);
    this.index(source);
    return source;
  }

  update(id: string, patch: { name?: string; writeKey?: string; webhooks?: WebhookSettings; collectorFaults?: CollectorFaults | null }, now = Date.now()): Source {
    const current = this.byId.get(id);
    if (!current) throw notFound(`source ${id}`);
    if (patch.name && patch.name !== current.name) this.nameFree(patch.name);
    if (patch.writeKey && patch.writeKey !== current.writeKey) this.keyFree(patch.writeKey);
    let next: Source = { ...current, ...stripUndefined(patch) };
    const row = toRow(next);
    // The same settings given again (a config applied at every start) write nothing.
    if (!sameRow(row, toRow(current, row.created_at)) || secretsChanged(next, current)) next = this.updateTx(row, next, current, now);
    this.byKey.delete(current.writeKey);
    this.byNameMap.delete(current.name);
    this.index(next);
    return next;
  }

  /** Whether update() with this patch would change the source, in SQLite or in memory (a config import skips those it would not). */
  changes(current: Source, patch: Partial<NewSource>): boolean {
    const next: Source = { ...current, ...stripUndefined(patch) };
    return !sameRow(toRow(next, 0), toRow(current, 0)) || secretsChanged(next, current) || JSON.stringify(next.collectorFaults) !== JSON.stringify(current.collectorFaults);
  }

  /**
   * A new version of one of the source's secrets whose predecessor keeps signing for the rotation
   * window (Standard Webhooks: both signatures go out meanwhile), unless `overlap` is false (a leaked
   * secret stops at once). Throws when it has none to rotate.
   */
  rotate(id: string, field: SecretField, secret: string, now: number, overlap = true): Source {
    const current = this.byId.get(id);
    if (!current) throw notFound(`source ${id}`);
    if (!current.webhooks[field]) throw conflict(`${field}: the source has none to rotate; set one in its Webhooks settings first`);
    if (current.webhooks[field] === secret) throw conflict(`${field}: the new secret is the current one`);
    const kind = field === 'sharedSecret' ? 'shared' : 'standard';
    const made = this.secrets.set(id, kind, secret, now, overlap)!;
    const next: Source = { ...current, webhooks: { ...current.webhooks, [field]: secret }, secretVersions: { ...current.secretVersions, [field]: versionInfo(made) } };
    this.index(next);
    return next;
  }

  delete(id: string): void {
    const current = this.byId.get(id);
    if (!current) throw notFound(`source ${id}`);
    this.db.transaction(() => {
      this.deleteStmt.run(id);
      this.secrets.retireAll(id, Date.now());
    })();
    this.byId.delete(id);
    this.byKey.delete(current.writeKey);
    this.byNameMap.delete(current.name);
  }

  /**
   * The sources a config import creates, written ahead of the transaction that makes them sources
   * (import-config.ts): their names and write keys reserved first, then their rows written a slice
   * at a time (stage), each slice a transaction of its own, marked with the import. Until adopt()
   * commits them they are not sources: not in memory, and deleted at a start (a crash cut it short).
   */
  reserve(importId: string, inputs: NewSource[], now: number): Source[] {
    for (const i of inputs) this.nameFree(i.name);
    const planned = inputs.map((i) => newSource(i, i.writeKey ?? newWriteKey(), now));
    const keys = new Set<string>();
    for (const s of planned) {
      this.keyFree(s.writeKey);
      if (keys.has(s.writeKey)) throw conflict(`writeKey: given to two sources ("${s.writeKey}")`);
      keys.add(s.writeKey);
    }
    for (const s of planned) {
      this.reserved.names.add(s.name);
      this.reserved.keys.add(s.writeKey);
    }
    this.db.prepare('INSERT INTO config_imports (id, started_at) VALUES (?, ?)').run(importId, now);
    return planned;
  }

  /** One slice of an import's sources written (one transaction); returns them with their secrets' versions. */
  stage(importId: string, planned: Source[], now: number): Source[] {
    return this.db.transaction(() =>
      planned.map((s) => {
        this.stageStmt.run({ ...toRow(s, now), import_id: importId });
        const made = this.writeSecrets(s, undefined, now);
        this.onCreate(s.id);
        return made;
      }),
    )();
  }

  /** In the import's own transaction: its staged sources become sources (its row in config_imports goes, so a start keeps them). */
  adopt(importId: string, staged: Source[]): void {
    this.db.prepare('DELETE FROM config_imports WHERE id = ?').run(importId);
    for (const s of staged) this.index(s);
  }

  /** An import that did not commit: a slice of what it staged deleted (the last slice ends its reservations: release). */
  unstage(ids: string[]): void {
    const secrets = this.db.prepare('DELETE FROM source_secrets WHERE source_id = ?');
    // Their keys too: never given to a call (they were never sources), so none is missing (source-keys.ts).
    const keys = this.db.prepare('DELETE FROM source_keys WHERE source_id = ?');
    this.db.transaction(() => {
      for (const id of ids) {
        secrets.run(id);
        keys.run(id);
        this.deleteStmt.run(id);
      }
    })();
    this.onUnstage(ids);
  }

  /** The import is over (committed, or unstaged whole): its names and write keys are free again. */
  release(importId: string, planned: Source[]): void {
    this.db.prepare('DELETE FROM config_imports WHERE id = ?').run(importId);
    for (const s of planned) {
      this.reserved.names.delete(s.name);
      this.reserved.keys.delete(s.writeKey);
    }
  }

  private nameFree(name: string): void {
    if (this.byName(name)) throw conflict(`name: a source named "${name}" already exists`);
    if (this.reserved.names.has(name)) throw conflict(`name: a config import is creating a source named "${name}"`);
  }

  private keyFree(writeKey: string): void {
    if (this.byKey.has(writeKey)) throw conflict('writeKey: already used by another source');
    if (this.reserved.keys.has(writeKey)) throw conflict('writeKey: a config import is giving it to a source it creates');
  }

  /** Puts the sources back as they were (a transaction that wrote them rolled back: Store.transaction). */
  restore(sources: readonly Source[]): void {
    this.byId = new Map();
    this.byKey = new Map();
    this.byNameMap = new Map();
    for (const s of sources) this.index(s);
  }

  /** A secret that changed is a new version (a secret removed: none current); returns the source with its versions. */
  private writeSecrets(next: Source, before: Source | undefined, now: number): Source {
    // Both keys always, null for a secret not set: the same shape whether read back or just written.
    let versions: NonNullable<Source['secretVersions']> = { sharedSecret: null, standardWebhooksSecret: null, ...next.secretVersions };
    for (const [kind, field] of Object.entries(SECRET_FIELDS) as [SecretKind, SecretField][]) {
      const secret = next.webhooks[field] || undefined;
      if (secret === (before?.webhooks[field] || undefined)) continue;
      const made = this.secrets.set(next.id, kind, secret, now, false, before === undefined);
      versions = { ...versions, [field]: made ? versionInfo(made) : null };
    }
    return { ...next, secretVersions: versions };
  }

  /** The rotation window setting changed: rotations it closed stay closed (source-secrets.ts), and the sources show it. */
  windowChanged(now: number, fromMs: number, toMs: number): void {
    this.secrets.closeWindows(now, fromMs, toMs);
    for (const s of this.byId.values()) this.index(withSecrets(s, this.secrets.current(s.id)));
  }

  private index(s: Source): void {
    this.byId.set(s.id, s);
    this.byKey.set(s.writeKey, s);
    this.byNameMap.set(s.name, s);
  }
}

function sameRow(a: SourceRow, b: SourceRow): boolean {
  return a.name === b.name && a.write_key === b.write_key && a.webhooks === b.webhooks;
}

function secretsChanged(next: Source, before: Source): boolean {
  return Object.values(SECRET_FIELDS).some((field) => (next.webhooks[field] || undefined) !== (before.webhooks[field] || undefined));
}

function newSource(input: NewSource, writeKey: string, now: number): Source {
  return { id: randomUUID(), name: input.name, writeKey, createdAt: formatTimestamp(now), webhooks: input.webhooks ?? noWebhooks(), collectorFaults: input.collectorFaults ?? null };
}

/** The rows of a config import a crash cut short (reserve): it never committed, so none of it stays. */
function dropUnfinishedImports(db: Db): void {
  if (!db.prepare('SELECT 1 FROM config_imports LIMIT 1').get()) return;
  db.transaction(() => {
    const unfinished = 'SELECT id FROM sources WHERE import_id IN (SELECT id FROM config_imports)';
    db.prepare(`DELETE FROM source_secrets WHERE source_id IN (${unfinished})`).run();
    db.prepare(`DELETE FROM source_keys WHERE source_id IN (${unfinished})`).run();
    db.prepare('DELETE FROM sources WHERE import_id IN (SELECT id FROM config_imports)').run();
    db.prepare('DELETE FROM config_imports').run();
  })();
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function versionInfo(c: CurrentSecret): SecretVersion {
  return { version: c.version, createdAt: formatTimestamp(c.createdAt), rotated: c.rotated };
}

function withSecrets(s: Source, current: Partial<Record<SecretKind, CurrentSecret>>): Source {
  const webhooks: WebhookSettings = { ...s.webhooks };
  const secretVersions: NonNullable<Source['secretVersions']> = {};
  for (const [kind, field] of Object.entries(SECRET_FIELDS) as [SecretKind, SecretField][]) {
    const c = current[kind];
    if (c) webhooks[field] = c.secret;
    secretVersions[field] = c ? versionInfo(c) : null;
  }
  return { ...s, webhooks, secretVersions };
}

function fromRow(r: SourceRow): Source {
  return { id: r.id, name: r.name, writeKey: r.write_key, createdAt: formatTimestamp(r.created_at), webhooks: JSON.parse(r.webhooks), collectorFaults: null };
}

/** `createdAt`: the source's creation time as a number, when the caller has it (Date.parse is a tenth of an import's write). */
function toRow(s: Source, createdAt = Date.parse(s.createdAt)): SourceRow {
  // The secrets live in source_secrets only.
  const { sharedSecret: _s, standardWebhooksSecret: _w, ...webhooks } = s.webhooks;
  return { id: s.id, name: s.name, write_key: s.writeKey, created_at: createdAt, webhooks: JSON.stringify(webhooks) };
}

/**
 * `fn` in a transaction of its own, or in the caller's when one is open: a nested transaction is a
 * SAVEPOINT, which a config import paid once per source. Made once (better-sqlite3's transaction()
 * builds its wrapper each time it is called).
 */
function inTransaction<A extends unknown[], R>(db: Db, fn: (...args: A) => R): (...args: A) => R {
  const own = db.transaction(fn);
  return (...args) => (db.inTransaction ? fn(...args) : own(...args));
}
