type Listener<T> = (payload: T) => void;
/** A once() wrapper remembers what it wraps, so off(event, fn) finds it (as node:events does). */
type OnceWrapper<T> = Listener<T> & { listener?: Listener<T> };

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
    const set = this.listeners.get(event);
    if (!set || set.delete(fn as Listener<never>)) return this;
    for (const l of set) {
      if ((l as OnceWrapper<never>).listener === fn) {
        set.delete(l);
        break;
      }
    }
    return this;
  }

  once<K extends keyof Events>(event: K, fn: Listener<Events[K]>): this {
    const wrapper: OnceWrapper<Events[K]> = (payload) => {
      this.off(event, wrapper);
      fn(payload);
    };
    wrapper.listener = fn;
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
