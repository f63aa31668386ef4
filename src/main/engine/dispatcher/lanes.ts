import type { ActiveDelivery } from '../store/delivery.types';

// Per-receiver isolation (issue 22; DESIGN lesson 14, as Svix and Hookdeck isolate endpoints). Every
// receiver endpoint has a lane: at most `requests` requests out at once, whatever sent them (the
// schedule, a bulk retry, a replay, a receiver check: issue 41), and a short FIFO of deliveries
// waiting in memory for it. Past that queue, deliveries wait as rows in SQLite (parked,
// deliveries.parked_lane) and are claimed back as the lane frees, so a receiver that never answers
// holds `requests` sockets and `queue` deliveries in memory, however long it hangs, and nothing else.

/**
 * Requests out at once to one receiver endpoint: the 128 connections per receiver the
 * dispatcher had before lanes (at 32, a local receiver under load became the bottleneck: about 1,200
 * against 2,400 deliveries/s in npm run bench), so a healthy receiver is served as fast as before.
 */
export const LANE_REQUESTS = 128;
/** Deliveries waiting in memory for one endpoint; the rest wait as rows. */
export const LANE_QUEUE = 256;

export interface LaneLimits {
  requests: number;
  queue: number;
}

/**
 * The lane a URL belongs to: its origin and path, without query, fragment or credentials. Per path,
 * not per origin: the mock receivers all share one origin, and a hanging one must not hold up its
 * neighbours (README, Decisions).
 */
export function laneKey(url: string): string {
  let key = keys.get(url);
  if (key === undefined) {
    try {
      const u = new URL(url);
      key = u.origin + u.pathname;
    } catch {
      key = url;
    }
    if (keys.size >= KEY_CACHE_MAX) keys.clear();
    keys.set(url, key);
  }
  return key;
}

/** The lanes a delivery's URLs go through, each once (bulk retries are counted by them: manual-rounds.ts). */
export function lanesOf(urls: readonly { url: string }[]): string[] {
  return urls.length === 1 ? [laneKey(urls[0]!.url)] : [...new Set(urls.map((u) => laneKey(u.url)))];
}

// Receiver URLs come from a handful of settings rows: parse each once, not per attempt (as HttpSender does).
const KEY_CACHE_MAX = 1024;
const keys = new Map<string, string>();

/** A request waiting for a slot: granted one when the lane frees, or refused when the dispatcher stops. */
export interface SlotWaiter {
  grant(): void;
  refuse(err: Error): void;
}

export class Lane {
  /** Requests out now. */
  active = 0;
  /** Waiting in memory, oldest first. */
  readonly queue: ActiveDelivery[] = [];
  /** Some of this lane's deliveries wait as rows (claimed when the queue runs dry). */
  parkedInDb = false;
  /** Requests the schedule did not admit (manual, replay, probe) waiting for a slot, oldest first: served before the queue. */
  readonly waiting: SlotWaiter[] = [];
  /** Slots held by such requests now (at most half the lane while deliveries wait for it: lane-scheduler.ts). */
  bySlot = 0;
  constructor(readonly key: string) {}
}

export class Lanes {
  private readonly byKey = new Map<string, Lane>();
  constructor(readonly limits: LaneLimits) {}

  get(key: string): Lane {
    let lane = this.byKey.get(key);
    if (!lane) this.byKey.set(key, (lane = new Lane(key)));
    return lane;
  }

  hasRoom(lane: Lane): boolean {
    return lane.active < this.limits.requests;
  }

  /** Whether a delivery may wait in this lane's memory queue (else it waits as a row). */
  canQueue(lane: Lane): boolean {
    return !lane.parkedInDb && lane.queue.length < this.limits.queue;
  }

  all(): IterableIterator<Lane> {
    return this.byKey.values();
  }

  /** Deliveries held in memory waiting for a slot, across lanes (health, tests). */
  queued(): number {
    let n = 0;
    for (const l of this.byKey.values()) n += l.queue.length;
    return n;
  }

  /** Drops every delivery waiting in memory (pause, stop): their rows are resumed from the store. */
  clearQueues(): void {
    for (const l of this.byKey.values()) {
      l.queue.length = 0;
      l.parkedInDb = false;
    }
  }
}
