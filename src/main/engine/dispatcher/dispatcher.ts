import type { Attempt, Settings } from '../../../shared/types';
import type { ReplayResult } from '../../../shared/api.contract';
import type { Store } from '../store/store';
import type { ActiveDelivery, CanceledDelivery, DeliveryUpdate, NewAttempt } from '../store/delivery.types';
import type { HttpSender } from './http-sender';
import { afterRound, sendRound } from './round';
import { ManualRounds, type GoingOut } from './manual-rounds';
import { ActionsBatcher } from './actions-batcher';
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
  /** Replays and bulk retries: rounds a user asked for, beside the schedule. */
  private readonly manual: ManualRounds;
  /** Batched Actions mappings: calls waiting for their batch (actions-batcher.ts). */
  readonly batcher: ActionsBatcher;

  constructor(private readonly deps: DispatcherDeps) {
    this.concurrency = deps.concurrency ?? 256;
    this.manual = new ManualRounds(deps, {
      goingOut: (d, urlIndexes, at) => this.goingOut(d, urlIndexes, at),
      commit: (d, update, attempts, out) => this.commit(d, update, attempts, out),
      settled: () => this.wakeIdle(),
    });
    this.batcher = new ActionsBatcher({
      store: deps.store,
      now: deps.now,
      enqueue: (d) => this.enqueue(d),
      touched: (callIds) => {
        for (const id of callIds) deps.onAttempts(id, []);
      },
    });
  }

  /** Resumes everything unfinished: pending and in-flight now (at least once), retries at their time. */
  start(): void {
    const now = this.deps.now();
    const resume = this.deps.store.deliveries.unfinished();
    this.enqueue(resume.filter((d) => d.state !== 'retrying' || (d.nextAttemptAt ?? 0) <= now));
    this.armFromStore();
    // Batches left waiting when the process stopped go out now.
    void this.batcher.start().catch(() => undefined);
  }

  /**
   * Ends the source's unfinished deliveries as canceled: those waiting here are dropped, the rest
   * marked in the store; a round already out is recorded when it ends but not retried (commit).
   */
  async cancelSource(sourceId: string, reason: string): Promise<number> {
    for (let i = this.waiting.length - 1; i >= 0; i--) if (this.waiting[i].sourceId === sourceId) this.waiting.splice(i, 1);
    const { store } = this.deps;
    const canceled = await store.writes.run(() => this.noteCanceled(store.deliveries.cancelUnfinished(sourceId, reason)));
    for (const c of canceled) for (const id of this.callsOf(c.deliveryId, c.callId, c.itemCount)) this.deps.onAttempts(id, []);
    // Calls waiting in its Actions batches: canceled as well (each batch shows as a canceled delivery).
    return canceled.length + (await this.batcher.cancelSource(sourceId, reason));
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
   * Clearing every call: the calls up to this id leave their Actions batches (never sent), then
   * their unfinished deliveries end as canceled (in small write jobs), so nothing waiting or
   * scheduled sends them while their rows are deleted; a round already out finds its delivery gone
   * and records nothing. Returns how many deliveries and batch items were canceled.
   */
  async cancelUpTo(maxCallId: number, reason: string, chunk: number): Promise<number> {
    // First: a batch flushed meanwhile has its delivery in `waiting` or running by the time this resolves.
    let canceled = await this.batcher.dropUpTo(maxCallId);
    for (let i = this.waiting.length - 1; i >= 0; i--) if (this.waiting[i].callId <= maxCallId) this.waiting.splice(i, 1);
    const { store } = this.deps;
    for (;;) {
      const n = (await store.writes.run(() => this.noteCanceled(store.deliveries.cancelUnfinishedUpTo(maxCallId, reason, chunk)))).length;
      canceled += n;
      if (n < chunk) return canceled;
    }
  }

  /** Sends these deliveries again to every URL, in the background (manual-rounds.ts). Returns how many were queued. */
  retryInBackground(deliveryIds: number[]): number {
    return this.manual.retryInBackground(deliveryIds);
  }

  /** Sends a call's delivery again now, with the source's current secret and settings (manual-rounds.ts). */
  replay(callId: number, opts: { urlIndex?: number; body?: string; deliveryId?: number }): Promise<ReplayResult> {
    return this.manual.replay(callId, opts);
  }

  private wakeIdle(): void {
    if (this.isIdle()) this.idleWaiters.splice(0).forEach((f) => f());
  }

  private isIdle(): boolean {
    return this.running.size === 0 && this.waiting.length === 0 && this.manual.isIdle();
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

  /** Resolves when nothing is in flight (tests, shutdown). */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops scheduling; waits up to `graceMs` for rounds in flight. Unfinished ones resume at the next start. */
  async stop(graceMs = 2000): Promise<void> {
    this.stopped = true;
    this.disarm();
    this.batcher.stop();
    this.waiting.length = 0;
    this.manual.stop();
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

  /**
   * The calls whose summaries show a delivery: its call, or every member of an Actions batch (the
   * inspector's rows of all of them change with its rounds). One indexed read, for batches only.
   */
  private callsOf(deliveryId: number, callId: number, itemCount: number): number[] {
    return itemCount > 1 ? this.deps.store.deliveries.callsOf(deliveryId) : [callId];
  }

  /** Registers a round as in flight, and what reports each URL's answer while others are out. */
  private goingOut(d: ActiveDelivery, urlIndexes: number[], at: number): GoingOut {
    const { store, onInFlight } = this.deps;
    const round = store.inFlight.start(d.id, urlIndexes, at);
    if (onInFlight) for (const id of this.callsOf(d.id, d.callId, d.itemCount)) onInFlight(id, d.id);
    return {
      round,
      onAnswer: (i, r, c) => {
        if (store.inFlight.answered(round, i, r.status, c.outcome)) onInFlight?.(d.callId, d.id);
      },
    };
  }

  /** Null when the delivery was deleted while its round was out (a purge): nothing is recorded then. */
  private async commit(d: ActiveDelivery, update: DeliveryUpdate, attempts: NewAttempt[], out: InFlightRound, scheduled = false): Promise<Attempt[] | null> {
    const { store } = this.deps;
    const ids = await store.writes.run(() => {
      // In the same synchronous step as the write: no summary counts this round both as in flight and as recorded.
      store.inFlight.end(d.id, out);
      // A scheduled round canceled while out: what it sent is recorded, but nothing more is scheduled
      // (unless it delivered the call, which is then the truth). A manual round reads the delivery's
      // state afresh (manual-rounds.ts) and keeps canceled that way.
      const wasCanceled = scheduled && this.canceledWhileOut.delete(d.id);
      const final = wasCanceled && update.state !== 'delivered' ? canceled(update) : update;
      return store.deliveries.update(final) ? attempts.map((a) => store.deliveries.insertAttempt(a)) : null;
    });
    if (!ids) return null;
    // Built from what was written, not read back: one query fewer per round.
    const recorded = attempts.map((a, i) => attemptOf(ids[i], a, d));
    this.deps.onAttempts(d.callId, recorded);
    // The other members of a batch: their rows show the same outcome (attempts are listed once, under the first).
    if (d.itemCount > 1) for (const id of this.callsOf(d.id, d.callId, d.itemCount)) if (id !== d.callId) this.deps.onAttempts(id, []);
    return recorded;
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

function canceled(u: DeliveryUpdate): DeliveryUpdate {
  return { ...u, state: 'canceled', pendingUrls: [], nextAttemptAt: null, nextSimOffsetMs: null, urlStates: canceledUrlStates(u.urlStates) };
}
