import type { Store } from '../store/store';
import type { TrackingPlansRepo } from './plans.repo';

// Which requests a plan checked, and how many calls per rule (checked_requests: the plans screen's
// "matched" and getViolations' "checked"). A checked call says so in its own row (calls.check_plan),
// so what a call's verdict is never waits. The per-request rows do: written with every commit, their
// page was most of what a plan cost the collector (issue 38), so they wait here for up to FLUSH_MS and
// are written together. The row that opens such a second is written at once with `open` and its first
// call; the others follow it. After a kill -9 the start finds the newest row still open and rebuilds
// the rows that were waiting from the calls since its first call (their counts per rule are lost:
// which rule a call matched is not in its row). Readers add what waits (checkedSince, matchedSince).

/** How long checked requests wait before their rows are written (ms). */
export const FLUSH_MS = 1_000;
/** ...or how many checked calls may wait before they are written at once. */
export const FLUSH_CALLS = 20_000;

interface Waiting {
  requestId: number;
  sourceId: string;
  planId: string;
  receivedAt: number;
  checked: number;
  /** Calls per rule; null when rebuilt from the calls. */
  rules: Record<string, number> | null;
  firstCall: number;
}

export class CheckedLog {
  private waiting: Waiting[] = [];
  private waitingCalls = 0;
  /** The request whose row opened this second (in the table, open = 1); null when none is open. */
  private open: { requestId: number; firstCall: number } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private queued = false;
  /** calls.removals when `waiting` was last held against the calls kept (kept()), and when the open row was last seen. */
  private removals: number;
  private openSeen = -1;

  constructor(
    private readonly store: Store,
    private readonly repo: TrackingPlansRepo,
    private opts: { flushMs: number; flushCalls: number } = { flushMs: FLUSH_MS, flushCalls: FLUSH_CALLS },
  ) {
    this.removals = store.calls.removals;
    this.recover();
    store.mirrorWrites({ rolledBack: () => this.reload(), closing: () => this.close() });
  }

  /** Inside the collector's write job, right after the request's calls (arrivals.ts). */
  record(requestId: number, sourceId: string, planId: string, receivedAt: number, checked: number, rules: Record<string, number>, firstCall: number): void {
    this.kept();
    // Its open row went with its calls (clearing them, retention): a start would not find what follows
    // it, so that is written now, and this request opens a second again.
    if (this.open !== null && this.openSeen !== this.store.calls.removals) {
      this.openSeen = this.store.calls.removals;
      if (!this.repo.hasChecked(this.open.requestId)) this.write();
    }
    if (this.open === null) {
      this.repo.recordChecked(requestId, sourceId, planId, receivedAt, checked, JSON.stringify(rules), firstCall, true);
      this.open = { requestId, firstCall };
      this.openSeen = this.store.calls.removals;
      this.schedule(this.opts.flushMs);
      return;
    }
    this.waiting.push({ requestId, sourceId, planId, receivedAt, checked, rules, firstCall });
    this.waitingCalls += checked;
    if (this.waitingCalls >= this.opts.flushCalls) this.schedule(0);
  }

  /** Checked calls waiting, received since a time (of one source). */
  checkedSince(since: number, sourceId: string | undefined): number {
    let n = 0;
    for (const w of this.kept()) if (w.receivedAt >= since && (sourceId === undefined || w.sourceId === sourceId)) n += w.checked;
    return n;
  }

  /** Calls per rule of a plan waiting, received since a time, added to `into`. */
  matchedSince(planId: string, since: number, into: Map<string, number>): Map<string, number> {
    for (const w of this.kept()) {
      if (w.planId !== planId || w.receivedAt < since || w.rules === null) continue;
      for (const [rule, n] of Object.entries(w.rules)) into.set(rule, (into.get(rule) ?? 0) + n);
    }
    return into;
  }

  /** Tests: rows wait longer, or fewer calls (from the next second on). */
  configure(opts: Partial<{ flushMs: number; flushCalls: number }>): void {
    this.opts = { ...this.opts, ...opts };
  }

  /** Whether rows wait in memory now (tests). */
  get waitingRequests(): number {
    return this.kept().length;
  }

  /** Writes what waits now, in a job of the write queue (tests; a close does it too). */
  flush(): Promise<void> {
    return this.store.writes.run(() => this.write());
  }

  private schedule(ms: number): void {
    if (this.queued) return;
    if (ms > 0) {
      this.timer ??= setTimeout(() => this.queue(), ms);
      this.timer.unref();
      return;
    }
    this.queue();
  }

  private queue(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.queued || this.open === null) return;
    this.queued = true;
    // Rolled back (a full disk): reload() rebuilt the mirror from the table and scheduled the next try.
    this.store.writes.run(() => this.write()).catch(() => undefined);
  }

  /** In a write job: the waiting rows into the table in request order, after the open one, which closes. */
  private write(): void {
    this.queued = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const open = this.open;
    if (open === null) return;
    for (const w of this.kept()) this.repo.recordChecked(w.requestId, w.sourceId, w.planId, w.receivedAt, w.checked, w.rules && JSON.stringify(w.rules));
    this.repo.closeChecked(open.requestId);
    this.open = null;
    this.waiting = [];
    this.waitingCalls = 0;
  }

  /**
   * What waits, less the requests whose calls are gone (clearing the calls, retention): a request id
   * is reused once the newest requests are deleted, so a row written for a gone one would count
   * another's calls.
   */
  private kept(): Waiting[] {
    const removals = this.store.calls.removals;
    if (removals === this.removals) return this.waiting;
    this.removals = removals;
    this.waiting = this.waiting.filter((w) => this.store.calls.checkOf(w.firstCall)?.requestId === w.requestId);
    this.waitingCalls = this.waiting.reduce((n, w) => n + w.checked, 0);
    return this.waiting;
  }

  /** The rows a kill -9 left waiting, rebuilt from the calls (at the start, before any request). */
  private recover(): void {
    const rows = this.fromTable();
    if (rows === null) return;
    this.store.transaction(() => {
      for (const w of rows.waiting) this.repo.recordChecked(w.requestId, w.sourceId, w.planId, w.receivedAt, w.checked, null);
      this.repo.closeChecked(rows.open.requestId);
    });
  }

  /** After a rollback: the mirror as the table and the calls have it (what a job rolled back never happened). */
  private reload(): void {
    this.repo.keysRolledBack();
    const before = new Map(this.waiting.map((w) => [w.requestId, w]));
    const rows = this.fromTable();
    this.removals = this.store.calls.removals;
    this.open = rows?.open ?? null;
    this.waiting = (rows?.waiting ?? []).map((w) => {
      const b = before.get(w.requestId);
      return b && b.firstCall === w.firstCall && b.checked === w.checked ? b : w;
    });
    this.waitingCalls = this.waiting.reduce((n, w) => n + w.checked, 0);
    this.queued = false;
    if (this.open) this.schedule(this.opts.flushMs);
  }

  /** The open row and the checked requests after it, as the calls say; null when no row is open. */
  private fromTable(): { open: { requestId: number; firstCall: number }; waiting: Waiting[] } | null {
    const last = this.repo.newestChecked();
    if (!last?.open || last.firstCall === null) return null;
    const waiting: Waiting[] = [];
    for (const r of this.store.calls.checkedFrom(last.firstCall)) {
      const planId = this.repo.planOfKey(r.planKey);
      if (r.requestId <= last.requestId || r.sourceId === null || planId === undefined) continue;
      waiting.push({ requestId: r.requestId, sourceId: r.sourceId, planId, receivedAt: r.receivedAt, checked: r.calls, rules: null, firstCall: r.firstCall });
    }
    return { open: { requestId: last.requestId, firstCall: last.firstCall }, waiting };
  }

  /** The store is closing: what waits is queued, and its close runs it. */
  private close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.open !== null && !this.queued) {
      this.queued = true;
      this.store.writes.run(() => this.write()).catch(() => undefined);
    }
  }
}
