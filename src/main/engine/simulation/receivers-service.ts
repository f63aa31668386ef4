import { randomUUID } from 'node:crypto';
import { mockReceiverSchema, type MockReceiver, type MockReceiverInput, type MockRequestRecord } from '../../../shared/mock-receiver.schema';
import type { MockReceiverView } from '../../../shared/simulation.contract';
import { parseOrThrow } from '../../../shared/validation-error';
import { MockReceiverHost } from './mock-receivers';
import { conflict, HttpError, notFound } from '../store/sources.repo';
import type { Feature, SimulationDeps } from './simulation-deps';

type Ops = 'listReceivers' | 'createReceiver' | 'updateReceiver' | 'deleteReceiver' | 'listReceiverRequests' | 'resetReceiver' | 'attachReceiver';

/** Requests kept per receiver in SQLite (the newest). */
export const KEEP_REQUESTS = 1000;
/**
 * The log is trimmed inside the write transaction of every TRIM_EVERY-th insert for a receiver, by
 * at most TRIM_CHUNK rows: it never holds more than KEEP_REQUESTS + TRIM_EVERY rows, however many
 * requests one group commit carries, and no transaction deletes much (a log left larger, by an older
 * version, shrinks in TRIM_CHUNK steps at start, one event-loop turn each).
 */
export const TRIM_EVERY = 50;
const TRIM_CHUNK = 500;
// Fixed default ports, so receiver URLs saved in sources keep working across restarts.
const DEFAULT_PORTS = { http: 8789, https: 8790 };

/** Mock receivers (SPEC §7): definitions and what they received live in SQLite; the host serves them. */
export class ReceiversService implements Feature<Ops> {
  private host!: MockReceiverHost;
  private counts = new Map<string, { n: number; last: string | null }>();
  /** Inserts per receiver since its last trim, counted where they are written (inside the write job). */
  private untrimmed = new Map<string, number>();
  private trimStep!: (receiverId: string) => number;

  constructor(
    private readonly deps: SimulationDeps,
    private readonly ports?: { http: number; https: number },
  ) {}

  async start(): Promise<void> {
    const { store } = this.deps;
    // First start picks the ports (fixed defaults, or free ones when taken) and keeps them.
    const saved = store.settings.getExtra<{ http: number; https: number }>('mockReceiverPorts');
    const wanted = this.ports ?? saved ?? DEFAULT_PORTS;
    this.host = this.newHost(wanted);
    try {
      await this.host.start();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || this.ports) throw err;
      this.deps.log(`mock receivers: port ${wanted.http} or ${wanted.https} is taken; using free ports (receiver URLs change)`);
      this.host = this.newHost({ http: 0, https: 0 });
      await this.host.start();
    }
    if (!this.ports) {
      const actual = { http: portOf(this.host.baseUrl(false)), https: portOf(this.host.baseUrl(true)) };
      store.settings.setExtra('mockReceiverPorts', actual);
    }
    this.host.setReceivers(this.load());
    for (const r of store.db.prepare('SELECT receiver_id AS id, COUNT(*) AS n, MAX(at) AS last FROM receiver_requests GROUP BY receiver_id').all() as { id: string; n: number; last: number }[]) {
      this.counts.set(r.id, { n: r.n, last: new Date(r.last).toISOString() });
      // Rows over the bound count as untrimmed inserts, so a restart cannot let the log grow past it.
      this.untrimmed.set(r.id, Math.max(0, r.n - KEEP_REQUESTS));
      if (r.n > KEEP_REQUESTS) this.catchUp(r.id);
    }
  }

  async stop(): Promise<void> {
    await this.host?.stop();
  }

  handlers() {
    const { store, events } = this.deps;
    const changed = () => events.emit({ type: 'receivers.changed' });
    return {
      listReceivers: () => this.host.list().map((r) => this.view(r)),
      createReceiver: (input: MockReceiverInput) => {
        const r = this.save({ ...mockReceiverSchema.parse(input), id: input.id ?? randomUUID() }, true);
        changed();
        return this.view(r);
      },
      updateReceiver: (input: Omit<Partial<MockReceiverInput>, 'secret'> & { id: string; secret?: string | null }) => {
        const current = this.host.get(input.id);
        if (!current) throw notFound(`receiver ${input.id}`);
        const { secret, ...rest } = input;
        const next: Record<string, unknown> = { ...current, ...rest };
        if (secret === null) delete next.secret;
        else if (secret !== undefined) next.secret = secret;
        const merged = parseOrThrow(mockReceiverSchema, next);
        const r = this.save({ ...merged, id: current.id }, false);
        changed();
        return this.view(r);
      },
      deleteReceiver: ({ id }: { id: string }) => {
        if (!this.host.get(id)) throw notFound(`receiver ${id}`);
        store.db.transaction(() => {
          store.db.prepare('DELETE FROM mock_receivers WHERE id = ?').run(id);
          store.db.prepare('DELETE FROM receiver_requests WHERE receiver_id = ?').run(id);
        })();
        this.host.remove(id);
        this.counts.delete(id);
        changed();
        return { ok: true as const };
      },
      listReceiverRequests: ({ id, limit }: { id: string; limit: number }) => {
        if (!this.host.get(id)) throw notFound(`receiver ${id}`);
        return (store.db.prepare('SELECT record FROM receiver_requests WHERE receiver_id = ? ORDER BY at DESC, rowid DESC LIMIT ?').all(id, limit) as { record: string }[]).map(
          (r) => JSON.parse(r.record) as MockRequestRecord,
        );
      },
      resetReceiver: ({ id }: { id: string }) => {
        const r = this.host.get(id);
        if (!r) throw notFound(`receiver ${id}`);
        this.host.resetState(id);
        this.host.clearRequests(id);
        store.db.prepare('DELETE FROM receiver_requests WHERE receiver_id = ?').run(id);
        this.counts.delete(id);
        changed();
        return this.view(r);
      },
      attachReceiver: ({ id, sourceId }: { id: string; sourceId: string }) => {
        const r = this.host.get(id);
        if (!r) throw notFound(`receiver ${id}`);
        const source = store.sources.get(sourceId);
        if (!source) throw notFound(`source ${sourceId}`);
        const url = this.host.urlFor(r);
        // A new array: the stored source object is shared with the in-memory cache.
        const urls = [...source.webhooks.urls];
        if (!urls.some((u) => u.url === url)) {
          if (urls.length >= 5) throw new HttpError(409, `webhooks.urls: source "${source.name}" already has 5 URLs; remove one first`);
          urls.push({ url, headers: {} });
        }
        // The receiver checks signatures against its own secret: give the source that secret when it has none.
        const sharedSecret = source.webhooks.sharedSecret || r.secret;
        const updated = store.sources.update(source.id, { webhooks: { ...source.webhooks, enabled: true, urls, sharedSecret } });
        events.emit({ type: 'sources.changed' });
        return updated;
      },
    };
  }

  /** Config file entries: matched by name, idempotent. */
  applyConfig(entries: MockReceiver[] | Omit<MockReceiver, 'id'>[]): void {
    for (const e of entries) {
      const existing = this.host.list().find((r) => r.name === e.name);
      this.save({ ...e, id: existing?.id ?? ('id' in e && e.id ? e.id : randomUUID()) } as MockReceiver, !existing);
    }
  }

  definitions(): MockReceiver[] {
    return this.host.list();
  }

  private save(r: MockReceiver, isNew: boolean): MockReceiver {
    const { store } = this.deps;
    const clash = this.host.list().find((o) => o.id !== r.id && (o.name === r.name || o.path === r.path));
    if (clash) throw conflict(clash.name === r.name ? `name: a receiver named "${r.name}" exists` : `path: "${r.path}" is used by receiver "${clash.name}"`);
    if (isNew && this.host.get(r.id)) throw conflict(`id: receiver ${r.id} exists`);
    store.db
      .prepare('INSERT INTO mock_receivers (id, name, definition, created_at) VALUES (?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET name = excluded.name, definition = excluded.definition')
      .run(r.id, r.name, JSON.stringify(r), this.deps.now());
    return this.host.upsert(r);
  }

  private load(): MockReceiver[] {
    return (this.deps.store.db.prepare('SELECT definition FROM mock_receivers ORDER BY created_at').all() as { definition: string }[]).map((r) => JSON.parse(r.definition) as MockReceiver);
  }

  private view(r: MockReceiver): MockReceiverView {
    const c = this.counts.get(r.id);
    return { ...r, url: this.host.urlFor(r), requestCount: c?.n ?? 0, lastRequestAt: c?.last ?? null };
  }

  /** Trims a log left over the bound, one TRIM_CHUNK per write transaction, the event loop free between. */
  private catchUp(receiverId: string): void {
    const step = () => {
      this.deps.store.writes
        .run(() => this.trimStep(receiverId))
        .then((removed) => {
          if (removed === TRIM_CHUNK) setImmediate(step);
        })
        .catch(() => undefined);
    };
    step();
  }

  private newHost(ports: { http: number; https: number }): MockReceiverHost {
    const { store } = this.deps;
    const insert = store.db.prepare('INSERT OR IGNORE INTO receiver_requests (id, receiver_id, at, record) VALUES (?, ?, ?, ?)');
    // The oldest row kept, then up to TRIM_CHUNK rows older than it: both walk the (receiver_id, at)
    // index, in the order the log is listed (at, then rowid), never the whole table.
    const oldestKept = store.db.prepare('SELECT at, rowid AS rid FROM receiver_requests WHERE receiver_id = ? ORDER BY at DESC, rowid DESC LIMIT 1 OFFSET ?');
    const deleteOlder = store.db.prepare(
      'DELETE FROM receiver_requests WHERE rowid IN (SELECT rowid FROM receiver_requests WHERE receiver_id = ? AND (at < ? OR (at = ? AND rowid < ?)) ORDER BY at, rowid LIMIT ?)',
    );
    this.trimStep = (receiverId) => {
      const cut = oldestKept.get(receiverId, KEEP_REQUESTS - 1) as { at: number; rid: number } | undefined;
      return cut ? deleteOlder.run(receiverId, cut.at, cut.at, cut.rid, TRIM_CHUNK).changes : 0;
    };
    return new MockReceiverHost({
      dataDir: this.deps.dataDir,
      httpPort: ports.http,
      httpsPort: ports.https,
      onRequest: (record) => {
        const c = this.counts.get(record.receiverId) ?? { n: 0, last: null };
        c.n++;
        c.last = record.at;
        this.counts.set(record.receiverId, c);
        void store.writes
          .run(() => {
            insert.run(record.id, record.receiverId, Date.parse(record.at), JSON.stringify(record));
            // Counted here, not when the request arrived: a group commit runs many of these jobs at
            // once, and a count read then had moved on (the trim was mostly skipped at saturation).
            const since = (this.untrimmed.get(record.receiverId) ?? 0) + 1;
            this.untrimmed.set(record.receiverId, since >= TRIM_EVERY ? 0 : since);
            if (since >= TRIM_EVERY) this.trimStep(record.receiverId);
          })
          .catch(() => undefined);
        this.deps.events.emit({ type: 'receiver.request', receiverId: record.receiverId, request: record });
      },
      onSinkError: (err) => this.deps.log(`mock receivers: ${(err as Error).message}`),
    });
  }
}

function portOf(url: string): number {
  return Number(new URL(url).port);
}
