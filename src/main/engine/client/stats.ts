import type { BatchResult, ClientStats, FlushResult } from './types';
import { formatOptionalTimestamp } from '../../../shared/timestamp';

const RECENT_BATCHES = 20;

const iso = formatOptionalTimestamp;

/** One line for dashboards, e.g. `20 sent in 1 batch (HTTP 200)`. */
export function describeFlush(result: FlushResult): string {
  const n = result.batches.length;
  if (n === 0) return 'nothing to send';
  const last = result.batches[n - 1];
  const parts = [`${result.sent} sent`];
  if (result.dropped > 0) parts.push(`${result.dropped} dropped`);
  const status = last.status === null ? 'no response' : `HTTP ${last.status}`;
  const error = result.errors[0] ? `: ${result.errors[0].message}` : '';
  return `${parts.join(', ')} in ${n} batch${n === 1 ? '' : 'es'} (${status})${error}`;
}

/** Counters behind Analytics.stats(); the queue numbers come from the client at snapshot time. */
export class ClientStatsTracker {
  lastFlushAt: number | null = null;
  lastFlushResult: string | null = null;
  batchesSent = 0;
  messagesSent = 0;
  batchesDropped = 0;
  drops = 0;
  retries = 0;
  private readonly recent: BatchResult[] = [];

  recordBatch(batch: BatchResult): void {
    if (batch.ok) {
      this.batchesSent++;
      this.messagesSent += batch.count;
    } else {
      this.batchesDropped++;
      this.drops += batch.count;
    }
    this.recent.push(batch);
    if (this.recent.length > RECENT_BATCHES) this.recent.shift();
  }

  finishFlush(result: FlushResult): void {
    if (result.batches.length > 0 || result.errors.length > 0) this.lastFlushResult = describeFlush(result);
  }

  snapshot(queue: { queued: number; queuedBytes: number; inFlight: number; nextFlushAt: number | null; closed: boolean }): ClientStats {
    return {
      queued: queue.queued,
      queuedBytes: queue.queuedBytes,
      inFlight: queue.inFlight,
      lastFlushAt: iso(this.lastFlushAt),
      lastFlushResult: this.lastFlushResult,
      nextFlushAt: iso(queue.nextFlushAt),
      batchesSent: this.batchesSent,
      messagesSent: this.messagesSent,
      retries: this.retries,
      drops: this.drops,
      batchesDropped: this.batchesDropped,
      closed: queue.closed,
      recentBatches: this.recent.slice(),
    };
  }
}
