import type { Attempt, AttemptTrigger, NormalizedCall, Settings } from '../../../shared/types';
import type { ReplayResult } from '../../../shared/api.contract';
import { HttpError } from '../errors';
import type { Store } from '../store/store';
import type { ActiveDelivery, CanceledDelivery, DeliveryUpdate, NewAttempt } from '../store/delivery.types';
import type { HttpSender } from './http-sender';
import { planDelivery } from './delivery-plan';
import { afterRound, roundUrlStates, sendRound } from './round';
import { attemptOf } from '../store/attempt-rows';
import { canceledUrlStates, type InFlightRound } from '../store/url-states';

export interface DispatcherDeps {
  store: Store;
  sender: HttpSender;
  now: () => number;
  random: () => number;
  /** Called after each committed round or replay with what changed. */
  onAttempts: (callId: number, attempts: Attempt[]) => void;
  /**
   * A round went out, or one of its URLs answered while others are still out: what the inspector
   * shows as in flight changed (store.inFlight). Not called when a round's last URL answers (its
   * recording reports that).
   */
  onInFlight?: (callId: number, deliveryId: number) => void;
  /** Rounds in flight at once (each up to five requests). */
  concurrency?: number;
}

/**
 * Runs deliveries: new ones at once, retries when due (one timer for the soonest), at most
 * `concurrency` rounds at a time. Every state change goes through the write queue, so the
 * inspector reads exactly what was sent; nothing here is lost on a crash that a restart cannot resume.
 */
export class Dispatcher {
  private readonly waiting: ActiveDelivery[] = [];
  private readonly running = new Set<number>();
  /** Scheduled rounds whose delivery was canceled while they were out (noteCanceled, commit). */
  private readonly canceledWhileOut = new Set<number>();
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Infinity;
  private stopped = false;
  private abandoned = false;
  private readonly idleWaiters: (() => void)[] = [];
  private readonly concurrency: number;
  /** Deliveries a bulk retry queued (retryMatching), sent MANUAL_CONCURRENCY at a time. */
  private readonly manualQueue: number[] = [];
  private readonly manualQueued = new Set<number>();
  private manualRunning = 0;

  constructor(private readonly deps: DispatcherDeps) {
    this.concurrency = deps.concurrency ?? 256;
  }

  /** Resumes everything unfinished: pending and in-flight now (at least once), retries at their time. */
  start(): void {
    const now = this.deps.now();
    const resume = this.deps.store.deliveries.unfinished();
    this.enqueue(resume.filter((d) => d.state !== 'retrying' || (d.nextAttemptAt ?? 0) <= now));
    this.armFromStore();
  }

  /**
   * Ends the source's unfinished deliveries as canceled: those waiting here are dropped, the rest
   * marked in the store; a round already out is recorded when it ends but not retried (commit).
   */
  async cancelSource(sourceId: string, reason: string): Promise<number> {
    for (let i = this.waiting.length - 1; i >= 0; i--) if (this.waiting[i].sourceId === sourceId) this.waiting.splice(i, 1);
    const { store } = this.deps;
    const canceled = await store.writes.run(() => this.noteCanceled(store.deliveries.cancelUnfinished(sourceId, reason)));
    for (const c of canceled) this.deps.onAttempts(c.callId, []);
    return canceled.length;
  }

  /**
   * Scheduled rounds out for deliveries just canceled: their commit records what was sent but
   * schedules nothing. Called inside the cancel's write job, so every commit queued after it sees it.
   */
  private noteCanceled(canceled: CanceledDelivery[]): CanceledDelivery[] {
    for (const c of canceled) if (this.running.has(c.deliveryId)) this.canceledWhileOut.add(c.deliveryId);
    return canceled;
  }

  /**
   * Clearing every call: the unfinished deliveries of calls up to this id end as canceled first (in
   * small write jobs), so nothing waiting or scheduled sends them while their rows are deleted; a
   * round already out finds its delivery gone and records nothing. Returns how many were canceled.
   */
  async cancelUpTo(maxCallId: number, reason: string, chunk: number): Promise<number> {
    for (let i = this.waiting.length - 1; i >= 0; i--) if (this.waiting[i].callId <= maxCallId) this.waiting.splice(i, 1);
    const { store } = this.deps;
    let canceled = 0;
    for (;;) {
      const n = (await store.writes.run(() => this.noteCanceled(store.deliveries.cancelUnfinishedUpTo(maxCallId, reason, chunk)))).length;
      canceled += n;
      if (n < chunk) return canceled;
    }
  }

  /**
   * Sends these deliveries again as manual rounds to every URL (retryMatching), in the background,
   * MANUAL_CONCURRENCY at a time; each is read again when its turn comes and skipped unless it is
   * still failed or expired. Returns how many were queued (one already queued is not queued twice).
   */
  retryInBackground(deliveryIds: number[]): number {
    let queued = 0;
    for (const id of deliveryIds) {
      if (this.stopped || this.manualQueued.has(id)) continue;
      this.manualQueued.add(id);
      this.manualQueue.push(id);
      queued++;
    }
    this.pumpManual();
    return queued;
  }

  private pumpManual(): void {
    while (!this.stopped && this.manualRunning < MANUAL_CONCURRENCY && this.manualQueue.length > 0) {
      const id = this.manualQueue.shift()!;
      const d = this.deps.store.deliveries.active(id);
      if (!d || (d.state !== 'failed' && d.state !== 'expired')) {
        this.manualQueued.delete(id);
        continue;
      }
      this.manualRunning++;
      void this.runManual(d, d.urls.map((_, i) => i), 'manual')
        // Deleted while it was out (a clear): nothing to record.
        .catch(() => undefined)
        .finally(() => {
          this.manualRunning--;
          this.manualQueued.delete(id);
          this.pumpManual();
          this.wakeIdle();
        });
    }
    this.wakeIdle();
  }

  private wakeIdle(): void {
    if (this.isIdle()) this.idleWaiters.splice(0).forEach((f) => f());
  }

  private isIdle(): boolean {
    return this.running.size === 0 && this.waiting.length === 0 && this.manualRunning === 0 && (this.stopped || this.manualQueue.length === 0);
  }

  enqueue(deliveries: ActiveDelivery[]): void {
    if (this.stopped) return;
    for (const d of deliveries) this.waiting.push(d);
    this.pump();
  }

  /** Time-warp changed: scheduled retries keep their simulated time, so their real wait scales. */
  settingsChanged(before: Settings, after: Settings): void {
    if (before.timeScale !== after.timeScale) {
      this.deps.store.deliveries.rescale(this.deps.now(), before.timeScale / after.timeScale);
      this.disarm();
      this.armFromStore();
    }
  }

  async replay(callId: number, opts: { urlIndex?: number; body?: string }): Promise<ReplayResult> {
    const { store } = this.deps;
    const call = store.calls.get(callId);
    if (!call) throw new HttpError(404, `not found: message ${callId}`);
    if (call.status === 'dropped') {
      throw new HttpError(409, `message ${callId} was dropped (${call.dropReason}); there is nothing to send`);
    }
    let d = store.deliveries.activeForCall(callId);
    if (!d) {
      // A delivery carries its own body; only a new one needs the call's normalized form.
      if (!call.normalized) throw new HttpError(409, `message ${callId} has nothing to send: ${call.normalizedNote ?? 'it has no normalized form'}`);
      d = await this.createForReplay(callId, call.sourceId, call.normalized);
    }
    if (opts.urlIndex !== undefined && !d.urls[opts.urlIndex]) {
      throw new HttpError(400, `urlIndex: the delivery has ${d.urls.length} URL(s)`);
    }
    if (opts.body !== undefined) {
      try {
        JSON.parse(opts.body);
      } catch (err) {
        throw new HttpError(400, `body: not valid JSON (${(err as Error).message})`);
      }
    }
    const indexes = opts.urlIndex !== undefined ? [opts.urlIndex] : d.urls.map((_, i) => i);
    const attempts = await this.runManual(d, indexes, 'replay', opts.body !== undefined ? Buffer.from(opts.body) : undefined);
    return { deliveryId: d.id, attempts };
  }

  /** Resolves when nothing is in flight (tests, shutdown). */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops scheduling; waits up to `graceMs` for rounds in flight. Unfinished ones resume at the next start. */
  async stop(graceMs = 2000): Promise<void> {
    this.stopped = true;
    this.disarm();
    this.waiting.length = 0;
    this.manualQueue.length = 0;
    this.manualQueued.clear();
    await Promise.race([this.idle(), new Promise((r) => setTimeout(r, graceMs).unref())]);
    this.abandoned = true;
  }

  private pump(): void {
    while (!this.stopped && this.running.size < this.concurrency && this.waiting.length > 0) {
      const d = this.waiting.shift()!;
      if (this.running.has(d.id)) continue;
      this.running.add(d.id);
      void this.runScheduled(d).finally(() => {
        this.running.delete(d.id);
        this.pump();
        this.wakeIdle();
      });
    }
  }

  private async runScheduled(d: ActiveDelivery): Promise<void> {
    const { store, sender, now, random } = this.deps;
    const settings = store.settings.get();
    const source = store.sources.get(d.sourceId);
    const startedAt = now();
    // A first attempt ends within milliseconds and `pending` is resumed at start just the same; only
    // retries (rarer, and found by the due-query) are worth a write to say they are in flight. The
    // inspector learns of every round in flight from memory (store.inFlight).
    if (d.round > 0) void store.writes.run(() => store.deliveries.setState(d.id, 'in_flight')).catch(() => undefined);
    const out = this.goingOut(d, d.pendingUrls, startedAt);
    try {
      const round = await sendRound(sender, d, d.pendingUrls, source, settings, d.round + 1, 'scheduled', now, undefined, out.onAnswer);
      // Past the shutdown grace the sender was closed under this round: its errors are ours, not the
      // receiver's. Leave the row in_flight; the next start sends it again (at least once).
      if (this.abandoned) return;
      const update = afterRound(d, round, settings, startedAt, now(), random);
      const recorded = await this.commit(d, update, round.attempts, out.round, true);
      if (recorded && update.state === 'retrying' && update.nextAttemptAt !== null) this.arm(update.nextAttemptAt);
    } finally {
      store.inFlight.end(d.id, out.round);
      // A cancel that came after this round's commit (or while abandoned) leaves nothing to apply.
      this.canceledWhileOut.delete(d.id);
    }
  }

  /** Registers a round as in flight, and what reports each URL's answer while others are out. */
  private goingOut(d: ActiveDelivery, urlIndexes: number[], at: number): { round: InFlightRound; onAnswer: Parameters<typeof sendRound>[9] } {
    const { store, onInFlight } = this.deps;
    const round = store.inFlight.start(d.id, urlIndexes, at);
    onInFlight?.(d.callId, d.id);
    return {
      round,
      onAnswer: (i, r, c) => {
        if (store.inFlight.answered(round, i, r.status, c.outcome)) onInFlight?.(d.callId, d.id);
      },
    };
  }

  private async runManual(d: ActiveDelivery, indexes: number[], trigger: AttemptTrigger, body?: Buffer): Promise<Attempt[]> {
    const { store, sender, now } = this.deps;
    const settings = store.settings.get();
    const source = store.sources.get(d.sourceId);
    const startedAt = now();
    const out = this.goingOut(d, indexes, startedAt);
    try {
      return await this.recordManual(d, await sendRound(sender, d, indexes, source, settings, d.round + 1, trigger, now, body, out.onAnswer), startedAt, out.round);
    } finally {
      store.inFlight.end(d.id, out.round);
    }
  }

  private async recordManual(d: ActiveDelivery, round: Awaited<ReturnType<typeof sendRound>>, startedAt: number, out: InFlightRound): Promise<Attempt[]> {
    const { store, now } = this.deps;
    const ok = round.classifications.some((c) => c.outcome === 'success');
    const fresh = store.deliveries.active(d.id) ?? d;
    // A successful replay settles the delivery; a failed one leaves its state (and schedule) alone.
    const settled: Omit<DeliveryUpdate, 'urlStates'> = {
      id: d.id,
      state: ok ? 'delivered' : fresh.state,
      pendingUrls: ok ? [] : fresh.pendingUrls,
      round: fresh.round + 1,
      attemptCount: fresh.attemptCount + round.attempts.length,
      nextAttemptAt: ok ? null : fresh.nextAttemptAt,
      nextSimOffsetMs: null,
      simElapsedMs: fresh.simElapsedMs,
      firstAttemptAt: fresh.firstAttemptAt ?? startedAt,
      lastAttemptAt: startedAt,
      lastDurationMs: Math.max(...round.attempts.map((a) => a.durationMs)),
      deliveredAt: ok ? now() : null,
      lastError: ok ? null : round.classifications.map((c) => c.reason).join('; '),
    };
    const update: DeliveryUpdate = { ...settled, urlStates: roundUrlStates(fresh.urlStates, round, settled) };
    const recorded = await this.commit(d, update, round.attempts, out);
    if (!recorded) throw new HttpError(404, `not found: message ${d.callId} was deleted while it was being sent`);
    return recorded;
  }

  /** Null when the delivery was deleted while its round was out (a purge): nothing is recorded then. */
  private async commit(d: ActiveDelivery, update: DeliveryUpdate, attempts: NewAttempt[], out: InFlightRound, scheduled = false): Promise<Attempt[] | null> {
    const { store } = this.deps;
    const ids = await store.writes.run(() => {
      // In the same synchronous step as the write: no summary counts this round both as in flight and as recorded.
      store.inFlight.end(d.id, out);
      // A scheduled round canceled while out: what it sent is recorded, but nothing more is scheduled
      // (unless it delivered the call, which is then the truth). A manual round reads the delivery's
      // state afresh (recordManual) and keeps canceled that way.
      const wasCanceled = scheduled && this.canceledWhileOut.delete(d.id);
      const final = wasCanceled && update.state !== 'delivered' ? canceled(update) : update;
      return store.deliveries.update(final) ? attempts.map((a) => store.deliveries.insertAttempt(a)) : null;
    });
    if (!ids) return null;
    // Built from what was written, not read back: one query fewer per round.
    const recorded = attempts.map((a, i) => attemptOf(ids[i], a, d.body));
    this.deps.onAttempts(d.callId, recorded);
    return recorded;
  }

  /**
   * A call that has no delivery (forwarding was off when it arrived, or its integrations left
   * Webhooks out) gets one now, planned from the source's current URLs, secret and settings.
   */
  private async createForReplay(callId: number, sourceId: string | null, call: NormalizedCall): Promise<ActiveDelivery> {
    const { store } = this.deps;
    const source = sourceId ? store.sources.get(sourceId) : undefined;
    if (!source) throw new HttpError(409, 'the source of this message no longer exists');
    const { urls, sharedSecret } = source.webhooks;
    const plan = planDelivery(call, { urls, sharedSecret }, store.settings.get());
    if (!plan) throw new HttpError(409, `source "${source.name}" has no Webhooks URL configured`);
    const id = await store.writes.run(() => store.deliveries.insert(callId, source.id, call.type, plan));
    return store.deliveries.active(id)!;
  }

  private arm(at: number): void {
    if (this.stopped || at >= this.timerAt) return;
    this.disarm();
    this.timerAt = at;
    const wait = Math.max(0, Math.min(at - this.deps.now(), 2 ** 31 - 1));
    this.timer = setTimeout(() => this.wake(), wait);
    this.timer.unref();
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = Infinity;
  }

  private armFromStore(): void {
    const next = this.deps.store.deliveries.nextDueAt();
    if (next !== null) this.arm(next);
  }

  private wake(): void {
    this.timer = null;
    this.timerAt = Infinity;
    if (this.stopped) return;
    const due = this.deps.store.deliveries.due(this.deps.now(), 1000).filter((d) => !this.running.has(d.id) && !this.waiting.some((w) => w.id === d.id));
    this.enqueue(due);
    // Re-arm once the picked rows say in_flight (their state writes are queued ahead of this job),
    // so the soonest due is a delivery not yet running.
    this.deps.store.writes.run(() => undefined).then(() => this.armFromStore(), () => undefined);
  }
}

/** Bulk-retried deliveries sent at once: a retry of thousands must not crowd out scheduled rounds. */
const MANUAL_CONCURRENCY = 16;


function canceled(u: DeliveryUpdate): DeliveryUpdate {
  return { ...u, state: 'canceled', pendingUrls: [], nextAttemptAt: null, nextSimOffsetMs: null, urlStates: canceledUrlStates(u.urlStates) };
}
