import type { ApiClient, EngineEvent, OpInput, OpName, OpOutput } from '../../src/shared/api.contract';
import { ApiError } from '../../src/shared/api-error';

// An in-memory ApiClient for the simulation slices' pure logic: each test sets the answers of the
// operations it uses; an operation without one fails the test loudly.

type Handler<K extends OpName> = (input: OpInput<K>) => OpOutput<K> | Promise<OpOutput<K>>;

export class FakeApi implements ApiClient {
  readonly calls: { name: OpName; input: unknown }[] = [];
  private handlers: Partial<{ [K in OpName]: Handler<K> }> = {};
  private listeners = new Set<(events: EngineEvent[]) => void>();

  on<K extends OpName>(name: K, handler: Handler<K>): this {
    (this.handlers as Record<string, unknown>)[name] = handler;
    return this;
  }

  async call<K extends OpName>(name: K, input: OpInput<K>): Promise<OpOutput<K>> {
    this.calls.push({ name, input });
    const h = this.handlers[name] as Handler<K> | undefined;
    if (!h) throw new Error(`FakeApi: no answer for ${name}`);
    return h(input);
  }

  subscribe(listener: (events: EngineEvent[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(...events: EngineEvent[]): void {
    for (const l of this.listeners) l(events);
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  callsOf(name: OpName): unknown[] {
    return this.calls.filter((c) => c.name === name).map((c) => c.input);
  }
}

export function invalid(fields: { path: string; message: string }[]): ApiError {
  return new ApiError(400, 'invalid input', fields);
}
