import type { EngineEvent } from '../../shared/api.contract';
import type { CallSummary } from '../../shared/types';

/**
 * Coalesces engine events per event-loop turn: listeners get arrays, and "this call changed"
 * notices are merged into one `calls.updated` with fresh summaries, queried once per turn.
 */
export class EventHub {
  private listeners = new Set<(events: EngineEvent[]) => void>();
  private queue: EngineEvent[] = [];
  private touched = new Set<number>();
  private scheduled = false;

  constructor(private readonly summaries: (ids: number[]) => CallSummary[]) {}

  on(listener: (events: EngineEvent[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(event: EngineEvent): void {
    if (this.listeners.size === 0) return;
    this.queue.push(event);
    this.schedule();
  }

  touch(callId: number): void {
    if (this.listeners.size === 0) return;
    this.touched.add(callId);
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    const events = this.queue;
    this.queue = [];
    if (this.touched.size > 0) {
      try {
        events.push({ type: 'calls.updated', calls: this.summaries([...this.touched]) });
      } catch {
        // The database closed under us at shutdown; nobody is listening for these any more.
      }
      this.touched.clear();
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
