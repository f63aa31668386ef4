type Listener<T> = (payload: T) => void;

/**
 * A tiny typed event emitter. Unlike node:events it never throws for an `error` event nobody
 * listens to, and a listener that throws is reported to `onListenerError` instead of breaking a
 * flush: the client must never cause an uncaught exception or unhandled rejection.
 */
export class TypedEmitter<Events extends object> {
  private readonly listeners = new Map<keyof Events, Set<Listener<never>>>();

  constructor(private readonly onListenerError: (err: unknown, event: keyof Events) => void) {}

  on<K extends keyof Events>(event: K, fn: Listener<Events[K]>): this {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(fn as Listener<never>);
    return this;
  }

  off<K extends keyof Events>(event: K, fn: Listener<Events[K]>): this {
    this.listeners.get(event)?.delete(fn as Listener<never>);
    return this;
  }

  once<K extends keyof Events>(event: K, fn: Listener<Events[K]>): this {
    const wrapper: Listener<Events[K]> = (payload) => {
      this.off(event, wrapper);
      fn(payload);
    };
    return this.on(event, wrapper);
  }

  listenerCount(event: keyof Events): number {
    return this.listeners.get(event)?.size ?? 0;
  }

  protected emit<K extends keyof Events>(event: K, payload: Events[K]): void {
    const set = this.listeners.get(event);
    if (!set || set.size === 0) return;
    for (const fn of [...set]) {
      try {
        (fn as Listener<Events[K]>)(payload);
      } catch (err) {
        this.onListenerError(err, event);
      }
    }
  }
}
