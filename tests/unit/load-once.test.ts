import { describe, expect, it } from 'vitest';
import { loadOnce } from '../../src/shared/load-once';

describe('loadOnce', () => {
  it('begins the load with the first get(), shares it with every caller, and peek() never begins one', async () => {
    let loads = 0;
    const once = loadOnce(async () => ++loads);
    expect(once.peek()).toBeUndefined();
    expect(loads).toBe(0);
    const [a, b] = await Promise.all([once.get(), once.get()]);
    expect([a, b, await once.get(), await once.peek()]).toEqual([1, 1, 1, 1]);
    expect(loads).toBe(1);
  });

  it('forgets a failed load: its callers see the failure, the next get() tries again', async () => {
    let loads = 0;
    const once = loadOnce(async () => {
      if (++loads === 1) throw new Error('first load fails');
      return 'made';
    });
    await expect(once.get()).rejects.toThrow('first load fails');
    expect(once.peek()).toBeUndefined();
    expect(await once.get()).toBe('made');
    expect(loads).toBe(2);
  });
});
