import { describe, expect, it } from 'vitest';
import { coalesce, type CoalesceScheduler } from '../../src/shared/coalesce';

// The one coalescing helper of the event path (event hub, SSE, IPC, renderer), on a fake clock
// driven through its injected scheduler: no sleeps, and every timer it sets is visible.

function fakeScheduler() {
  let now = 1_000;
  let seq = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const scheduler: CoalesceScheduler = {
    now: () => now,
    later(fn, ms) {
      timers.set(++seq, { at: now + ms, fn });
      return seq;
    },
    cancel: (h) => void timers.delete(h as number),
  };
  /** Moves the clock on by `ms`, running each timer that falls due, in order. */
  const advance = (ms: number) => {
    const end = now + ms;
    for (;;) {
      const due = [...timers].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0];
      if (!due) break;
      timers.delete(due[0]);
      now = due[1].at;
      due[1].fn();
    }
    now = end;
  };
  return { scheduler, advance, pending: () => timers.size };
}

describe('coalesce', () => {
  it('gathers for maxWaitMs after the first item, then hands on one batch in arrival order', () => {
    const clock = fakeScheduler();
    const batches: number[][] = [];
    const c = coalesce<number>({ maxWaitMs: 100, flush: (b) => batches.push(b), scheduler: clock.scheduler });
    c.push(1);
    clock.advance(60);
    c.pushAll([2, 3]);
    expect(clock.pending()).toBe(1);
    clock.advance(39);
    expect(batches).toEqual([]);
    expect(c.size).toBe(3);
    clock.advance(1);
    expect(batches).toEqual([[1, 2, 3]]);
    // The next item starts a new wait of its own.
    c.push(4);
    clock.advance(99);
    expect(batches).toHaveLength(1);
    clock.advance(1);
    expect(batches).toEqual([[1, 2, 3], [4]]);
    expect(clock.pending()).toBe(0);
  });

  it('0 ms: one batch per turn of the scheduler', () => {
    const clock = fakeScheduler();
    const batches: string[][] = [];
    const c = coalesce<string>({ maxWaitMs: 0, flush: (b) => batches.push(b), scheduler: clock.scheduler });
    c.push('a');
    c.push('b');
    expect(batches).toEqual([]);
    clock.advance(0);
    expect(batches).toEqual([['a', 'b']]);
  });

  it('leading: a quiet source goes out at once, a busy one at most once per maxWaitMs', () => {
    const clock = fakeScheduler();
    const batches: number[][] = [];
    const c = coalesce<number>({ maxWaitMs: 50, leading: true, flush: (b) => batches.push(b), scheduler: clock.scheduler });
    c.push(1);
    expect(batches).toEqual([[1]]);
    clock.advance(10);
    for (let i = 2; i <= 40; i++) c.push(i);
    expect(batches).toHaveLength(1);
    // 50 ms after the last batch, not 50 ms after this burst's first item.
    clock.advance(39);
    expect(batches).toHaveLength(1);
    clock.advance(1);
    expect(batches[1]).toEqual(Array.from({ length: 39 }, (_, i) => i + 2));
    // Quiet for longer than the interval: the next item is not held.
    clock.advance(200);
    c.push(41);
    expect(batches[2]).toEqual([41]);
  });

  it('key: a later item takes the place of the earlier one with its key; unkeyed items are all kept', () => {
    const clock = fakeScheduler();
    const batches: { id?: number; v: string }[][] = [];
    const c = coalesce<{ id?: number; v: string }>({ maxWaitMs: 10, key: (i) => i.id, flush: (b) => batches.push(b), scheduler: clock.scheduler });
    c.pushAll([{ id: 1, v: 'a' }, { v: 'x' }, { id: 2, v: 'b' }, { id: 1, v: 'c' }, { v: 'x' }]);
    clock.advance(10);
    expect(batches).toEqual([[{ id: 1, v: 'c' }, { v: 'x' }, { id: 2, v: 'b' }, { v: 'x' }]]);
    // The keys start afresh with each batch.
    c.push({ id: 1, v: 'd' });
    clock.advance(10);
    expect(batches[1]).toEqual([{ id: 1, v: 'd' }]);
  });

  it('items pushed while a batch is handed on wait for the next batch; nothing is lost or sent twice', () => {
    const clock = fakeScheduler();
    const batches: number[][] = [];
    const c = coalesce<number>({
      maxWaitMs: 5,
      flush: (b) => {
        batches.push(b);
        if (b[0] === 1) c.push(99);
      },
      scheduler: clock.scheduler,
    });
    c.push(1);
    clock.advance(5);
    expect(batches).toEqual([[1]]);
    clock.advance(5);
    expect(batches).toEqual([[1], [99]]);
  });

  it('a flush that throws loses only its own batch: later items still go out', () => {
    const clock = fakeScheduler();
    const seen: number[][] = [];
    const c = coalesce<number>({
      maxWaitMs: 5,
      flush: (b) => {
        seen.push(b);
        if (b.includes(1)) throw new Error('listener failed');
      },
      scheduler: clock.scheduler,
    });
    c.push(1);
    expect(() => clock.advance(5)).toThrow('listener failed');
    c.push(2);
    clock.advance(5);
    expect(seen).toEqual([[1], [2]]);
  });

  it('an empty pushAll sets no timer; dispose drops what waits and its timer', () => {
    const clock = fakeScheduler();
    const batches: number[][] = [];
    const c = coalesce<number>({ maxWaitMs: 20, flush: (b) => batches.push(b), scheduler: clock.scheduler });
    c.pushAll([]);
    expect(clock.pending()).toBe(0);
    c.pushAll([1, 2]);
    c.dispose();
    expect(clock.pending()).toBe(0);
    expect(c.size).toBe(0);
    clock.advance(100);
    expect(batches).toEqual([]);
  });
});
