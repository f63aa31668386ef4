import { randomUUID } from 'node:crypto';
import { mockReceiverSchema, type MockReceiver, type MockReceiverInput } from '../../../shared/mock-receiver.schema';
import type { MockReceiverView } from '../../../shared/simulation.contract';
import { parseOrThrow } from '../../../shared/validation-error';
import { MockReceiverHost } from './mock-receivers';
import { ReceiversRepo } from './receivers.repo';
import { conflict, HttpError, notFound } from '../errors';
import type { Feature, SimulationDeps } from './simulation-deps';
import { formatTimestamp } from '../../../shared/timestamp';
import { shortKeyWarning } from '../../../shared/standard-webhooks';
import { describeUse, detached, movedUrl, receiverUses, type ReceiverUse } from '../../../shared/receiver-uses';
import { describeFollowed, followReceivers, rewriteUses, type ReceiverMove } from './receiver-moves';
import { sidesStopped, stoppedReason, type StoppedSide } from '../../../shared/actions/mode';
import { backgroundSlices } from '../slice-meter';

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

/** What the mock receivers use of the simulation's deps: they listen before a config at start is applied (engine.ts). */
export type ReceiverDeps = Pick<SimulationDeps, 'store' | 'events' | 'now' | 'log' | 'dataDir' | 'cancelDeliveries'>;

/** Mock receivers (SPEC §7): definitions and what they received live in SQLite; the host serves them. */
export class ReceiversService implements Feature<Ops> {
  private host!: MockReceiverHost;
  private counts = new Map<string, { n: number; last: string | null }>();
  /** Inserts per receiver since its last trim, counted where they are written (inside the write job). */
  private untrimmed = new Map<string, number>();
  private readonly repo: ReceiversRepo;

  constructor(
    private readonly deps: ReceiverDeps,
    private readonly ports?: { http: number; https: number },
  ) {
    this.repo = deps.store.featureRepo((db) => new ReceiversRepo(db));
  }

  /**
   * Opens the listeners (serving no receiver yet), so their ports are known: a config file applied
   * at start writes this lab's URL for a mock receiver it names (config-receivers.ts).
   */
  async listen(): Promise<void> {
    if (this.host) return;
    const { store } = this.deps;
    // First start picks the ports (fixed defaults, or free ones when taken) and keeps them.
    const saved = store.settings.getExtra<{ http: number; https: number }>('mockReceiverPorts');
    const wanted = this.ports ?? saved ?? DEFAULT_PORTS;
    this.host = this.newHost(wanted);
    try {
      await this.host.start();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || this.ports) throw err;
      this.host = this.newHost({ http: 0, https: 0 });
      await this.host.start();
      // The receivers' URLs changed: the sources sending to the old ones follow them (or their calls
      // would go to whatever program holds the old port now), in the transaction that keeps the new ports.
      const got = this.listenerPorts();
      const moves = this.moves(wanted);
      const { followed, retried } = store.transaction(() => {
        store.settings.setExtra('mockReceiverPorts', got);
        // Their unfinished deliveries too (the dispatcher reads them back after this): a retry made
        // before the restart would otherwise take the signed call to the old port's new holder.
        const retried = store.ledger.retargetUnfinished((url) => moves.reduce((u, m) => movedUrl(u, m.from, m.to), url));
        return { followed: followReceivers(store, moves), retried };
      });
      const who = followed.length ? `; the sources sending to them follow: ${followed.map(describeFollowed).join(', ')}` : '; no source sent to them';
      const pending = retried ? `; ${retried} unfinished deliver${retried === 1 ? 'y follows' : 'ies follow'} too` : '';
      this.deps.log(`mock receivers: port ${wanted.http} or ${wanted.https} is taken; using free ports ${got.http} and ${got.https} (receiver URLs change)${who}${pending}`);
      return;
    }
    if (!this.ports) store.settings.setExtra('mockReceiverPorts', this.listenerPorts());
  }

  /** Each stored receiver's URL on the listeners at `was` (the ports it had), to its URL now. */
  private moves(was: { http: number; https: number }): ReceiverMove[] {
    return this.repo.definitions().map((r) => {
      const to = this.host.urlFor(r);
      const from = new URL(to);
      from.port = String(r.tls ? was.https : was.http);
      return { receiver: r.name, from: from.href, to };
    });
  }

  async start(): Promise<void> {
    await this.listen();
    this.host.setReceivers(this.repo.definitions());
    for (const r of this.repo.requestCounts()) {
      this.counts.set(r.id, { n: r.n, last: formatTimestamp(r.last) });
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
        const before = this.host.urlFor(current);
        const r = this.save({ ...merged, id: current.id }, false);
        changed();
        // A new path or TLS is a new URL: the sources sending to the old one follow it (it would 404).
        const after = this.host.urlFor(r);
        if (followReceivers(store, [{ receiver: r.name, from: before, to: after }]).length) events.emit({ type: 'sources.changed' });
        return this.view(r);
      },
      deleteReceiver: async ({ id, detach }: { id: string; detach?: boolean }) => {
        const r = this.host.get(id);
        if (!r) throw notFound(`receiver ${id}`);
        const detachedFrom = this.detachOrRefuse(r, detach === true);
        this.repo.remove(id);
        this.host.remove(id);
        this.counts.delete(id);
        changed();
        if (detachedFrom.uses.length) events.emit({ type: 'sources.changed' });
        // A source left without a URL stops sending that side: its unfinished deliveries end as canceled.
        for (const { sourceId, side } of detachedFrom.stopped) await this.deps.cancelDeliveries(sourceId, stoppedReason(side, ` (mock receiver "${r.name}" deleted)`), side);
        return { ok: true as const, detached: detachedFrom.uses };
      },
      listReceiverRequests: ({ id, limit }: { id: string; limit: number }) => {
        if (!this.host.get(id)) throw notFound(`receiver ${id}`);
        return this.repo.requests(id, limit);
      },
      resetReceiver: ({ id }: { id: string }) => {
        const r = this.host.get(id);
        if (!r) throw notFound(`receiver ${id}`);
        this.host.resetState(id);
        this.host.clearRequests(id);
        this.repo.clearRequests(id);
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
        // The receiver checks signatures against its own secrets: give the source each one it has none of
        // (a Standard Webhooks key only when long enough for a source: sw-key-policy.ts), or
        // enforceSignature refuses every call for the missing headers.
        const sharedSecret = source.webhooks.sharedSecret || r.secret;
        const receiverKey = r.standardWebhooksSecret && shortKeyWarning(r.standardWebhooksSecret) === null ? r.standardWebhooksSecret : undefined;
        const standardWebhooksSecret = source.webhooks.standardWebhooksSecret || receiverKey;
        const updated = store.sources.update(source.id, { webhooks: { ...source.webhooks, enabled: true, urls, sharedSecret, standardWebhooksSecret } });
        events.emit({ type: 'sources.changed' });
        return updated;
      },
    };
  }

  /**
   * A receiver some source sends to is not deleted behind its back (its calls would then fail with
   * 404): refused naming the sources, or with `detach` its URL is removed from them, in one
   * transaction. A mapping's URL cannot be removed (a mapping needs one): refused even with detach.
   */
  private detachOrRefuse(r: MockReceiver, detach: boolean): { uses: ReceiverUse[]; stopped: { sourceId: string; side: StoppedSide }[] } {
    const { store } = this.deps;
    const url = this.host.urlFor(r);
    const uses = receiverUses(url, store.sources.list());
    const inMappings = uses.filter((u) => u.mappings.length > 0);
    if (inMappings.length) {
      throw conflict(`receiver "${r.name}" is the URL of ${inMappings.map(describeUse).join(', ')}: give that mapping another URL in Destinations first (a mapping needs a URL, so it cannot be detached)`);
    }
    if (uses.length && !detach) {
      throw conflict(`receiver "${r.name}" is used by ${uses.map(describeUse).join('; ')}: their calls would fail with 404 once it is gone. Delete with detach=1 to remove its URL from them`);
    }
    const stopped = rewriteUses(store, uses, (w) => detached(w, url).webhooks).flatMap(({ use, before, after }) => {
      const side = sidesStopped(before, after);
      return side ? [{ sourceId: use.sourceId, side }] : [];
    });
    return { uses, stopped };
  }

  /** Serves the definitions as stored (a config import wrote them: apply-config.ts); unchanged ones keep their counters. */
  reload(): void {
    this.host.setReceivers(this.repo.definitions());
  }

  definitions(): MockReceiver[] {
    return this.host.list();
  }

  /** `http://127.0.0.1:8789` (https: the TLS listener's): what a receiver's URL starts with. */
  receiverBase(tls: boolean): string {
    return this.host.baseUrl(tls);
  }

  urlFor(r: Pick<MockReceiver, 'path' | 'tls'>): string {
    return this.host.urlFor(r);
  }

  /** The two listeners' ports (the lab's own, for a config's warnings). */
  listenerPorts(): { http: number; https: number } {
    return { http: portOf(this.host.baseUrl(false)), https: portOf(this.host.baseUrl(true)) };
  }

  private save(r: MockReceiver, isNew: boolean): MockReceiver {
    const clash = this.host.list().find((o) => o.id !== r.id && (o.name === r.name || o.path === r.path));
    if (clash) throw conflict(clash.name === r.name ? `name: a receiver named "${r.name}" exists` : `path: "${r.path}" is used by receiver "${clash.name}"`);
    if (isNew && this.host.get(r.id)) throw conflict(`id: receiver ${r.id} exists`);
    this.repo.save(r, this.deps.now());
    return this.host.upsert(r);
  }

  private view(r: MockReceiver): MockReceiverView {
    const c = this.counts.get(r.id);
    return { ...r, url: this.host.urlFor(r), requestCount: c?.n ?? 0, lastRequestAt: c?.last ?? null };
  }

  /** Trims a log left over the bound, one TRIM_CHUNK per write transaction, the event loop free between. */
  private catchUp(receiverId: string): void {
    const step = () => {
      this.deps.store.writes
        .run(() => backgroundSlices.time('receiver log trim', () => this.trimStep(receiverId)))
        .then((removed) => {
          if (removed === TRIM_CHUNK) setImmediate(step);
        })
        .catch(() => undefined);
    };
    step();
  }

  private trimStep(receiverId: string): number {
    return this.repo.trimRequests(receiverId, KEEP_REQUESTS, TRIM_CHUNK);
  }

  private newHost(ports: { http: number; https: number }): MockReceiverHost {
    const { store } = this.deps;
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
            this.repo.addRequest(record);
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
