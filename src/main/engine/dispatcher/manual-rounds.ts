import type { Attempt, AttemptTrigger, NormalizedCall } from '../../../shared/types';
import type { ReplayResult } from '../../../shared/api.contract';
import { HttpError } from '../errors';
import { ValidationError } from '../../../shared/validation-error';
import { withoutOmitted } from '../../../shared/tracking-plan.schema';
import type { ActiveDelivery, DeliveryUpdate, NewAttempt } from '../store/delivery.types';
import type { InFlightRound } from '../store/url-states';
import { neverSent, planDelivery, resendableWithoutSource, targetOf } from './delivery-plan';
import type { RoundRequest, RoundResult } from './round';
import type { AskedRun } from './run-queue';
import { transition, type DeliveryEvent } from '../store/delivery-transition';
import type { DispatcherDeps } from './dispatcher-deps';

/** A round registered as in flight, and what reports each URL's answer while others are out. */
export interface GoingOut {
  round: InFlightRound;
  onAnswer: RoundRequest['onAnswer'];
  /** The round is over: forgotten as in flight; when it was not written (a failure), its calls are touched. */
  end(written: boolean): void;
}

/** What manual rounds share with the scheduler (dispatcher.ts): how a round goes out and is recorded. */
export interface RoundRecorder {
  goingOut(d: ActiveDelivery, urlIndexes: number[], at: number): GoingOut;
  /** Records a round, `next` giving the delivery's new state inside the write job; null when the delivery was deleted while its round was out. */
  commit(d: ActiveDelivery, attempts: NewAttempt[], out: InFlightRound, next: () => DeliveryUpdate): Promise<{ attempts: Attempt[] } | null>;
  /** A manual round ended or none could start: the dispatcher may now be idle. */
  settled(): void;
  /** Sends a round through the run queue: its requests wait for their lanes' slots like any other (run-queue.ts). */
  run(req: AskedRun): Promise<RoundResult>;
}

/**
 * Bulk-retried rounds out at once through one receiver lane, and in all: a retry of thousands must not
 * crowd out scheduled rounds, and a retry to a receiver that stopped answering (each round waiting out
 * its timeout) must not hold up one to any other receiver.
 */
const PER_LANE = 16;
const CONCURRENCY = 64;

/**
 * Rounds a user asks for, beside the schedule: a replay of one call (to one URL or all, optionally
 * with an edited body) and bulk retries of failed deliveries. Both send with the source's current
 * secret and settings, the one way to do so (a scheduled round resends its delivery's own request),
 * and leave the delivery's schedule alone unless they deliver it. Each URL's request waits for a slot
 * in its receiver's lane like a scheduled one (issue 41): a bulk retry to a receiver that stopped
 * answering adds nothing to what that receiver holds.
 */
export class ManualRounds {
  /**
   * Deliveries a bulk retry queued (retryMatching), a queue per set of lanes their URLs go through,
   * the sets taken in turn (a set that started one goes to the back); one starts only while every
   * lane it goes through has fewer than PER_LANE of them out, and CONCURRENCY are out in all.
   */
  private readonly queues = new Map<string, { lanes: string[]; ids: number[] }>();
  private readonly outPerLane = new Map<string, number>();
  private readonly queued = new Set<number>();
  private running = 0;
  private stopped = false;

  constructor(
    private readonly deps: DispatcherDeps,
    private readonly rounds: RoundRecorder,
  ) {}

  /**
   * Sends these deliveries again as manual rounds to every URL (retryMatching), in the background
   * (`lanes`: lanesOf its URLs); each is read again when its turn comes and skipped unless it is still
   * failed or expired. Returns how many were queued (one already queued is not queued twice).
   */
  retryInBackground(deliveries: { id: number; lanes: string[] }[]): number {
    let queued = 0;
    for (const { id, lanes } of deliveries) {
      if (this.stopped || this.queued.has(id)) continue;
      const key = lanes.join('\n');
      const q = this.queues.get(key);
      if (q) q.ids.push(id);
      else this.queues.set(key, { lanes, ids: [id] });
      this.queued.add(id);
      queued++;
    }
    this.pump();
    return queued;
  }

  /** Starts queued rounds while there is room: one from each set whose lanes have room, in turn. */
  private pump(): void {
    let progressed = true;
    while (!this.stopped && this.running < CONCURRENCY && progressed) {
      progressed = false;
      for (const [key, q] of [...this.queues]) {
        if (this.running >= CONCURRENCY) break;
        if (q.lanes.some((l) => (this.outPerLane.get(l) ?? 0) >= PER_LANE)) continue;
        const id = q.ids.shift()!;
        // To the back of the turn (or gone when empty): the sets after it go first next time.
        this.queues.delete(key);
        if (q.ids.length > 0) this.queues.set(key, q);
        // Started, or skipped (no longer failed): either way the next of this set may go.
        this.start(id, q.lanes);
        progressed = true;
      }
    }
    this.rounds.settled();
  }

  /** One queued delivery's round, unless it no longer needs one. */
  private start(id: number, lanes: string[]): void {
    const d = this.deps.store.deliveries.active(id);
    // A deleted source's signed delivery would go out unsigned (a retry signs with the current secret).
    if (!d || (d.state !== 'failed' && d.state !== 'expired') || neverSent(d) || !(this.deps.store.sources.get(d.sourceId) || resendableWithoutSource(d, false))) {
      this.queued.delete(id);
      return;
    }
    this.running++;
    for (const l of lanes) this.outPerLane.set(l, (this.outPerLane.get(l) ?? 0) + 1);
    void this.run(d, d.urls.map((_, i) => i), 'manual')
      // Deleted while it was out (a clear): nothing to record.
      .catch(() => undefined)
      .finally(() => {
        this.running--;
        for (const l of lanes) {
          const left = (this.outPerLane.get(l) ?? 1) - 1;
          if (left > 0) this.outPerLane.set(l, left);
          else this.outPerLane.delete(l);
        }
        this.queued.delete(id);
        this.pump();
        this.rounds.settled();
      });
  }

  /** No bulk retry running, and none waiting to (once stopped, those queued never will). */
  isIdle(): boolean {
    return this.running === 0 && (this.stopped || this.queues.size === 0);
  }

  /** Nothing more starts; rounds already out are recorded when they end. */
  stop(): void {
    this.stopped = true;
    this.queues.clear();
    this.queued.clear();
  }

  async replay(callId: number, opts: { urlIndex?: number; body?: string; deliveryId?: number }): Promise<ReplayResult> {
    const { store } = this.deps;
    const call = store.calls.get(callId);
    if (!call) throw new HttpError(404, `not found: message ${callId}`);
    if (call.status === 'dropped') {
      throw new HttpError(409, `message ${callId} was dropped (${call.dropReason}); there is nothing to send`);
    }
    // Blocked by its source's tracking plan: the plan decided it is not forwarded, a replay included (docs/tracking-plans.md).
    if (call.status === 'blocked') throw new HttpError(409, `message ${callId} was ${call.dropReason ?? 'blocked by tracking plan'}; it is not sent`);
    // A given delivery must carry the call; without one, its Classic delivery, else (an Actions-only
    // call) its first Actions delivery, else a Classic one made now.
    let d = opts.deliveryId !== undefined ? this.carrying(callId, opts.deliveryId) : (store.deliveries.activeForCall(callId) ?? store.deliveries.actionsForCall(callId)[0]);
    if (!d) {
      // A delivery carries its own body; only a new one needs the call's normalized form.
      if (!call.normalized) throw new HttpError(409, `message ${callId} has nothing to send: ${call.normalizedNote ?? 'it has no normalized form'}`);
      d = await this.createForReplay(callId, call.sourceId, call.normalized);
    }
    // A replay signs with the source's current secrets: with the source deleted (its secrets retired)
    // a signed request would go out unsigned, which the receiver refuses for a reason the lab made.
    // One that loses nothing is resent as it first went.
    if (!store.sources.get(d.sourceId) && !resendableWithoutSource(d, opts.body !== undefined)) {
      const why = d.frozen === null ? 'its delivery is older than the lab keeping each request as first sent, so it may have been signed' : 'its request was signed';
      throw new HttpError(409, `the source of message ${callId} no longer exists and ${why}: a replay signs with the source's current secret, so there is nothing to sign with`);
    }
    if (neverSent(d) && d.urls.some((u) => !URL.canParse(u.url))) {
      throw new HttpError(409, `delivery ${d.id} was never sent: its mapping's URL or headers did not resolve to something that can be sent for this call (its last error says why), so there is nowhere to send it`);
    }
    if (opts.body === undefined && neverSent(d)) {
      throw new HttpError(409, `delivery ${d.id} was never sent (its last error says why), so there is no request to send again; replay it with an edited body`);
    }
    if (opts.urlIndex !== undefined && !d.urls[opts.urlIndex]) {
      throw new ValidationError([{ path: 'urlIndex', message: `the delivery has ${d.urls.length} URL(s): 0 to ${d.urls.length - 1}` }]);
    }
    if (opts.body !== undefined) {
      try {
        JSON.parse(opts.body);
      } catch (err) {
        throw new ValidationError([{ path: 'body', message: `not valid JSON (${(err as Error).message})` }]);
      }
    }
    const indexes = opts.urlIndex !== undefined ? [opts.urlIndex] : d.urls.map((_, i) => i);
    const attempts = await this.run(d, indexes, 'replay', opts.body !== undefined ? Buffer.from(opts.body) : undefined);
    return { deliveryId: d.id, attempts };
  }

  private carrying(callId: number, deliveryId: number): ActiveDelivery {
    const { deliveries } = this.deps.store;
    const classic = deliveries.activeForCall(callId);
    const d = classic?.id === deliveryId ? classic : deliveries.actionsForCall(callId).find((x) => x.id === deliveryId);
    if (!d) throw new HttpError(404, `not found: delivery ${deliveryId} of message ${callId}`);
    return d;
  }

  private async run(d: ActiveDelivery, indexes: number[], trigger: AskedRun['trigger'], body?: Buffer): Promise<Attempt[]> {
    const out = this.rounds.goingOut(d, indexes, this.deps.now());
    let written = false;
    try {
      const round = await this.rounds.run({ delivery: d, urls: indexes, trigger, body, onAnswer: out.onAnswer });
      // Its attempts' own start (a URL may have waited for its lane), not when it was asked for.
      const attempts = await this.record(d, round, trigger, Math.min(...round.attempts.map((a) => a.startedAt)), out.round);
      written = true;
      return attempts;
    } catch (err) {
      // The delivery was deleted while the round was out: nothing is left to tell.
      if (err instanceof HttpError && err.status === 404) written = true;
      throw err;
    } finally {
      out.end(written);
    }
  }

  private async record(d: ActiveDelivery, round: RoundResult, trigger: AttemptTrigger, startedAt: number, out: InFlightRound): Promise<Attempt[]> {
    const { store, now, random } = this.deps;
    const answered: DeliveryEvent = { kind: 'round', trigger, answers: round, startedAt, finishedAt: now(), schedule: { settings: store.settings.get(), random } };
    // Read afresh inside the write job: a successful replay settles the delivery, a failed one leaves its state (and schedule) as it is now.
    const recorded = await this.rounds.commit(d, round.attempts, out, () => transition(store.deliveries.active(d.id) ?? d, answered));
    if (!recorded) throw new HttpError(404, `not found: message ${d.callId} was deleted while it was being sent`);
    return recorded.attempts;
  }

  /**
   * A call that has no delivery (forwarding was off when it arrived, or its integrations left
   * Webhooks out) gets one now, planned from the source's current URLs, secrets and settings, with a
   * webhook-id of its own that every later replay sends again. It is made `failed`, not `pending`:
   * it exists for the replay asked for, so if that replay fails nothing sends it again, at the next
   * start or ever, unless someone replays it again (README, Decisions).
   */
  private async createForReplay(callId: number, sourceId: string | null, call: NormalizedCall): Promise<ActiveDelivery> {
    const { store } = this.deps;
    const source = sourceId ? store.sources.get(sourceId) : undefined;
    if (!source) throw new HttpError(409, 'the source of this message no longer exists');
    // What ingest would have forwarded: the properties its tracking plan omitted are left out (the
    // stored call keeps them). An edited replay sends what was typed (README, Decisions).
    const plan = planDelivery(withoutOmitted(call, this.deps.omittedByPlan(callId)), targetOf(source), store.settings.get());
    if (!plan) throw new HttpError(409, `source "${source.name}" has no Webhooks URL configured`);
    return store.writes.run((tx) => store.ledger.createForReplay(tx, callId, source.id, call.type, plan));
  }
}
