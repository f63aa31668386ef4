import { describe, expect, it } from 'vitest';
import { dataMappingErrors, parseDataPath, renderTemplate, resolveData } from '../../src/shared/actions/data-mapping';
import type { NormalizedCall } from '../../src/shared/types';

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
