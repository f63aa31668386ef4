import type { EngineEvent } from '../../shared/api.contract';
import { coalesce, type Coalescer } from '../../shared/coalesce';
import type { CallSummary } from '../../shared/types';
import { nodeScheduler } from './node-scheduler';

/** An event, or a call id to announce in the turn's `calls.updated` (once however often touched). */
type HubItem = EngineEvent | number;

/**
 * Coalesces engine events per event-loop turn: listeners get arrays, and "this call changed"
 * notices (touch) are merged into one `calls.updated` with fresh summaries, queried once per turn,
 * last. A `calls.updated` made by announce() keeps its place among the events, read when announced.
 */
export class EventHub {
  private listeners = new Set<(events: EngineEvent[]) => void>();
  private readonly pending: Coalescer<HubItem>;

  constructor(private readonly summaries: (ids: number[]) => CallSummary[]) {
    this.pending = coalesce<HubItem>({
      maxWaitMs: 0,
      key: (item) => (typeof item === 'number' ? item : undefined),
      flush: (items) => this.flush(items),
      scheduler: nodeScheduler,
    });
  }

  on(listener: (events: EngineEvent[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(event: EngineEvent): void {
    if (this.listeners.size === 0) return;
    this.pending.push(event);
  }

  touch(callId: number): void {
    if (this.listeners.size === 0) return;
    this.pending.push(callId);
  }

  /**
   * A `calls.updated` with these calls' summaries read now, in its place among the events: for a
   * notice whose events were chosen from the same state (in-flight-notices.ts). Read at the turn's
   * flush instead, a summary could count what happened between the two and no event announced.
   */
  announce(callIds: number[]): void {
    if (this.listeners.size === 0 || callIds.length === 0) return;
    let calls: CallSummary[];
    try {
      calls = this.summaries(callIds);
    } catch {
      return; // The database closed under us at shutdown.
    }
    this.pending.push({ type: 'calls.updated', calls });
  }

  private flush(items: HubItem[]): void {
    const events: EngineEvent[] = [];
    const touched: number[] = [];
    for (const item of items) {
      if (typeof item === 'number') touched.push(item);
      else events.push(item);
    }
    if (touched.length > 0) {
      try {
        events.push({ type: 'calls.updated', calls: this.summaries(touched) });
      } catch {
        // The database closed under us at shutdown; nobody is listening for these any more.
      }
    }
    if (events.length === 0) return;
    for (const l of this.listeners) {
      try {
        l(events);
      } catch {
        // A listener's failure (a closed SSE socket) must not stop the others.
      }
    }
  }
}
