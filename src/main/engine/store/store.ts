import { openDatabase, type Db } from './database';
import { lockDataFolder } from './folder-lock';
import { featureDb, type FeatureDb } from './feature-db';
import { WriteQueue } from './write-queue';
import { SourcesRepo } from './sources.repo';
import { SettingsRepo } from './settings.repo';
import { CallsRepo } from './calls.repo';
import { RequestsRepo } from './requests.repo';
import { DeliveriesRepo } from './deliveries.repo';
import { DeliveryLedger } from './delivery-ledger';
import { ClientQueueRepo } from './client-queue.repo';
import { RetentionRun, SLICE_CHUNK } from './retention';
import { SourceKeys } from './source-keys';
import { InFlight } from './url-states';
import { CallsClearer } from './clear-calls';
import { callStats, type StatsFilter } from './call-stats';
import { CallErasure } from './call-erasure';
import { UserCalls } from './user-calls';
import { DeliveryOutcomes } from './delivery-outcomes';
import { UserActivity } from './user-activity';
import { ActionsLedger } from './actions-ledger';
import type { ActiveDelivery, SigningSecrets } from './delivery.types';
import { ActionsOutcomes } from './actions-outcomes';
import { webhookMappings } from '../../../shared/actions/mode';
import { dataGoneError, PROBE_EVERY_MS, StorageHealth } from './storage-health';
import { statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { DB_FILE, makeFolder } from './data-folder';
import { MAX_BATCH_BYTES } from '../../../shared/limits';
import type { RewriteOptions } from './auto-vacuum';
import { SpaceReclaimer } from './space-reclaim';

/**
 * When the de-duplication window starts filling after a start (CallsRepo.dedupReady): after the first
 * pages a full lab's inspector asks for, which it would otherwise hold up (issue 27).
 */
const DEDUP_LOAD_DELAY_MS = 1500;

/** How often retired secret versions are looked at (a lookup of one small table; a write only when one can go). */
const SECRETS_PRUNE_EVERY_MS = 1000;

/**
 * The one SQLite database and its repositories. The store owns the call record: SQL over calls,
 * requests, deliveries, attempts and source keys lives in this folder, behind named operations;
 * the handle itself stays private (tests/unit/core-sql-ownership.test.ts holds both).
 */
export class Store {
  private readonly db: Db;
  private readonly dedupTimer: NodeJS.Timeout;
  readonly writes: WriteQueue;
  readonly sources: SourcesRepo;
  readonly settings: SettingsRepo;
  readonly requests: RequestsRepo;
  readonly calls: CallsRepo;
  /** Deliveries and attempts as read (a call's, due, to resume, counts). */
  readonly deliveries: DeliveriesRepo;
  /**
   * Every delivery's lifecycle, whoever asks: created, scheduled, finished and canceled through its
   * named operations, the only writes to deliveries, attempts and the Actions ledger (delivery-ledger.ts).
   */
  readonly ledger: DeliveryLedger;
  readonly clientQueue: ClientQueueRepo;
  /** Webhooks (Actions): calls waiting for their batch, and whether the store has any Actions data. */
  readonly actions: ActionsLedger;
  readonly sourceKeys: SourceKeys;
  /** Deleting every call in small steps (clearCalls). */
  readonly clearer: CallsClearer;
  /** Erasing chosen calls with their request items (deletion requests, the demo). */
  readonly erasure: CallErasure;
  /** One userId's calls: where they came from, whether a round is under way (deletion requests). */
  readonly userCalls: UserCalls;
  /** Where the deliveries of chosen calls stand (deletion notices, load runs). */
  readonly outcomes: DeliveryOutcomes;
  /** Identify and track calls by user, for audience profiles. */
  readonly activity: UserActivity;
  /** Rounds being sent now (not written: they usually end within milliseconds); summaries show them. */
  readonly inFlight = new InFlight();
  /** Whether writes succeed now; while they fail, a probe write is tried every PROBE_EVERY_MS. */
  readonly health: StorageHealth;
  private probeTimer: NodeJS.Timeout | null = null;
  /** Drops secret versions nothing needs any more (source-secrets.ts), checked every SECRETS_PRUNE_EVERY_MS. */
  private readonly secretsTimer: NodeJS.Timeout;
  /**
   * The secrets an attempt signs webhook-signature with, for its source and secret version at a time:
   * by the rotation window setting (source-secrets.ts).
   */
  readonly signingSecrets: SigningSecrets = (sourceId, version, now) =>
    this.sources.secrets.signingSecrets(sourceId, version, now, this.settings.get().secretRotationWindowMs);
  /** Gives the pages retention freed back to the file system, in small steps (giveSpaceBack). */
  private readonly space: SpaceReclaimer;
  /** Retention's run under way, sliced (pruneSlice). */
  private readonly retention: RetentionRun;
  /** Lets the data folder go (folder-lock.ts): one lab per folder. */
  private readonly unlock: () => void;

  constructor(opts: {
    dataDir: string;
    nativeBinding?: string;
    now?: () => number;
    log?: (line: string) => void;
    rewrite?: Pick<RewriteOptions, 'freeBytes' | 'onStep'>;
    /** For tests: calls retention's cutoff search counts per slice (CUTOFF_STEP). */
    cutoffStep?: number;
  }) {
    makeFolder(opts.dataDir);
    this.unlock = lockDataFolder(opts.dataDir);
    try {
      this.db = openDatabase(opts);
    } catch (err) {
      this.unlock();
      throw err;
    }
    this.health = new StorageHealth(opts.now ?? Date.now);
    this.space = new SpaceReclaimer(this.db, this.health, opts.log);
    this.health.onChange((s) => (s.ok ? this.stopProbe() : this.startProbe()));
    const file = join(opts.dataDir, DB_FILE);
    const opened = statSync(file);
    this.writes = new WriteQueue(this.db, () => this.afterRollback(), this.health, () => (sameFile(opened, statSync(file, { throwIfNoEntry: false })) ? null : dataGoneError(file)));
    this.sourceKeys = new SourceKeys(this.db);
    this.sources = new SourcesRepo(this.db, (id) => this.sourceKeys.keyOf(id), (ids) => this.sourceKeys.forget(ids));
    // The start may have deleted the keys of an import a crash cut short (sources.repo.ts).
    this.sourceKeys.reload();
    this.settings = new SettingsRepo(this.db, (from, to) => this.sources.windowChanged((opts.now ?? Date.now)(), from, to));
    this.requests = new RequestsRepo(this.db);
    this.actions = new ActionsLedger(this.db);
    this.ledger = new DeliveryLedger(this.db, this.actions);
    const outcomes = new ActionsOutcomes(this.db, this.inFlight, (id, name) => {
      const s = this.sources.get(id);
      return s ? webhookMappings(s.webhooks).find((m) => m.name === name) : undefined;
    });
    this.calls = new CallsRepo(this.db, (id) => (id ? (this.sources.get(id)?.name ?? null) : null), this.requests, this.sourceKeys, this.inFlight, {
      ledger: this.actions,
      outcomes,
      deliveries: this.ledger,
    });
    this.retention = new RetentionRun(this.db, this.calls, opts.cutoffStep);
    // Filled once the start is over (the first pages answered), or at the first arrival if sooner;
    // arrivals wait for it, and one that failed says so (recordArrivals).
    this.dedupTimer = setTimeout(() => this.calls.dedupReady().catch(() => undefined), DEDUP_LOAD_DELAY_MS);
    this.dedupTimer.unref();
    // Bodies are indexed for search in the background, after the start's first pages (body-search.ts).
    this.calls.bodyIndex.start(DEDUP_LOAD_DELAY_MS);
    const now = opts.now ?? Date.now;
    this.secretsTimer = setInterval(() => {
      if (!this.sources.secrets.anyRetired()) return;
      this.writes.run(() => this.sources.secrets.prune(now(), this.settings.get().secretRotationWindowMs)).catch(() => undefined);
    }, SECRETS_PRUNE_EVERY_MS);
    this.secretsTimer.unref();
    this.deliveries = new DeliveriesRepo(this.db, this.actions);
    this.clientQueue = new ClientQueueRepo(this.db);
    this.clearer = new CallsClearer(this.db, this.calls);
    this.erasure = new CallErasure(this.db, this.calls, this.requests);
    this.userCalls = new UserCalls(this.db);
    this.outcomes = new DeliveryOutcomes(this.db);
    this.activity = new UserActivity(this.db);
  }

  /**
   * A feature's repository over its own tables (receivers, deletions, audiences, tracking plans): the
   * store can't import features (upward), so a repo factory gets a FeatureDb (feature-db.ts) made
   * for it, never the handle itself: statements over the feature's tables and transactions, with
   * SQL over the store's own tables refused.
   */
  featureRepo<T>(make: (db: FeatureDb) => T): T {
    return make(featureDb(this.db));
  }

  /**
   * Runs fn in one SQLite transaction, now (not through the write queue, so nothing is written between
   * what fn checks and what it writes): all of it or nothing, as a config import must be. If it rolls
   * back, what the repositories mirror in memory (sources, settings, source keys) is put back too.
   */
  transaction<T>(fn: () => T): T {
    const sources = this.sources.list();
    const settings = this.settings.get();
    try {
      return this.db.transaction(fn)();
    } catch (err) {
      this.sources.restore(sources);
      this.settings.restore(settings);
      this.afterRollback();
      throw err;
    }
  }

  /** Every delivery carrying this call: its Classic one, then its Actions ones (only looked up once the store has had any). */
  deliveriesOfCall(callId: number): ActiveDelivery[] {
    const classic = this.deliveries.activeForCall(callId);
    const actions = this.actions.seen() ? this.deliveries.actionsForCall(callId) : [];
    return classic ? [classic, ...actions] : actions;
  }

  /** The calls counted by outcome (getStats). */
  stats(f: StatsFilter) {
    return callStats(this.db, this.sourceKeys, this.inFlight.deliveryIds(), f, this.actions.seen());
  }

  /** Retention's whole run at once (tests, and a lab with nothing else to do). */
  prune(): number {
    let removed = 0;
    for (let more = true; more; ) {
      const r = this.pruneSlice();
      removed += r.removed;
      more = r.more;
    }
    return removed;
  }

  /**
   * One slice of retention (a step of the cutoff's search, or a chunk of SLICE_CHUNK calls): the engine
   * runs it a turn of the loop at a time; `more` until the run is over (retention.ts, RetentionRun).
   */
  pruneSlice(): { removed: number; more: boolean } {
    try {
      return this.retention.slice(this.settings.get().retentionCalls, SLICE_CHUNK);
    } catch (err) {
      this.retention.reset();
      this.afterRollback();
      throw err;
    }
  }

  /**
   * Gives the file's free pages back to the file system in small steps off the hot path (after
   * retention: space-reclaim.ts); `done` is told the pages given back once none are left.
   */
  giveSpaceBack(done?: (pages: number) => void): void {
    this.space.start(done);
  }

  /** Pages the file holds free (PRAGMA freelist_count), and whether they are being given back. */
  freeSpace(): { pages: number; reclaiming: boolean } {
    return { pages: this.space.freePages(), reclaiming: this.space.running };
  }

  /** What the repositories keep in memory about their tables may now count rows that never landed. */
  private afterRollback(): void {
    this.calls.forgetCount();
    this.sourceKeys.reload();
  }

  /**
   * Caps the database at its current size plus `extraBytes` (PRAGMA max_page_count), or lifts the cap
   * (null): past it, SQLite fails writes with SQLITE_FULL exactly as on a full disk. For tests.
   */
  capSize(extraBytes: number | null): void {
    if (extraBytes === null) {
      this.db.pragma('max_page_count = 4294967294');
      return;
    }
    const pages = this.db.pragma('page_count', { simple: true }) as number;
    const size = this.db.pragma('page_size', { simple: true }) as number;
    this.db.pragma(`max_page_count = ${pages + Math.ceil(extraBytes / size)}`);
  }

  /**
   * While storage fails, every PROBE_EVERY_MS: a checkpoint (it may free the WAL's room), then a write
   * through the queue as large as the largest request the collector takes (512 KB in and out of the
   * settings table in one transaction: it needs free pages as such a request would, so a write that
   * only fits small calls does not flip storage back to ok). The first that commits marks storage ok
   * (WriteQueue), which resumes the dispatcher and the collector. The queue's check that the database
   * file is still there keeps a deleted folder failing however the writes go.
   */
  private startProbe(): void {
    if (this.probeTimer) return;
    const probe = this.db.prepare("INSERT OR REPLACE INTO settings (key, value) VALUES ('storage.probe', ?)");
    const unprobe = this.db.prepare("DELETE FROM settings WHERE key = 'storage.probe'");
    const filler = 'x'.repeat(MAX_BATCH_BYTES);
    this.probeTimer = setInterval(() => {
      try {
        this.db.pragma('wal_checkpoint(PASSIVE)');
      } catch {
        // still full: the write below says so
      }
      this.writes.run(() => (probe.run(filler), unprobe.run())).catch(() => undefined);
    }, PROBE_EVERY_MS);
    this.probeTimer.unref();
  }

  private stopProbe(): void {
    if (this.probeTimer) clearInterval(this.probeTimer);
    this.probeTimer = null;
  }

  close(): void {
    clearTimeout(this.dedupTimer);
    this.calls.bodyIndex.stop();
    clearInterval(this.secretsTimer);
    this.space.close();
    this.stopProbe();
    try {
      this.writes.close();
      this.db.pragma('wal_checkpoint(TRUNCATE)');
    } catch {
      // A full disk at shutdown: the WAL keeps what was committed; the next start checkpoints it.
    }
    this.db.close();
    this.unlock();
  }
}

/** The database file is still the one the lab opened: there, and the same file (Windows has no inode numbers: there only). */
function sameFile(opened: Stats, now: Stats | undefined): boolean {
  if (!now) return false;
  return process.platform === 'win32' || (now.ino === opened.ino && now.dev === opened.dev);
}
