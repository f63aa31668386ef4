import { describe, expect, it } from 'vitest';
import { mapData, TemplateTooLarge } from '../../src/main/engine/actions/mapping-kit';
import { buildActionsRequest } from '../../src/main/engine/actions/request';
import { dataFieldsOver, MappedDataTooLarge } from '../../src/shared/actions/data-mapping';
import { MAX_MAPPED_BODY_BYTES, mappedBodyLimit } from '../../src/shared/limits';
import type { NormalizedCall } from '../../src/shared/types';

// The mapped body limit (issue 22 item 5) as the engine keeps it with Segment's mapping kit, which
// cannot be stopped while it runs (main/engine/actions/output-bound.ts). What the kit makes of each
// directive: actions-mapping-kit.test.ts and the differential test (npm run test:fidelity).

const call: NormalizedCall = {
  type: 'track',
  messageId: 'm-1',
  userId: 'u-1',
  event: 'Order Completed',
  properties: { total: 42, plan: 'pro', url: 'https://shop.example/a?b=1', products: [{ sku: 'A-1' }, { sku: 'B-2' }], empty: null },
  traits: { name: 'Ada' },
  timestamp: '2026-01-01T00:00:00.000Z',
  receivedAt: '2026-01-01T00:00:01.000Z',
};

describe('the mapped body limit (issue 22 item 5)', () => {
  const big: NormalizedCall = { ...call, properties: { blob: 'x'.repeat(30_000) } };
  const copies = (n: number, path = '$.') => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, { '@path': path }]));
  const thrown = (f: () => unknown): MappedDataTooLarge => {
    try {
      f();
    } catch (e) {
      if (e instanceof MappedDataTooLarge) return e;
      throw e;
    }
    throw new Error('did not throw');
  };

  it('the limit is 16 times the call, at least 8 KB, at most 512 KB', () => {
    expect(mappedBodyLimit(100)).toBe(8 * 1024);
    expect(mappedBodyLimit(1024)).toBe(16 * 1024);
    expect(mappedBodyLimit(30_000)).toBe(480_000);
    expect(mappedBodyLimit(40_000)).toBe(MAX_MAPPED_BODY_BYTES);
  });

  it('stops evaluating once past the limit: 1,000 whole-call copies of a 30 KB call stop at 16 times the call, not 30 MB', () => {
    const e = thrown(() => mapData(copies(1000), big));
    const callBytes = JSON.stringify(big).length;
    expect(e.callBytes).toBe(callBytes);
    expect(e.limitBytes).toBe(16 * callBytes);
    // Stopped within one copy of the limit.
    expect(e.reachedBytes).toBeGreaterThan(e.limitBytes);
    expect(e.reachedBytes).toBeLessThan(e.limitBytes + callBytes + 100);
    expect(e.message).toMatch(/^the mapped body passed its limit of [\d.]+ KB \(evaluation stopped at [\d,]+ bytes\): a call's mapped data may be 16 times the call \(here [\d.]+ KB\), at least 8 KB, at most 512 KB$/);
    // And the same through an Actions request.
    expect(() => buildActionsRequest({ name: 'm', trigger: {}, url: 'http://x/', method: 'POST', headers: {}, data: copies(1000) }, [big])).toThrow(MappedDataTooLarge);
  });

  it('a template repeating a large value is refused before it is built', () => {
    const e = thrown(() => mapData({ t: { '@template': '{{properties.blob}}'.repeat(1000) } }, big));
    expect(e).toBeInstanceOf(TemplateTooLarge);
    expect(e.message).toMatch(/a template in it could make [\d,]+ bytes of this call; not evaluated/);
  });

  it('a small call may be mapped to 8 KB whatever its size; its own size is measured only past that', () => {
    expect(mapData(copies(15), call).text!.length).toBeLessThan(8 * 1024);
    const e = thrown(() => mapData(copies(1000), call));
    expect(e).toMatchObject({ limitBytes: 8 * 1024, callBytes: JSON.stringify(call).length });
    // Up to 16 times a 1 KB call.
    const kb: NormalizedCall = { ...call, properties: { s: 'y'.repeat(900) } };
    expect(mapData(copies(15), kb).text!.length).toBeGreaterThan(8 * 1024);
    expect(thrown(() => mapData(copies(17), kb)).limitBytes).toBe(16 * JSON.stringify(kb).length);
  });

  it('the limit is on UTF-8 bytes: at the limit passes, one byte over fails', () => {
    const limit = 100;
    // {"s":"…"} is 8 bytes around the string; "é" is 2 bytes in UTF-8, 1 unit in JS.
    const at: NormalizedCall = { ...call, properties: { s: 'é'.repeat(46) } };
    expect(mapData({ s: { '@path': '$.properties.s' } }, at, limit).text).toHaveLength(54);
    const over: NormalizedCall = { ...call, properties: { s: `${'é'.repeat(46)}a` } };
    expect(() => mapData({ s: { '@path': '$.properties.s' } }, over, limit)).toThrow(MappedDataTooLarge);
  });

  it("counts a mapping's fields for the config-time limit, a directive as one", () => {
    expect(dataFieldsOver(copies(1000), 1000)).toBe(false);
    expect(dataFieldsOver(copies(1001), 1000)).toBe(true);
    // a, its 3 items, b: 5 fields.
    expect(dataFieldsOver({ a: [1, 2, { b: { '@path': '$.' } }] }, 5)).toBe(false);
    expect(dataFieldsOver({ a: [1, 2, { b: { '@path': '$.' } }] }, 4)).toBe(true);
    expect(dataFieldsOver({ '@path': '$.' }, 0)).toBe(false);
  });
});
