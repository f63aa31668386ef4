import type { Attempt, Settings } from '../../../shared/types';
import type { ReplayResult } from '../../../shared/api.contract';
import type { ActiveDelivery, CanceledDelivery, DeliveryUpdate, NewAttempt } from '../store/delivery.types';
import { RunQueue, type AskedRun } from './run-queue';
import type { RoundResult } from './round';
import { transition } from '../store/delivery-transition';
import { ManualRounds, type GoingOut } from './manual-rounds';
import { ActionsBatcher } from './actions-batcher';
import { attemptOf } from '../store/attempt-rows';
import { progressOf } from '../store/delivery-rows';
import type { InFlightRound } from '../store/url-states';
import type { StoppedSide } from '../../../shared/actions/mode';
import { LANE_QUEUE, LANE_REQUESTS } from './lanes';
import type { DispatcherDeps } from './dispatcher-deps';

export type { DispatcherDeps, OutDelivery } from './dispatcher-deps';
import { LaneScheduler } from './lane-scheduler';

/** Deliveries read from the store per page when resuming (start, storage back). */
const RESUME_PAGE = 500;


/**
 * Runs deliveries: new ones at once, retries when due (one timer for the soonest). Each URL's request
 * takes a slot in its receiver's lane (lanes.ts): a URL whose lane is full is not sent in this round
 * (deferred), and a delivery none of whose URLs has a slot waits in its lane, in memory up to the
 * lane's queue, past it as a parked row. So a receiver that never answers holds its own slots and
 * nothing else. Every state change goes through the write queue, so the inspector reads exactly what
 * was sent; nothing here is lost on a crash that a restart cannot resume. While storage fails
 * (store.health), the dispatcher pauses; when a write succeeds again it resumes from the rows.
 */
export class Dispatcher {
  private readonly running = new Set<number>();
  /** Which delivery goes out when: lanes, their memory queues and parked rows (lane-scheduler.ts). */
  private readonly scheduler: LaneScheduler;
  private paused = false;
  /** Scheduled rounds whose delivery was canceled while they were out (noteCanceled, commit). */
  private readonly canceledWhileOut = new Set<number>();
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Infinity;
  private stopped = false;
  private abandoned = false;
  private readonly idleWaiters: (() => void)[] = [];
  /** Replays and bulk retries: rounds a user asked for, beside the schedule. */
  private readonly manual: ManualRounds;
  /** Batched Actions mappings: calls waiting for their batch (actions-batcher.ts). */
  readonly batcher: ActionsBatcher;
  /** Where every round goes out, through the lanes (run-queue.ts). */
  private readonly runs: RunQueue;

  constructor(private readonly deps: DispatcherDeps) {
    this.scheduler = new LaneScheduler(
      { requests: deps.lanes?.requests ?? LANE_REQUESTS, queue: deps.lanes?.queue ?? LANE_QUEUE },
      {
        ledger: deps.store.ledger,
        launch: (d, sendable, deferred, release) => this.launch(d, sendable, deferred, release),
        running: (id) => this.running.has(id),
        open: () => !this.stopped && !this.paused,
        failed: (err) => this.failed(err),
      },
    );
    this.runs = new RunQueue({ sender: deps.sender, store: deps.store, now: deps.now, slot: (url) => this.scheduler.slot(url) });
    // A full disk pauses sending (no round could be recorded); the first write that commits resumes it.
    deps.store.health.onChange((s) => (s.ok ? this.resume() : this.pause()));
    this.manual = new ManualRounds(deps, {
      goingOut: (d, urlIndexes, at) => this.goingOut(d, urlIndexes, at),
      commit: (d, attempts, out, next) => this.commit(d, attempts, out, next),
      settled: () => this.wakeIdle(),
      run: (req) => this.runs.run(req),
    });
    this.batcher = new ActionsBatcher({
      store: deps.store,
      now: deps.now,
      enqueue: (d) => this.enqueue(d),
      touched: (callIds) => {
        for (const id of callIds) deps.onAttempts(id, []);
      },
      failed: (err) => this.failed(err),
    });
  }

  /** Resumes everything unfinished: pending and in-flight now (at least once), retries at their time. */
  start(): void {
    this.resumeFromStore();
    // Batches left waiting when the process stopped go out now.
    this.batcher.start().catch((err: unknown) => this.failed(err));
  }

  /**
   * Reads unfinished work back from the rows, a page at a time (never every body at once): each
   * delivery is admitted, queued or parked as if it had just arrived; lanes with parked rows claim
   * them as they free. Rounds still out are skipped (admit), so this is safe to run again.
   */
  private resumeFromStore(): void {
    const { store, now } = this.deps;
    try {
      this.scheduler.parked(store.deliveries.parkedLanes());
      const at = now();
      for (let after = 0; ; ) {
        const page = store.deliveries.resumable(at, after, RESUME_PAGE);
        this.scheduler.enqueue(page);
        this.scheduler.flushParks();
        if (page.length < RESUME_PAGE || this.paused) break;
        after = page[page.length - 1].id;
      }
      this.scheduler.drainParked();
      this.armFromStore();
    } catch (err) {
      this.failed(err);
    }
  }

  /** Storage failed: send nothing new; the rows keep everything (a round out records if it can). */
  private pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.disarm();
    this.scheduler.clear();
    this.wakeIdle();
  }

  private resume(): void {
    if (!this.paused || this.stopped) return;
    this.paused = false;
    this.resumeFromStore();
    // Batches whose flush failed meanwhile are still waiting in SQLite: they go out now.
    this.batcher.start().catch((err: unknown) => this.failed(err));
  }

  /**
   * A round, a claim or a park failed. A storage failure pauses (store.health's listener); the
   * delivery's row is unchanged, so the resume sends it again. Anything else is a bug: logged, and
   * the row is resumed at the next start.
   */
  private failed(err: unknown): void {
    if (!this.deps.store.health.noteError(err)) this.deps.onError?.(err);
  }

  /**
   * Ends the source's unfinished deliveries as canceled: those waiting here are dropped, the rest
   * marked in the store; a round already out is recorded when it ends but not retried (commit).
   */
  async cancelSource(sourceId: string, reason: string, side: StoppedSide = 'all'): Promise<number> {
    const kind = side === 'all' ? undefined : side;
    this.scheduler.drop((d) => d.sourceId === sourceId && (!kind || d.kind === kind));
    const { store } = this.deps;
    const canceled = await store.writes.run((tx) => this.noteCanceled(store.ledger.cancelOfSource(tx, sourceId, reason, kind)));
    for (const c of canceled) for (const id of this.callsOf(c.deliveryId, c.callId, c.itemCount)) this.deps.onAttempts(id, []);
    // Calls waiting in its Actions batches: canceled as well (each batch shows as a canceled delivery).
    return canceled.length + (side === 'classic' ? 0 : await this.batcher.cancelSource(sourceId, reason));
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
    // First: a batch flushed meanwhile has its delivery queued or running by the time this resolves.
    let canceled = await this.batcher.dropUpTo(maxCallId);
    this.scheduler.drop((d) => d.callId <= maxCallId);
    const { store } = this.deps;
    for (;;) {
      const n = (await store.writes.run((tx) => this.noteCanceled(store.ledger.cancelUpTo(tx, maxCallId, reason, chunk)))).length;
      canceled += n;
      if (n < chunk) return canceled;
    }
  }

  /** Sends these deliveries again to every URL, in the background (manual-rounds.ts). Returns how many were queued. */
  retryInBackground(deliveries: { id: number; lanes: string[] }[]): number {
    return this.manual.retryInBackground(deliveries);
  }

  /**
   * A round asked for outside the dispatcher (the receiver check's requests): it enters the run queue
   * like every round and waits for its lane, so a receiver's lane bounds everything sent to it.
   */
  run(req: AskedRun): Promise<RoundResult> {
    return this.runs.run(req);
  }

  /** Refuses every request waiting for a lane slot, and any asked for from now on (the lab is stopping). */
  closeLanes(): void {
    this.scheduler.close();
  }

  /** Sends a call's delivery again now, with the source's current secret and settings (manual-rounds.ts). */
  replay(callId: number, opts: { urlIndex?: number; body?: string; deliveryId?: number }): Promise<ReplayResult> {
    return this.manual.replay(callId, opts);
  }

  private wakeIdle(): void {
    if (this.isIdle()) this.idleWaiters.splice(0).forEach((f) => f());
  }

  private isIdle(): boolean {
    return this.running.size === 0 && this.scheduler.heldCount === 0 && this.manual.isIdle();
  }

  /** Deliveries just made (arrivals, a flushed batch): each goes out, waits in its lane, or is parked. */
  enqueue(deliveries: ActiveDelivery[]): void {
    this.scheduler.enqueue(deliveries);
  }

  /** One scheduled round of the URLs the scheduler gave slots to; each slot goes back as its URL answers, the rest when the round ends. */
  private launch(d: ActiveDelivery, sendable: number[], deferred: number[], release: (urlIndex: number) => void): void {
    this.running.add(d.id);
    this.runScheduled(d, sendable, deferred, release)
      .then((again) => {
        for (const i of sendable) release(i);
        this.running.delete(d.id);
        // Only URLs that waited for a slot are left: they go now, in their lanes.
        if (again) this.scheduler.enqueue([again]);
      })
      .catch((err: unknown) => {
        for (const i of sendable) release(i);
        this.running.delete(d.id);
        this.failed(err);
      })
      .finally(() => this.wakeIdle());
  }

  /** Time-warp changed: scheduled retries keep their simulated time, so their real wait scales. */
  settingsChanged(before: Settings, after: Settings): void {
    if (before.timeScale !== after.timeScale) {
      this.deps.store.ledger.rescale(this.deps.now(), before.timeScale / after.timeScale);
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
    this.scheduler.flushParks();
    this.stopped = true;
    this.disarm();
    this.batcher.stop();
    this.scheduler.clear();
    this.scheduler.close();
    this.manual.stop();
    await Promise.race([this.idle(), new Promise((r) => setTimeout(r, graceMs).unref())]);
    this.abandoned = true;
  }

  /**
   * One scheduled round to the URLs that have a slot. Returns the delivery read back when only
   * deferred URLs are left (to be admitted again at once), else null.
   */
  private async runScheduled(d: ActiveDelivery, sendable: number[], deferred: number[], release: (i: number) => void): Promise<ActiveDelivery | null> {
    const { store, now, random } = this.deps;
    const settings = store.settings.get();
    const startedAt = now();
    // A first attempt ends within milliseconds and `pending` is resumed at start just the same; only
    // retries (rarer, and found by the due-query) are worth a write to say they are in flight. The
    // inspector learns of every round in flight from memory (store.inFlight).
    if (d.round > 0) store.writes.run((tx) => store.ledger.markInFlight(tx, d.id)).catch((err: unknown) => this.failed(err));
    const out = this.goingOut(d, sendable, startedAt, release);
    let written = false;
    try {
      const round = await this.runs.run({ delivery: d, urls: sendable, trigger: 'scheduled', onAnswer: out.onAnswer });
      // Past the shutdown grace the sender was closed under this round: its errors are ours, not the
      // receiver's. Leave the row in_flight; the next start sends it again (at least once).
      if (this.abandoned) return null;
      const waited = withWait(d, startedAt, settings.timeScale);
      const finishedAt = now();
      // Where the round fell in the schedule's (warped) time: the inspector shows it beside the wall clock.
      const attempts = round.attempts.map((a) => ({ ...a, simOffsetMs: waited.simElapsedMs }));
      // The next retry is planned on the settings as they are when it is written: a time-warp changed
      // while the round was out has rescaled every other retry already (settingsChanged).
      const next = (canceledWhileOut: boolean) =>
        transition(waited, { kind: 'round', trigger: 'scheduled', answers: round, startedAt, finishedAt, schedule: { settings: store.settings.get(), random }, deferred, canceledWhileOut });
      const recorded = await this.commit(d, attempts, out.round, next, true);
      written = true;
      if (!recorded) return null;
      const { update } = recorded;
      if (update.state !== 'retrying' || update.nextAttemptAt === null) return null;
      if (update.nextAttemptAt > now()) {
        this.arm(update.nextAttemptAt);
        return null;
      }
      return store.deliveries.active(d.id) ?? null;
    } finally {
      out.end(written);
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

  /**
   * Registers a round as in flight, and what reports each URL's answer while others are out (and
   * gives its lane slot back at once: a slow URL of the same round must not hold the others' lanes).
   */
  private goingOut(d: ActiveDelivery, urlIndexes: number[], at: number, release?: (urlIndex: number) => void): GoingOut {
    const { store, onInFlight } = this.deps;
    const round = store.inFlight.start(d.id, urlIndexes, at);
    if (onInFlight) for (const id of this.callsOf(d.id, d.callId, d.itemCount)) onInFlight(id, d);
    return {
      round,
      onAnswer: (i, r, c, attempt) => {
        release?.(i);
        if (store.inFlight.answered(round, i, r.status, c.outcome, attempt)) onInFlight?.(d.callId, d);
      },
      end: (written) => {
        store.inFlight.end(d.id, round);
        // Its write failed (storage): what showed it in flight must be told it is not (the inspector
        // reads the detail again); a written round told so with its attempts. Not past the shutdown
        // grace: a round abandoned there is resumed at the next start, and the store may be closed.
        if (!written && !this.abandoned) for (const id of this.callsOf(d.id, d.callId, d.itemCount)) this.deps.onAttempts(id, []);
      },
    };
  }

  /**
   * Records a round: `next` gives the delivery's new state (delivery-transition.ts), asked inside the
   * write job, told whether a cancel came while the round was out (only a scheduled round's is
   * noted: noteCanceled). Null when the delivery was deleted meanwhile (a purge): nothing is recorded then.
   */
  private async commit(
    d: ActiveDelivery,
    attempts: NewAttempt[],
    out: InFlightRound,
    next: (canceledWhileOut: boolean) => DeliveryUpdate,
    scheduled = false,
  ): Promise<{ attempts: Attempt[]; update: DeliveryUpdate } | null> {
    const { store } = this.deps;
    let written: DeliveryUpdate | null = null;
    const ids = await store.writes.run((tx) => {
      // In the same synchronous step as the write: no summary counts this round both as in flight and as recorded.
      store.inFlight.end(d.id, out);
      // A manual round reads the delivery afresh (manual-rounds.ts), so keeps a cancel that way; the
      // mark stays for the scheduled round it was made for.
      written = next(scheduled && this.canceledWhileOut.delete(d.id));
      return store.ledger.recordRound(tx, written, attempts);
    });
    if (!ids || !written) return null;
    const update: DeliveryUpdate = written;
    // Built from what was written, not read back: one query fewer per round.
    const recorded = attempts.map((a, i) => attemptOf(ids[i], a, d));
    this.deps.onAttempts(d.callId, recorded, progressOf(update));
    // The other members of a batch: their rows show the same outcome (attempts are listed once, under the first).
    if (d.itemCount > 1) for (const id of this.callsOf(d.id, d.callId, d.itemCount)) if (id !== d.callId) this.deps.onAttempts(id, []);
    return { attempts: recorded, update };
  }

  private arm(at: number): void {
    if (this.stopped || this.paused || at >= this.timerAt) return;
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
    if (this.stopped || this.paused) return;
    try {
      // Running and held ones are skipped by admit; parked ones are not due (their lane claims them).
      this.scheduler.enqueue(this.deps.store.deliveries.due(this.deps.now(), 1000));
      this.scheduler.flushParks();
    } catch (err) {
      return this.failed(err);
    }
    // Re-arm once the picked rows say in_flight or parked (their writes are queued ahead of this job),
    // so the soonest due is a delivery not yet running.
    this.deps.store.writes.run(() => undefined).then(() => this.armFromStore(), (err: unknown) => this.failed(err));
  }
}

/**
 * A retry that went out later than planned (it waited for its lane) has used that time of its window
 * too: its simulated elapsed time is where the schedule planned it plus the wait, warped like the
 * delays are. Without this, a delivery to a receiver that never answers could outlive the 4 h window.
 */
export function withWait(d: ActiveDelivery, startedAt: number, timeScale: number): ActiveDelivery {
  const late = d.round > 0 && d.nextAttemptAt !== null ? startedAt - d.nextAttemptAt : 0;
  return late > 0 ? { ...d, simElapsedMs: d.simElapsedMs + Math.round(late * timeScale) } : d;
}

