import { describe, expect, it } from 'vitest';
import { dataFieldsOver, dataMappingErrors, MappedDataTooLarge, mappedDataText, parseDataPath, renderTemplate, resolveData, utf8Length } from '../../src/shared/actions/data-mapping';
import { buildActionsRequest } from '../../src/main/engine/actions/request';
import { MAX_MAPPED_BODY_BYTES, mappedBodyLimit } from '../../src/shared/limits';
import type { Json, NormalizedCall } from '../../src/shared/types';

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

describe('data paths', () => {
  it('parses $. paths with dotted keys and indexes', () => {
    expect(parseDataPath('$.')).toEqual([]);
    expect(parseDataPath('$.properties.products[1].sku')).toEqual(['properties', 'products', 1, 'sku']);
    expect(parseDataPath('$.a[0][2]')).toEqual(['a', 0, 2]);
  });

  it('refuses paths without $. or with empty parts', () => {
    for (const p of ['properties.total', '$', '$..a', '$.a.', '$.a[x]', '$.[0]', '']) expect(parseDataPath(p)).toBeNull();
  });
});

describe('resolving data against a call', () => {
  it('omitted data is the whole call', () => {
    expect(resolveData(undefined, call)).toEqual(call);
    expect(resolveData({ '@path': '$.' }, call)).toEqual(call);
  });

  it('@path takes the value there; a path to nothing leaves the field out', () => {
    const data = { total: { '@path': '$.properties.total' }, sku: { '@path': '$.properties.products[1].sku' }, gone: { '@path': '$.properties.nope.deeper' }, past: { '@path': '$.properties.products[5]' } };
    expect(resolveData(data, call)).toEqual({ total: 42, sku: 'B-2' });
  });

  it('@path keeps a null that is there', () => {
    expect(resolveData({ e: { '@path': '$.properties.empty' } }, call)).toEqual({ e: null });
  });

  it('a top-level @path to nothing resolves to nothing', () => {
    expect(resolveData({ '@path': '$.properties.missing' }, call)).toBeUndefined();
  });

  it('literals stay, objects and arrays recurse, an array item that resolves to nothing is null', () => {
    const data = { source: 'lab', n: 1, ok: true, z: null, nested: { who: { '@path': '$.userId' } }, list: [{ '@path': '$.event' }, { '@path': '$.nope' }, 3] };
    expect(resolveData(data, call)).toEqual({ source: 'lab', n: 1, ok: true, z: null, nested: { who: 'u-1' }, list: ['Order Completed', null, 3] });
  });
});

describe('@template', () => {
  it('replaces placeholders with the value text, missing ones with nothing', () => {
    expect(renderTemplate('{{traits.name}} bought {{properties.total}} ({{ properties.plan }}){{properties.nope}}!', call)).toBe('Ada bought 42 (pro)!');
    expect(renderTemplate('{{properties.products[0].sku}}', call)).toBe('A-1');
    expect(renderTemplate('[{{properties.empty}}]', call)).toBe('[]');
  });

  it('double braces HTML-escape strings like mapping-kit; triple braces do not', () => {
    expect(renderTemplate('{{properties.url}}', call)).toBe('https:&#x2F;&#x2F;shop.example&#x2F;a?b&#x3D;1');
    expect(renderTemplate('{{{properties.url}}}', call)).toBe('https://shop.example/a?b=1');
  });

  it('an object reads as JavaScript writes it, as in Segment', () => {
    expect(renderTemplate('{{traits}}', call)).toBe('[object Object]');
  });

  it('resolves inside data', () => {
    expect(resolveData({ text: { '@template': 'Hi {{traits.name}}' } }, call)).toEqual({ text: 'Hi Ada' });
  });
});

describe('data mapping validation', () => {
  it('accepts literals and valid directives anywhere', () => {
    expect(dataMappingErrors({ a: 1, b: [{ c: { '@path': '$.properties.total' } }], t: { '@template': 'x {{a.b[0]}} {{{c}}}' } })).toEqual([]);
  });

  it('names where a bad directive is', () => {
    expect(dataMappingErrors({ a: { '@path': 'properties.total' } })).toEqual([
      { path: ['a', '@path'], message: expect.stringContaining('start with "$."') },
    ]);
    expect(dataMappingErrors({ list: [1, { '@literal': true }] })).toEqual([{ path: ['list', 1, '@literal'], message: 'unsupported directive "@literal": use @path or @template' }]);
    expect(dataMappingErrors({ '@path': 5 })).toEqual([{ path: ['@path'], message: '@path takes a string' }]);
    expect(dataMappingErrors({ x: { '@path': '$.a', other: 1 } })[0].path).toEqual(['x']);
    expect(dataMappingErrors({ '@template': 'a {{}} b' })[0].message).toContain('placeholder "{{}}"');
  });
});

describe('the mapped body limit (issue 22 item 5)', () => {
  const big: NormalizedCall = { ...call, properties: { blob: 'x'.repeat(30_000) } };
  const copies = (n: number, path = '$.') => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, { '@path': path }]));

  it('mappedDataText is exactly JSON.stringify of the resolved data, under the limit', () => {
    const cases: (Json | undefined)[] = [
      undefined,
      { '@path': '$.properties.missing' },
      { total: { '@path': '$.properties.total' }, who: { '@template': 'user {{userId}} {{{properties.url}}}' }, list: [{ '@path': '$.nope' }, 3, [], {}], é: 'ü€😀', n: null },
      ['a', { '@path': '$.properties.products' }],
    ];
    for (const data of cases) {
      const r = resolveData(data, call);
      expect(mappedDataText(data, call)).toBe(r === undefined ? undefined : JSON.stringify(r));
    }
  });

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
    const e = thrown(() => mappedDataText(copies(1000), big));
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

  it('a template repeating a large value stops too, before building the whole text', () => {
    const template = '{{properties.blob}}'.repeat(1000);
    const e = thrown(() => mappedDataText({ t: { '@template': template } }, big));
    expect(e.reachedBytes).toBeLessThan(e.limitBytes + 31_000);
  });

  it('a small call may be mapped to 8 KB whatever its size; its own size is measured only past that', () => {
    expect(mappedDataText(copies(20), call)!.length).toBeLessThan(8 * 1024);
    const e = thrown(() => mappedDataText(copies(1000), call));
    expect(e).toMatchObject({ limitBytes: 8 * 1024, callBytes: JSON.stringify(call).length });
    // Up to 16 times a 1 KB call.
    const kb: NormalizedCall = { ...call, properties: { s: 'y'.repeat(900) } };
    expect(mappedDataText(copies(15), kb)!.length).toBeGreaterThan(8 * 1024);
    expect(thrown(() => mappedDataText(copies(17), kb)).limitBytes).toBe(16 * JSON.stringify(kb).length);
  });

  it('the limit is on UTF-8 bytes: at the limit passes, one byte over fails', () => {
    const limit = 100;
    // {"s":"…"} is 8 bytes around the string; "é" is 2 bytes in UTF-8, 1 unit in JS.
    const at: NormalizedCall = { ...call, properties: { s: 'é'.repeat(46) } };
    expect(mappedDataText({ s: { '@path': '$.properties.s' } }, at, limit)).toHaveLength(54);
    const over: NormalizedCall = { ...call, properties: { s: `${'é'.repeat(46)}a` } };
    expect(() => mappedDataText({ s: { '@path': '$.properties.s' } }, over, limit)).toThrow(MappedDataTooLarge);
    expect(utf8Length('aé€😀')).toBe(1 + 2 + 3 + 4);
  });

  it('counts a mapping\'s fields for the config-time limit, a directive as one', () => {
    expect(dataFieldsOver(copies(1000), 1000)).toBe(false);
    expect(dataFieldsOver(copies(1001), 1000)).toBe(true);
    // a, its 3 items, b: 5 fields.
    expect(dataFieldsOver({ a: [1, 2, { b: { '@path': '$.' } }] }, 5)).toBe(false);
    expect(dataFieldsOver({ a: [1, 2, { b: { '@path': '$.' } }] }, 4)).toBe(true);
    expect(dataFieldsOver({ '@path': '$.' }, 0)).toBe(false);
  });
});
