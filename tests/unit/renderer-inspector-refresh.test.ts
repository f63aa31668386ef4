import { describe, expect, it } from 'vitest';
import type { ApiClient } from '../../src/shared/api.contract';
import { createAppStore } from '../../src/renderer/stores/app.store';

// A reload of the same list (a live event, a clear) keeps what the inspector shows: its empty state
// unmounted for the load's moment and came back new, losing its Copy button's feedback (a CI run under
// load). A first load, or one for other filters, is not a refresh.

function pendingApi() {
  const answers: ((v: unknown) => void)[] = [];
  const api: ApiClient = {
    call: ((name: string) => {
      if (name !== 'listMessages') return Promise.reject(new Error(`not in this test: ${name}`));
      return new Promise<unknown>((resolve) => answers.push(resolve));
    }) as unknown as ApiClient['call'],
    subscribe: () => () => undefined,
  };
  return { api, answer: () => answers.shift()!({ items: [], total: 0, next: null }) };
}

describe("the inspector's list during a reload", () => {
  it('a load of the list shown is a refresh; the first load and a load for other filters are not', async () => {
    const { api, answer } = pendingApi();
    const store = createAppStore(api);
    const first = store.getState().loadCalls();
    expect(store.getState()).toMatchObject({ callsLoading: true, callsRefreshing: false });
    answer();
    await first;
    expect(store.getState()).toMatchObject({ callsLoading: false, callsRefreshing: false, calls: [] });
    const again = store.getState().loadCalls();
    expect(store.getState()).toMatchObject({ callsLoading: true, callsRefreshing: true });
    answer();
    await again;
    expect(store.getState().callsRefreshing).toBe(false);
    store.setState({ filters: { ...store.getState().filters, q: 'other' } });
    const other = store.getState().loadCalls();
    expect(store.getState()).toMatchObject({ callsLoading: true, callsRefreshing: false });
    answer();
    await other;
  });
});
