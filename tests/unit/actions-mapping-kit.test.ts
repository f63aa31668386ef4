import { describe, expect, it } from 'vitest';
import { DataNotAnObject, MappingFailed, mapData, TemplateTooLarge } from '../../src/main/engine/actions/mapping-kit';
import { MappedDataTooLarge } from '../../src/shared/actions/data-mapping';
import { buildActionsRequest } from '../../src/main/engine/actions/request';
import { MAX_MAPPED_BODY_BYTES } from '../../src/shared/limits';
import type { ActionsMapping, Json, NormalizedCall } from '../../src/shared/types';

// The engine maps data with Segment's own mapping kit (@segment/actions-core transform) and reads the
// result as Segment's webhook action does. These pin the behaviours issue 23 names.

const call: NormalizedCall = {
  type: 'track',
  messageId: 'm-1',
  userId: 'u-1',
  event: 'Order Completed',
  properties: { total: 42, zero: 0, no: false, empty: '', nil: null, plan: 'pro', url: 'https://x.example/a?b=1&c=<d>', products: [{ sku: 'A-1' }, { sku: 'B-2' }], 'dotted.key': 'd', tags: ['a', 'b'] },
  traits: { name: 'Zoë "Z" O\'Neil' },
  context: { library: { name: 'analytics.js', version: '1' } },
  timestamp: '2026-01-01T00:00:00.000Z',
  receivedAt: '2026-01-01T00:00:01.000Z',
};

const map = (data: Json | undefined) => {
  const r = mapData(data, call);
  return r.text === null ? null : JSON.parse(r.text);
};

describe('Actions data through Segment\'s mapping kit', () => {
  it('templates are raw, not HTML-escaped (Segment since Nov 2022)', () => {
    expect(map({ u: { '@template': '{{properties.url}}' }, n: { '@template': '{{{traits.name}}}' } })).toEqual({ u: 'https://x.example/a?b=1&c=<d>', n: 'Zoë "Z" O\'Neil' });
  });

  it('omitted data is the whole call; a top-level @path to nothing, null or "" sends no body', () => {
    expect(map(undefined)).toEqual(call);
    expect(map({ '@path': '$.properties.missing' })).toBeNull();
    expect(map({ '@path': '$.properties.nil' })).toBeNull();
    expect(map({ '@path': '$.properties.empty' })).toBeNull();
  });

  it('@path edge cases as Segment: a falsy value met on the way is the value, inherited properties, brackets, no $.', () => {
    expect(map({ z: { '@path': '$.properties.zero' }, f: { '@path': '$.properties.no' }, past: { '@path': '$.properties.zero.x' } })).toEqual({ z: 0, f: false, past: 0 });
    expect(map({ n: { '@path': '$.properties.tags.length' } })).toEqual({ n: 2 });
    expect(map({ s: { '@path': "$.properties['dotted.key']" } })).toEqual({});
    expect(map({ s: { '@path': '$.properties.products[1].sku' }, t: { '@path': 'properties.plan' } })).toEqual({ s: 'B-2', t: 'pro' });
  });

  it('every directive family runs', () => {
    const data = {
      if: { '@if': { exists: { '@path': '$.properties.plan' }, then: 'yes', else: 'no' } },
      case: { '@case': { operator: 'upper', value: { '@path': '$.properties.plan' } } },
      replace: { '@replace': { pattern: 'p', replacement: 'P', value: { '@path': '$.properties.plan' } } },
      skus: { '@arrayPath': ['$.properties.products', { id: { '@path': '$.sku' } }] },
      lit: { '@literal': { '@path': 'not evaluated?' } },
      flat: { '@flatten': { value: { '@path': '$.context' }, separator: '_' } },
      json: { '@json': { mode: 'encode', value: { '@path': '$.properties.tags' } } },
      merged: { '@merge': { direction: 'right', objects: [{ a: 1 }, { a: 2, b: { '@path': '$.userId' } }] } },
      trans: { '@transform': { apply: { p: { '@path': '$.properties.plan' } }, mapping: { plan: { '@path': '$.p' } } } },
      nonull: { '@excludeWhenNull': { a: { '@path': '$.properties.nil' }, b: 1 } },
      liquid: { '@liquid': '{{ properties.plan | upcase }}-{{ userId }}' },
    };
    expect(map(data as Json)).toMatchObject({
      if: 'yes',
      case: 'PRO',
      replace: 'Pro',
      skus: [{ id: 'A-1' }, { id: 'B-2' }],
      flat: { library_name: 'analytics.js', library_version: '1' },
      json: '["a","b"]',
      merged: { a: 2, b: 'u-1' },
      trans: { plan: 'pro' },
      nonull: { b: 1 },
      liquid: 'PRO-u-1',
    });
  });

  it('data that is not an object is refused as Segment refuses it, nothing sent', () => {
    for (const data of ['text', 3, true, [1, 2], { '@path': '$.properties.plan' }, { '@path': '$.properties.tags' }] as Json[]) {
      expect(() => mapData(data, call)).toThrow(DataNotAnObject);
    }
    expect(() => mapData({ '@path': '$.properties.plan' }, call)).toThrow(/is a string \("pro"\), not an object: Segment's Webhooks \(Actions\) refuses it/);
  });

  it('a directive the kit fails on for this call is a reason, not a crash', () => {
    expect(() => mapData({ l: { '@liquid': '{% for p in properties.tags %}{{ p }}{% endfor %}' } }, call)).toThrow(MappingFailed);
    expect(() => mapData({ l: { '@liquid': '{% for p in properties.tags %}{{ p }}{% endfor %}' } }, call)).toThrow(/^the mapping kit failed on this call: .*tag "for" is disabled/);
  });

  it('the mapping in the settings is not changed by evaluating it (@replace writes defaults into its options)', () => {
    const data = { r: { '@replace': { pattern: 'p', value: { '@path': '$.properties.plan' } } } };
    const before = JSON.stringify(data);
    mapData(data, call);
    expect(JSON.stringify(data)).toBe(before);
  });
});

describe('the mapped body limit with a kit that cannot be stopped while it runs', () => {
  const big: NormalizedCall = { ...call, properties: { blob: 'x'.repeat(30_000) } };
  const bigBytes = Buffer.byteLength(JSON.stringify(big));
  const copies = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, { '@path': '$.' }]));
  const thrown = (f: () => unknown): MappedDataTooLarge => {
    try {
      f();
    } catch (e) {
      return e as MappedDataTooLarge;
    }
    throw new Error('expected a throw');
  };

  it('1,000 whole-call copies stop once their measured sum passes 16 times the call', () => {
    const err = thrown(() => mapData(copies(1000), big));
    expect(err).toBeInstanceOf(MappedDataTooLarge);
    expect(err.limitBytes).toBe(16 * bigBytes);
    expect(err.callBytes).toBe(bigBytes);
    expect(err.reachedBytes).toBeGreaterThan(16 * bigBytes);
    expect(err.reachedBytes).toBeLessThan(17 * bigBytes + 100);
    expect(err.message).toMatch(/^the mapped body passed its limit of [\d.]+ KB \(evaluation stopped at [\d,]+ bytes\): a call's mapped data may be 16 times the call/);
  });

  it('a small call may be mapped to 8 KB whatever its size, and never past 512 KB', () => {
    expect(mapData(copies(15), call).text!.length).toBeLessThan(8 * 1024);
    expect(thrown(() => mapData(copies(1000), call)).limitBytes).toBe(8 * 1024);
    expect(thrown(() => mapData(copies(1000), big, MAX_MAPPED_BODY_BYTES)).limitBytes).toBe(MAX_MAPPED_BODY_BYTES);
  });

  it('a template that could repeat a large value is refused before it runs', () => {
    const t = '{{properties.blob}}'.repeat(40);
    const err = thrown(() => mapData({ t: { '@template': t } }, big));
    expect(err).toBeInstanceOf(TemplateTooLarge);
    expect(err.message).toMatch(/passed its limit of [\d.]+ KB \(a template in it could make [\d,]+ bytes of this call; not evaluated\)/);
    expect(() => mapData({ t: { '@template': '{{properties.blob}}'.repeat(10) } }, big)).not.toThrow();
  });

  it('at the limit passes, one byte over fails (UTF-8 bytes of the JSON text)', () => {
    const overhead = '{"v":""}'.length;
    const n = (MAX_MAPPED_BODY_BYTES - overhead) / 2;
    const v = { ...call, properties: { v: 'é'.repeat(n) } };
    expect(mapData({ v: { '@path': '$.properties.v' } }, v, MAX_MAPPED_BODY_BYTES).text).toHaveLength(n + overhead);
    expect(() => mapData({ v: { '@path': '$.properties.v' }, x: 'y' }, v, MAX_MAPPED_BODY_BYTES)).toThrow(MappedDataTooLarge);
  });
});

describe('the Actions request from mapped data', () => {
  const mapping: ActionsMapping = { name: 'm', trigger: {}, url: 'https://r.example/x', method: 'POST', headers: {}, data: { u: { '@template': '{{properties.url}}' } } };

  it('signs exactly the body it sends, raw characters included', () => {
    const r = buildActionsRequest(mapping, [call]);
    expect(r.body).toBe('{"u":"https://x.example/a?b=1&c=<d>"}');
    expect(r.signedText).toBe(r.body);
  });

  it('a batch item that resolves to nothing is null, and a first such item signs nothing', () => {
    const m = { ...mapping, data: { '@path': '$.properties.nope' }, batchSize: 10 };
    const r = buildActionsRequest(m, [call, call]);
    expect(r.body).toBe('[null,null]');
    expect(r.signedText).toBeNull();
  });
});
