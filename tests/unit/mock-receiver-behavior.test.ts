import { describe, expect, it } from 'vitest';
import { answerItems, createBehaviorState, decide } from '../../src/main/engine/simulation/mock-receivers/behavior';
import { mulberry32 } from '../../src/main/engine/seeded-random';
import { mockBehaviorSchema, type MockBehavior } from '../../src/shared/mock-receiver.schema';

const seedless = () => 12345;

function run(input: unknown, n: number) {
  const behavior: MockBehavior = mockBehaviorSchema.parse(input);
  const state = createBehaviorState(behavior, seedless);
  return Array.from({ length: n }, () => decide(behavior, state, 'r'));
}

describe('mulberry32', () => {
  it('is deterministic per seed and uniform enough', () => {
    const a = mulberry32(42);
    const b = mulberry32(42);
    const xs = Array.from({ length: 1000 }, () => a());
    expect(Array.from({ length: 1000 }, () => b())).toEqual(xs);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    expect(mean).toBeGreaterThan(0.45);
    expect(mean).toBeLessThan(0.55);
    expect(mulberry32(43)()).not.toBe(xs[0]);
  });
});

describe('behavior decisions', () => {
  it('answers the status, 200 by default, with a JSON body', () => {
    const [d] = run({}, 1);
    expect(d).toMatchObject({ seq: 1, action: 'status', status: 200, delayMs: 0, failed: false });
    expect(JSON.parse(d.body!)).toEqual({ ok: true, receiver: 'r', seq: 1 });
    expect(d.headers).toEqual({ 'content-type': 'application/json' });
    expect(run({ status: 503 }, 1)[0]).toMatchObject({ status: 503, failed: false });
  });

  it('failFirst 3 with status 500 gives 500, 500, 500, then 200', () => {
    expect(run({ failFirst: 3, status: 500 }, 5).map((d) => d.status)).toEqual([500, 500, 500, 200, 200]);
    expect(run({ failFirst: 2 }, 3).map((d) => [d.status, d.failed])).toEqual([[500, true], [500, true], [200, false]]);
  });

  it('failPercent follows the seed: same seed, same sequence; other seed, another one', () => {
    const seq = (seed: number) => run({ failPercent: 50, seed }, 200).map((d) => d.failed);
    const a = seq(42);
    expect(seq(42)).toEqual(a);
    expect(seq(43)).not.toEqual(a);
    const failures = a.filter(Boolean).length;
    expect(failures).toBeGreaterThan(70);
    expect(failures).toBeLessThan(130);
    expect(run({ failPercent: 0, seed: 1 }, 50).some((d) => d.failed)).toBe(false);
    expect(run({ failPercent: 100, seed: 1 }, 50).every((d) => d.failed && d.status === 500)).toBe(true);
  });

  it('failFirst comes before failPercent without shifting its sequence', () => {
    const alone = run({ failPercent: 30, seed: 9 }, 20).map((d) => d.failed);
    const both = run({ failFirst: 4, failPercent: 30, seed: 9 }, 24).map((d) => d.failed);
    expect(both.slice(0, 4)).toEqual([true, true, true, true]);
    expect(both.slice(4)).toEqual(alone);
  });

  it('reset and hang are the failure answer when gated, the only answer otherwise', () => {
    expect(run({ reset: true }, 2).map((d) => d.action)).toEqual(['reset', 'reset']);
    expect(run({ hang: true, status: 418 }, 1)[0]).toMatchObject({ action: 'hang', status: null, body: null });
    expect(run({ failFirst: 2, hang: true }, 3).map((d) => d.action)).toEqual(['hang', 'hang', 'status']);
    expect(run({ failFirst: 1, reset: true, delayMs: 30 }, 2).map((d) => [d.action, d.delayMs])).toEqual([
      ['reset', 30],
      ['status', 30],
    ]);
  });

  it('a hang has no delay; a fixed delay applies to every answer', () => {
    expect(run({ hang: true }, 1)[0].delayMs).toBe(0);
    expect(run({ delayMs: 250, failFirst: 1 }, 2).map((d) => d.delayMs)).toEqual([250, 250]);
  });

  it('a random delay stays in range, is reproducible by seed and does not shift failPercent', () => {
    const delays = run({ delay: { minMs: 100, maxMs: 200 }, seed: 5 }, 300).map((d) => d.delayMs);
    expect(delays.every((ms) => Number.isInteger(ms) && ms >= 100 && ms <= 200)).toBe(true);
    expect(Math.min(...delays)).toBeLessThan(110);
    expect(Math.max(...delays)).toBeGreaterThan(190);
    expect(run({ delay: { minMs: 100, maxMs: 200 }, seed: 5 }, 300).map((d) => d.delayMs)).toEqual(delays);
    const plain = run({ failPercent: 50, seed: 3 }, 50).map((d) => d.failed);
    expect(run({ failPercent: 50, seed: 3, delay: { minMs: 0, maxMs: 10 } }, 50).map((d) => d.failed)).toEqual(plain);
  });

  it('uses the given body and headers, inferring the content type only when absent', () => {
    const [json] = run({ status: 429, body: '{"error":"slow down"}', headers: { 'Retry-After': '2' } }, 1);
    expect(json).toMatchObject({ status: 429, body: '{"error":"slow down"}', headers: { 'content-type': 'application/json', 'Retry-After': '2' } });
    expect(run({ body: 'nope' }, 1)[0].headers).toEqual({ 'content-type': 'text/plain; charset=utf-8' });
    expect(run({ body: '<x/>', headers: { 'Content-Type': 'application/xml' } }, 1)[0].headers).toEqual({ 'Content-Type': 'application/xml' });
    expect(run({ failFirst: 1, body: 'same' }, 2).map((d) => d.body)).toEqual(['same', 'same']);
  });
});

describe('per-item answers to a batch', () => {
  function items(input: unknown, bodies: (string | null)[]) {
    const behavior: MockBehavior = mockBehaviorSchema.parse(input);
    const state = createBehaviorState(behavior, seedless);
    return bodies.map((b) => {
      const d = decide(behavior, state, 'r');
      return { d, answer: d.perItem ? answerItems(behavior, state, b === null ? null : Buffer.from(b)) : null };
    });
  }
  const batch = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => ({ event: `e${i}` })));

  it('cycles itemStatuses over the items of each batch and answers 207 with one {status} per item', () => {
    const [{ d, answer }] = items({ itemStatuses: [200, 500, 422] }, [batch(5)]);
    expect(d).toMatchObject({ action: 'status', perItem: true, status: null, body: null, headers: { 'content-type': 'application/json' } });
    expect(answer!.itemStatuses).toEqual([200, 500, 422, 200, 500]);
    expect(answer!.status).toBe(207);
    expect(JSON.parse(answer!.body)).toEqual([{ status: 200 }, { status: 500 }, { status: 422 }, { status: 200 }, { status: 500 }]);
  });

  it('every item 2xx → 200; batchStatus overrides the HTTP status either way', () => {
    expect(items({ itemStatuses: [200, 201] }, [batch(3)])[0].answer).toMatchObject({ status: 200, itemStatuses: [200, 201, 200] });
    expect(items({ itemStatuses: [200, 500], batchStatus: 200 }, [batch(2)])[0].answer).toMatchObject({ status: 200, itemStatuses: [200, 500] });
    expect(items({ itemStatuses: [200], batchStatus: 500 }, [batch(2)])[0].answer).toMatchObject({ status: 500 });
  });

  it('each batch starts the cycle again; an empty batch gets [] and 200', () => {
    const [a, b, c] = items({ itemStatuses: [500, 200] }, [batch(3), batch(1), '[]']);
    expect(a.answer!.itemStatuses).toEqual([500, 200, 500]);
    expect(b.answer).toMatchObject({ status: 207, itemStatuses: [500] });
    expect(c.answer).toEqual({ status: 200, body: '[]', itemStatuses: [] });
  });

  it('a body that is not a JSON array is one item, answered with its status', () => {
    for (const body of ['{"event":"one"}', 'not json', null]) {
      expect(items({ itemStatuses: [429, 200] }, [body])[0].answer).toEqual({ status: 429, body: '{"status":429}', itemStatuses: [429] });
    }
  });

  it('itemFailPercent fails a seeded share of items with itemFailStatus (default 500), the same for the same seed', () => {
    const once = () => items({ itemFailPercent: 30, seed: 7, itemFailStatus: 503 }, [batch(400), batch(400)]).map((x) => x.answer!.itemStatuses);
    const [first, second] = once();
    expect(once()).toEqual([first, second]);
    expect(new Set(first)).toEqual(new Set([200, 503]));
    const share = first.filter((s) => s === 503).length / first.length;
    expect(share).toBeGreaterThan(0.22);
    expect(share).toBeLessThan(0.38);
    expect(second).not.toEqual(first);
    expect(items({ itemFailPercent: 100 }, [batch(2)])[0].answer).toMatchObject({ status: 207, itemStatuses: [500, 500] });
    expect(items({ itemFailPercent: 0 }, [batch(2)])[0].answer).toMatchObject({ status: 200, itemStatuses: [200, 200] });
  });

  it('failFirst failures keep their whole-request answer; the requests that pass get the per-item answer', () => {
    const [a, b] = items({ failFirst: 1, status: 503, itemStatuses: [200, 400] }, [batch(2), batch(2)]);
    expect(a.d).toMatchObject({ perItem: false, failed: true, status: 503 });
    expect(a.answer).toBeNull();
    expect(b.d).toMatchObject({ perItem: true, failed: false });
    expect(b.answer).toMatchObject({ status: 207, itemStatuses: [200, 400] });
  });
});
