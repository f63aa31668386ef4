import type { ActionsMapping, OutboundType } from '../../../shared/types';
import { actionsMappings, mappingBatches } from '../../../shared/actions/mode';
import { ACTIONS_MAX_BATCH_SIZE } from '../../../shared/actions/request';
import { MAX_ACTIONS_BATCH_BODY_BYTES } from '../../../shared/limits';
import type { Store } from '../store/store';
import type { ActiveDelivery } from '../store/delivery.types';
import { actionsDelivery, batchRequest, targetOf } from './delivery-plan';
import { segmentUrlProblem, urlNotAUriMessage } from '../actions/url-field';
import { writtenTarget, type ActionsTarget } from '../actions/target';

// Batched Actions mappings (notes/actions-design.md): a matching call waits in actions_batch_items
// (written with the call, so it survives a restart) until its (source, mapping) batch is full, or
// BATCH_WAIT_MS after the batch's first item was queued, or the next start (leftovers). A batch whose
// body would pass MAX_ACTIONS_BATCH_BODY_BYTES goes as several requests, one after another. A flush is one
// write job, the delivery ledger's createBatch: the Actions delivery (body = the items' data as a JSON
// array in queue order, X-Signature over the first item's data), its delivery_calls rows and the
// items' deletion; then the dispatcher runs it like any delivery. Time is the dispatcher's clock, so
// tests and time-warp see the same.

/** How long a batch waits for more items after its first. */
export const BATCH_WAIT_MS = 5_000;

export interface BatcherDeps {
  store: Store;
  now: () => number;
  /** Runs a delivery just made (Dispatcher.enqueue). */
  enqueue: (deliveries: ActiveDelivery[]) => void;
  /** These calls' summaries changed (waiting → a delivery, or canceled). */
  touched: (callIds: number[]) => void;
  /** A flush nobody awaits failed (a full disk): its items stay waiting in SQLite for the next flush. */
  failed: (err: unknown) => void;
}

export class ActionsBatcher {
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Infinity;
  private stopped = false;
  /** The mapping each batch was last queued under: what a batch canceled after its source is gone shows. */
  private readonly lastMapping = new Map<string, ActionsMapping>();
  /** Flushes run one after another, so two never take the same items. */
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: BatcherDeps) {}

  /** At start: every batch left over is sent now. */
  start(): Promise<void> {
    return this.serial(async () => {
      for (const g of this.deps.store.actions.groups()) await this.flushGroup(g.sourceId, g.mapping, true);
    });
  }

  /** Items were queued in these batches (arrivals.ts StoredResult.batched): flush the full ones, time the rest. */
  queued(batches: readonly { sourceId: string; mapping: string }[]): void {
    if (batches.length === 0 || this.stopped) return;
    this.serial(async () => {
      for (const b of batches) await this.flushGroup(b.sourceId, b.mapping, false);
    }).catch((err: unknown) => this.deps.failed(err));
  }

  /** Batches whose wait is over (the timer; tests that move a manual clock call it too). */
  flushDue(): Promise<void> {
    return this.serial(async () => {
      for (const g of this.deps.store.actions.groups()) await this.flushGroup(g.sourceId, g.mapping, false);
    });
  }

  /**
   * The source's waiting items end as canceled, like its unfinished deliveries: each batch becomes
   * one Actions delivery in state canceled that carries them (never sent), so their calls show
   * "canceled" under the mapping as a canceled Classic delivery does. Returns how many items.
   */
  cancelSource(sourceId: string, reason: string): Promise<number> {
    return this.serial(async () => {
      let n = 0;
      for (const mapping of this.deps.store.actions.mappingsWaiting(sourceId)) n += await this.cancelGroup(sourceId, mapping, reason);
      return n;
    });
  }

  /**
   * Clearing the calls: the items of calls up to this id leave their batches before anything is
   * deleted, so no later flush (a batch filled by calls arriving during the clear, or its 5 s timer)
   * sends them. Runs after any flush under way, which has then handed its delivery to the
   * dispatcher (cancelUpTo cancels that). Returns how many items.
   */
  dropUpTo(maxCallId: number): Promise<number> {
    return this.serial(() => this.deps.store.writes.run((tx) => this.deps.store.ledger.dropItemsUpTo(tx, maxCallId)));
  }

  stop(): void {
    this.stopped = true;
    this.disarm();
  }

  private serial<T>(job: () => Promise<T>): Promise<T> {
    const run = this.chain.then(job, job);
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** The batch's current mapping, when its source still sends it; undefined otherwise. */
  private mappingOf(sourceId: string, name: string): ActionsMapping | undefined {
    const source = this.deps.store.sources.get(sourceId);
    if (!source || !source.webhooks.enabled) return undefined;
    const m = actionsMappings(source.webhooks).find((x) => x.name === name);
    if (m) this.lastMapping.set(key(sourceId, name), m);
    return m;
  }

  /**
   * Sends what is due of one batch: full batches (several if items piled up), then the rest when it
   * waited long enough or `all` (start). A batch whose mapping is gone, or whose source no longer
   * sends Actions, is canceled instead.
   */
  private async flushGroup(sourceId: string, name: string, all: boolean): Promise<void> {
    const { store, now } = this.deps;
    const m = this.mappingOf(sourceId, name);
    if (!m || !mappingBatches(m)) {
      await this.cancelGroup(sourceId, name, m ? `canceled: mapping "${name}" no longer batches` : `canceled: mapping "${name}" is no longer sent by its source`);
      return;
    }
    // Its URL edited, since the items were queued, into one Segment's payload validation refuses.
    const urlProblem = typeof m.url === 'string' ? segmentUrlProblem(m.url) : null;
    if (urlProblem !== null) {
      await this.cancelGroup(sourceId, name, `not sent: ${urlNotAUriMessage(urlProblem)}`);
      return;
    }
    const size = Math.min(m.batchSize, ACTIONS_MAX_BATCH_SIZE);
    // Items of a batch due now that MAX_ACTIONS_BATCH_BODY_BYTES left for another request: sent next, without waiting.
    let owed = 0;
    for (;;) {
      if (this.stopped) return;
      const g = store.actions.group(sourceId, name);
      if (!g) return;
      if (owed === 0 && g.count < size && !all && g.firstQueuedAt + BATCH_WAIT_MS > now()) {
        this.arm(g.firstQueuedAt + BATCH_WAIT_MS);
        return;
      }
      const wanted = Math.min(owed || size, g.count);
      const source = store.sources.get(sourceId)!;
      const made = await store.writes.run((tx) => {
        const items = store.actions.take(sourceId, name, wanted, MAX_ACTIONS_BATCH_BODY_BYTES);
        if (items.length === 0) return null;
        const { body, signedText } = batchRequest(items);
        const callIds = items.map((i) => i.callId);
        // Items queued under literal ones go to the mapping's URL and headers as they are now (an edit applies).
        const to = items[0].target === '' ? writtenTarget(m) : (JSON.parse(items[0].target) as ActionsTarget);
        const plan = actionsDelivery(m, to, body, signedText, targetOf(source), callIds);
        const delivery = store.ledger.createBatch(tx, sourceId, items[0].callType as OutboundType, plan, items.map((i) => i.id));
        return { delivery, callIds };
      });
      if (!made) return;
      this.deps.enqueue([made.delivery]);
      this.deps.touched(made.callIds);
      owed = Math.max(0, wanted - made.callIds.length);
      if (owed === 0 && made.callIds.length < size) return;
    }
  }

  private async cancelGroup(sourceId: string, name: string, reason: string): Promise<number> {
    const { store } = this.deps;
    const m: ActionsMapping = this.lastMapping.get(key(sourceId, name)) ?? { name, trigger: {}, url: '', method: 'POST', headers: {} };
    const callIds = await store.writes.run((tx) => {
      const items = store.actions.take(sourceId, name, Number.MAX_SAFE_INTEGER);
      if (items.length === 0) return [];
      const ids = items.map((i) => i.callId);
      // Never sent: no signature, no Standard Webhooks id.
      const plan = actionsDelivery(m, items[0].target === '' ? writtenTarget(m) : (JSON.parse(items[0].target) as ActionsTarget), batchRequest(items).body, null, {}, ids);
      store.ledger.cancelBatch(tx, sourceId, items[0].callType as OutboundType, plan, items.map((i) => i.id), reason);
      return ids;
    });
    this.lastMapping.delete(key(sourceId, name));
    if (callIds.length > 0) this.deps.touched(callIds);
    return callIds.length;
  }

  private arm(at: number): void {
    if (this.stopped || at >= this.timerAt) return;
    this.disarm();
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerAt = Infinity;
      this.flushDue().catch((err: unknown) => this.deps.failed(err));
    }, Math.max(0, at - this.deps.now()));
    this.timer.unref();
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = Infinity;
  }
}

function key(sourceId: string, mapping: string): string {
  return `${sourceId}\u0000${mapping}`;
}

/** A mapping's URL and headers as written, for items queued while they were literal (a directive is shown as its JSON). */
