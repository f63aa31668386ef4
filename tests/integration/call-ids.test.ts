import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../helpers/engine';
import type { Store } from '../../src/main/engine/store/store';

// A call's id is never given again (migration 19, calls.repo.ts): SQLite gives a new row the newest id
// plus one, so deleting the newest calls (clearing the inspector, erasing a user) let their ids come
// back, and an old `#/inspector/<id>` link or `after=` cursor named another call.

const KEY = 'wk_ids';

async function send(t: TestEngine, event: string): Promise<number> {
  const res = await t.post('/v1/track', { userId: 'u', event, messageId: `${event}-${Math.random()}` }, { writeKey: KEY });
  expect(res.status).toBe(200);
  const { items } = await t.call('listMessages', { q: event, limit: 10 });
  expect(items).toHaveLength(1);
  return items[0].id;
}

describe('call ids', () => {
  let t: TestEngine | undefined;
  afterEach(async () => {
    await t?.stop();
    t = undefined;
  });

  it('after every call is cleared, the next call gets a new id, also after a restart', async () => {
    t = await startTestEngine({ config: { sources: [{ name: 'ids', writeKey: KEY }] } });
    const first = [await send(t, 'One'), await send(t, 'Two'), await send(t, 'Three')];
    await t.call('clearCalls', {});
    await expect.poll(async () => (await t!.call('listMessages', { limit: 1 })).total).toBe(0);
    const after = await send(t, 'Four');
    expect(after).toBeGreaterThan(Math.max(...first));
    // The link to a cleared call says it is gone; it never opens the new one.
    await expect(t.call('getMessage', { id: first[0] })).rejects.toThrow();

    const dataDir = t.dataDir;
    await t.call('clearCalls', {});
    await expect.poll(async () => (await t!.call('listMessages', { limit: 1 })).total).toBe(0);
    await t.stop({ keepData: true });
    t = await startTestEngine({ dataDir, config: { sources: [{ name: 'ids', writeKey: KEY }] } });
    expect(await send(t, 'Five')).toBeGreaterThan(after);
    await t.stop();
    t = undefined;
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('removing the newest calls (an erasure, retention) does not give their ids again', async () => {
    let store: Store | undefined;
    t = await startTestEngine({ config: { sources: [{ name: 'ids', writeKey: KEY }] }, onStore: (s) => void (store = s) });
    await send(t, 'Kept');
    const newest = await send(t, 'Erased');
    await store!.writes.run((tx) => store!.calls.remove(tx, [newest]));
    expect(await send(t, 'Next')).toBe(newest + 1);
  });
});
