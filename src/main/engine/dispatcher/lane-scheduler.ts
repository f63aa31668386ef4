import type { ActiveDelivery } from '../store/delivery.types';
import type { DeliveryLedger } from '../store/delivery-ledger';
import { HttpError } from '../errors';
import { laneKey, Lanes, type Lane, type LaneLimits } from './lanes';

/** A request that waited for its lane was refused because the dispatcher stopped (the lab is stopping): a 503. */
export class LaneClosedError extends HttpError {
  constructor() {
    super(503, 'the lab is stopping: the request waited for its receiver lane and was not sent');
    this.name = 'LaneClosedError';
  }
}

// Which delivery goes out when (issue 22): each URL's request takes a slot in its receiver's lane
// (lanes.ts). A URL whose lane is full is deferred to the delivery's next round; a delivery none of
// whose URLs has a slot waits in its first URL's lane, in memory up to the lane's queue, past it as a
// parked row that the lane claims back as it frees. The dispatcher runs the rounds (dispatcher.ts).
// Requests the schedule does not admit (a bulk retry's, a replay's, a receiver check's: issue 41)
// ask for a slot per URL (slot()) and wait for it in the lane, served first as it frees: someone is
// waiting for those.

export interface LaneSchedulerDeps {
  /** Where parked deliveries are written and claimed back (the store's delivery ledger). */
  ledger: Pick<DeliveryLedger, 'park' | 'claimParked'>;
  /** Sends these URLs of the delivery now (their slots are taken); `release(i)` gives one back. */
  launch(d: ActiveDelivery, sendable: number[], deferred: number[], release: (urlIndex: number) => void): void;
  /** Whether a round of this delivery is out now (it is not admitted twice). */
  running(id: number): boolean;
  /** False while stopped or paused: nothing is admitted. */
  open(): boolean;
  /** A park or a claim failed (a full disk): the rows stay as they are, and the resume reads them. */
  failed(err: unknown): void;
}

export class LaneScheduler {
  readonly lanes: Lanes;
  /** Deliveries waiting in a lane's memory queue. */
  private readonly held = new Set<number>();
  /** Rows to park, written together at the end of the tick (or before a claim). */
  private parks: { id: number; lane: string }[] = [];
  private parkFlush: NodeJS.Immediate | null = null;
  /** Lanes that freed slots this tick: drained once, at the end of it. */
  private readonly freed = new Set<Lane>();
  private drainTimer: NodeJS.Immediate | null = null;
  /** Stopped: slot() refuses. */
  private closed = false;

  constructor(
    limits: LaneLimits,
    private readonly deps: LaneSchedulerDeps,
  ) {
    this.lanes = new Lanes(limits);
  }

  /** Deliveries waiting in memory (not idle while any do). */
  get heldCount(): number {
    return this.held.size;
  }

  /** These deliveries, as they arrive or are read back; their parks are written at the end of the tick. */
  enqueue(deliveries: ActiveDelivery[]): void {
    for (const d of deliveries) this.admit(d);
    this.scheduleParkFlush();
  }

  /**
   * Sends a delivery's pending URLs that have a free slot in their lanes now; the others are
   * deferred to its next round. With no free slot at all, it waits in its first URL's lane: a new
   * delivery in the lane's memory queue while there is room (and nothing of the lane is parked,
   * keeping the order), anything else as a parked row — a retry always, so that the due query and the
   * retry timer, which skip parked rows, never see a retry that is only waiting for its lane.
   */
  admit(d: ActiveDelivery, drained?: Lane): void {
    if (!this.deps.open() || this.deps.running(d.id) || this.held.has(d.id) || d.pendingUrls.length === 0) return;
    const sendable: number[] = [];
    const deferred: number[] = [];
    for (const i of d.pendingUrls) {
      const lane = this.lanes.get(laneKey(d.urls[i].url));
      // Requests waiting for a slot (slot()) go first, up to their share; the lane being drained has
      // already given this delivery its turn (drain).
      if (this.lanes.hasRoom(lane) && (lane === drained || !this.slotsFirst(lane))) {
        lane.active++;
        sendable.push(i);
      } else deferred.push(i);
    }
    if (sendable.length > 0) return this.deps.launch(d, sendable, deferred, this.releaser(d));
    const lane = this.lanes.get(laneKey(d.urls[d.pendingUrls[0]].url));
    if (d.state !== 'retrying' && this.lanes.canQueue(lane)) {
      lane.queue.push(d);
      this.held.add(d.id);
    } else {
      lane.parkedInDb = true;
      this.parks.push({ id: d.id, lane: lane.key });
    }
  }

  /** Gives a URL's slot back once (as it answers, and again when its round ends: the second is a no-op). */
  private releaser(d: ActiveDelivery): (urlIndex: number) => void {
    const released = new Set<number>();
    return (i) => {
      if (released.has(i)) return;
      released.add(i);
      this.free(this.lanes.get(laneKey(d.urls[i].url)));
    };
  }

  /**
   * A slot in the URL's lane for a request the schedule did not admit (a bulk retry's, a replay's, a
   * receiver check's): at once when the lane has room and nobody waits before it, else when the lane
   * frees, before the deliveries waiting in it. Resolves to the slot's release (a second call is a
   * no-op); rejects with LaneClosedError when the dispatcher stops first.
   */
  slot(url: string): Promise<() => void> {
    if (this.closed) return Promise.reject(new LaneClosedError());
    const lane = this.lanes.get(laneKey(url));
    const take = (): (() => void) => {
      lane.active++;
      lane.bySlot++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        lane.bySlot--;
        this.free(lane);
      };
    };
    if (this.lanes.hasRoom(lane) && lane.waiting.length === 0) return Promise.resolve(take());
    return new Promise((resolve, reject) => lane.waiting.push({ grant: () => resolve(take()), refuse: reject }));
  }

  /**
   * Whether a freed slot goes to a request waiting for one rather than to a delivery: while they hold
   * less than half the lane, or no delivery waits for it. Someone is waiting for those requests, but
   * a bulk retry or several receiver checks at once must not starve the lane's own deliveries.
   */
  private slotsFirst(lane: Lane): boolean {
    if (lane.waiting.length === 0) return false;
    // Paused, no delivery is sent: the requests someone asked for may have every slot.
    const deliveriesWait = this.deps.open() && (lane.queue.length > 0 || lane.parkedInDb);
    return !deliveriesWait || lane.bySlot < Math.ceil(this.lanes.limits.requests / 2);
  }

  /** Nothing more is granted: requests waiting for a slot are refused (the dispatcher stops). */
  close(): void {
    this.closed = true;
    for (const lane of this.lanes.all()) for (const w of lane.waiting.splice(0)) w.refuse(new LaneClosedError());
  }

  private free(lane: Lane): void {
    lane.active--;
    this.freed.add(lane);
    this.drainTimer ??= setImmediate(() => {
      this.drainTimer = null;
      this.drainFreed();
    });
  }

  /** Lanes that have parked rows (at start, after a pause): each claims them as it frees. */
  parked(keys: string[]): void {
    for (const key of keys) this.lanes.get(key).parkedInDb = true;
  }

  /** Every lane with parked rows takes what it has room for now (start, resume). */
  drainParked(): void {
    for (const lane of this.lanes.all()) if (lane.parkedInDb) this.freed.add(lane);
    this.drainFreed();
  }

  /** Lanes that freed slots take from their memory queue, then claim their parked rows. */
  private drainFreed(): void {
    const lanes = [...this.freed];
    this.freed.clear();
    for (const lane of lanes) this.drain(lane);
    this.flushParks();
  }

  /**
   * Gives the lane's free slots out, one at a time: to a request waiting for one (slotsFirst: paused
   * or not, as they are sent regardless of a storage failure, which fails only their recording), else
   * to its memory queue, then its parked rows.
   */
  private drain(lane: Lane): void {
    while (this.lanes.hasRoom(lane)) {
      if (this.slotsFirst(lane)) {
        lane.waiting.shift()!.grant();
        continue;
      }
      if (!this.deps.open()) return;
      const d = lane.queue.shift();
      if (d) {
        this.held.delete(d.id);
        this.admit(d, lane);
        continue;
      }
      if (!lane.parkedInDb) return;
      // Only as many as can go now: a claimed row is unparked, so it must not wait in memory.
      const room = this.lanes.limits.requests - lane.active;
      let claimed: ActiveDelivery[];
      try {
        // Parks made so far must be visible to the claim.
        this.flushParks();
        claimed = this.deps.ledger.claimParked(lane.key, room);
      } catch (err) {
        return this.deps.failed(err);
      }
      // None left (canceled, or sent by a replay meanwhile): no delivery waits now, so a waiting
      // request may have the slot at the loop's next turn rather than at the next release.
      if (claimed.length < room) lane.parkedInDb = false;
      for (const c of claimed) this.admit(c, lane);
    }
  }

  scheduleParkFlush(): void {
    if (this.parks.length === 0) return;
    this.parkFlush ??= setImmediate(() => {
      this.parkFlush = null;
      this.flushParks();
    });
  }

  flushParks(): void {
    if (this.parks.length === 0) return;
    const parks = this.parks;
    this.parks = [];
    try {
      this.deps.ledger.park(parks);
    } catch (err) {
      // Left unparked: their rows are unfinished, and the resume after the storage failure reads them back.
      this.deps.failed(err);
    }
  }

  /** Deliveries waiting in memory that are no longer to be sent (canceled): their rows say so. */
  drop(match: (d: ActiveDelivery) => boolean): void {
    for (const lane of this.lanes.all()) {
      for (let i = lane.queue.length - 1; i >= 0; i--) {
        if (match(lane.queue[i])) this.held.delete(lane.queue.splice(i, 1)[0].id);
      }
    }
  }

  /** Forgets what waits in memory and the parks not yet written (pause, stop): the rows keep it all. */
  clear(): void {
    this.lanes.clearQueues();
    this.held.clear();
    this.parks = [];
  }
}
