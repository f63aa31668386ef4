import { describe, expect, it } from 'vitest';
import { MAX_CALL_DEPTH, nestsDeeperThan, pathPastDepth, stringifyJson, TOO_DEEP_REASON } from '../../src/shared/nesting';
import { NORMALIZE_VERSION } from '../../src/shared/normalize';
import { collectorDropReason } from '../../src/shared/message-rules';
import { prettyJson } from '../../src/renderer/components/format';

const arrays = (levels: number, inner: unknown = 1): unknown => JSON.parse('['.repeat(levels) + JSON.stringify(inner) + ']'.repeat(levels));

describe('nestsDeeperThan', () => {
  it('counts objects and arrays, the value itself as level 1; primitives are level 0', () => {
    expect(nestsDeeperThan('x', 0)).toBe(false);
    expect(nestsDeeperThan(null, 0)).toBe(false);
    expect(nestsDeeperThan({}, 0)).toBe(true);
    expect(nestsDeeperThan({}, 1)).toBe(false);
    expect(nestsDeeperThan({ a: [{ b: 1 }] }, 3)).toBe(false);
    expect(nestsDeeperThan({ a: [{ b: 1 }] }, 2)).toBe(true);
    // The deepest branch counts, wherever it is.
    expect(nestsDeeperThan({ a: 1, b: { c: 2 }, d: [1, 2, [3, [4]]] }, 3)).toBe(true);
    expect(nestsDeeperThan({ a: 1, b: { c: 2 }, d: [1, 2, [3, [4]]] }, 4)).toBe(false);
  });

  it('is safe at any depth JSON.parse accepts', () => {
    const deep = arrays(1_000_000);
    expect(nestsDeeperThan(deep, 1_000_000)).toBe(false);
    expect(nestsDeeperThan(deep, 999_999)).toBe(true);
  });
});

describe('pathPastDepth', () => {
  it('names the keys down to the first container past the limit, counting as nestsDeeperThan does', () => {
    expect(pathPastDepth('x', 0)).toBeNull();
    expect(pathPastDepth({}, 0)).toEqual([]);
    expect(pathPastDepth({ a: [{ b: 1 }] }, 3)).toBeNull();
    expect(pathPastDepth({ a: [{ b: 1 }] }, 2)).toEqual(['a', 0]);
    expect(pathPastDepth({ a: 1, b: { c: 2 }, d: [1, 2, [3, [4]]] }, 3)).toEqual(['d', 2, 1]);
    for (const v of [{ a: 1, b: { c: { d: {} } } }, arrays(5), { x: [[{}]] }]) {
      for (let limit = 0; limit < 6; limit++) expect(pathPastDepth(v, limit) !== null).toBe(nestsDeeperThan(v, limit));
    }
  });

  it('is safe at any depth JSON.parse accepts', () => {
    const deep = arrays(1_000_000);
    expect(pathPastDepth(deep, 1_000_000)).toBeNull();
    expect(pathPastDepth(deep, 3)).toEqual([0, 0, 0]);
  });
});

describe('stringifyJson', () => {
  it('is JSON.stringify where that works, including the members JSON leaves out', () => {
    const v = { a: [1, 'x\u0000\ud800', null, true, -0, 1e21, undefined], b: { c: undefined, d: () => 1, ['__proto__']: 2 }, e: {} };
    expect(stringifyJson(v)).toBe(JSON.stringify(v));
    expect(stringifyJson(undefined)).toBe('null');
  });

  it('writes the same text past the depth JSON.stringify survives', () => {
    const text = `{"a":${'[{"k":"v","n":[1,2],"o":{},"e":[]},'.repeat(20_000)}1${']'.repeat(20_000)},"__proto__":{"x":1e400}}`;
    const value = JSON.parse(text) as unknown;
    expect(() => JSON.stringify(value)).toThrow(RangeError);
    // 1e400 parses to Infinity, which JSON writes as null, as natively.
    expect(stringifyJson(value)).toBe(text.replace('1e400', 'null'));
  });
});

describe('the collector drops a call nested too deep', () => {
  it(`at ${MAX_CALL_DEPTH + 1} levels, not at ${MAX_CALL_DEPTH}`, () => {
    const call = (levels: number) => ({ type: 'track', userId: 'u', event: 'E', properties: { p: arrays(levels) } });
    expect(collectorDropReason(call(MAX_CALL_DEPTH - 2), NORMALIZE_VERSION)).toBeNull();
    expect(collectorDropReason(call(MAX_CALL_DEPTH - 1), NORMALIZE_VERSION)).toBe(TOO_DEEP_REASON);
    expect(collectorDropReason(call(100_000), NORMALIZE_VERSION)).toBe(TOO_DEEP_REASON);
  });

  it('an object or array type is an unknown type, described rather than serialized', () => {
    expect(collectorDropReason({ type: arrays(100_000), userId: 'u' }, NORMALIZE_VERSION)).toBe('unknown type (an array)');
    expect(collectorDropReason({ type: { a: 1 }, userId: 'u' }, NORMALIZE_VERSION)).toBe('unknown type (an object)');
  });
});

describe("the inspector's body display (prettyJson)", () => {
  it('indents a body up to the limit, and shows a deeper one as it is, at any depth', () => {
    const within = JSON.stringify(arrays(MAX_CALL_DEPTH));
    expect(prettyJson(within)).toBe(JSON.stringify(JSON.parse(within), null, 2));
    const over = JSON.stringify(arrays(MAX_CALL_DEPTH + 1));
    expect(prettyJson(over)).toBe(over);
    const huge = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    expect(prettyJson(huge)).toBe(huge);
  });
});
