import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { differences, distance, formatDifferences, matches } from '../../src/main/testing/match';

// webhook-lab/testing's match rules (src/main/testing/match.ts): expect().toMatchObject's, plus
// predicates and RegExps anywhere; and the diff a timed-out wait prints.

const call = {
  type: 'track',
  event: 'Order Completed',
  userId: 'u1',
  properties: { total: 42, 'order id': 'o-1', products: [{ sku: 'a', qty: 1 }, { sku: 'b', qty: 2 }], coupon: null },
};

describe('match', () => {
  it('compares the keys a partial names, at any depth; others are ignored', () => {
    expect(matches({ type: 'track', properties: { total: 42 } }, call)).toBe(true);
    expect(matches({}, call)).toBe(true);
    expect(matches(undefined, call)).toBe(true);
    expect(matches({ properties: { total: 43 } }, call)).toBe(false);
    expect(matches({ properties: { coupon: null } }, call)).toBe(true);
    expect(matches({ properties: { coupon: undefined } }, call)).toBe(false); // present (null) is not absent
    expect(matches({ context: undefined }, call)).toBe(true);
    expect(matches({ properties: 'x' }, call)).toBe(false);
    expect(matches({ properties: { total: { value: 42 } } }, call)).toBe(false);
  });

  it('objects from another realm (Jest, Vitest vmThreads) compare by shape, as partial objects', () => {
    const foreign = runInNewContext("({ type: 'track', properties: { total: 42, items: [{ sku: 'a' }] }, nothing: Object.create(null) })") as object;
    expect(Object.getPrototypeOf(foreign)).not.toBe(Object.prototype);
    expect(differences({ properties: { total: 42, items: [{ sku: 'a' }] } }, foreign)).toEqual([]);
    expect(matches({ properties: { total: 43 } }, foreign)).toBe(false);
    // And a match written in the other realm against this realm's call.
    const foreignMatch = runInNewContext("({ properties: { total: 42 } })") as object;
    expect(matches(foreignMatch, call)).toBe(true);
    expect(matches({ nothing: {} }, foreign)).toBe(true);
    // A class instance is still not a plain object: compared by identity.
    class Money {
      amount = 42;
    }
    expect(matches({ properties: new Money() }, { properties: { amount: 42 } })).toBe(false);
  });

  it('a predicate at a key is called when the key is absent too (with undefined); an async one never matches, and says why', () => {
    expect(matches({ anonymousId: (v: unknown) => v === undefined }, call)).toBe(true);
    expect(matches({ properties: { missing: (v: unknown) => v === undefined || v === 0 } }, call)).toBe(true);
    expect(matches({ anonymousId: (v: unknown) => typeof v === 'string' }, call)).toBe(false);
    const isAsync = async () => true;
    expect(matches({ event: isAsync }, call)).toBe(false);
    expect(matches(isAsync, call)).toBe(false);
    expect(differences({ event: isAsync }, call)[0].received).toMatch(/^a Promise \(an async predicate cannot be waited on: make it synchronous\)/);
  });

  it('arrays: the same length, item by item (items partially)', () => {
    expect(matches({ properties: { products: [{ sku: 'a' }, { qty: 2 }] } }, call)).toBe(true);
    expect(matches({ properties: { products: [{ sku: 'b' }, { sku: 'a' }] } }, call)).toBe(false);
    expect(matches({ properties: { products: [{ sku: 'a' }] } }, call)).toBe(false);
    expect(matches({ properties: { products: [] } }, call)).toBe(false);
    expect(matches([1, 2], [1, 2])).toBe(true);
  });

  it('a function is a predicate over the value where it stands; a RegExp tests a string', () => {
    expect(matches((c: typeof call) => c.properties.total > 40, call)).toBe(true);
    expect(matches({ properties: { total: (v: number) => v > 100 } }, call)).toBe(false);
    expect(matches({ event: /completed$/i, userId: /^u\d$/ }, call)).toBe(true);
    expect(matches({ properties: { total: /42/ } }, call)).toBe(false); // a number is not a string
    const g = /Order/g;
    expect([matches({ event: g }, call), matches({ event: g }, call)]).toEqual([true, true]); // no lastIndex carried over
    expect(matches(() => {
      throw new Error('boom');
    }, call)).toBe(false);
  });

  it('lists each difference with its path, expected and received', () => {
    expect(differences({ type: 'identify', properties: { total: 41, 'order id': 'o-2', missing: 1, products: [{ sku: 'a' }, { sku: 'c' }] } }, call)).toEqual([
      { path: 'type', expected: "'identify'", received: "'track'" },
      { path: 'properties.total', expected: '41', received: '42' },
      { path: 'properties["order id"]', expected: "'o-2'", received: "'o-1'" },
      { path: 'properties.missing', expected: '1', received: 'absent' },
      { path: 'properties.products[1].sku', expected: "'c'", received: "'b'" },
    ]);
    expect(differences({ properties: { products: [1] } }, call)[0]).toMatchObject({ path: 'properties.products', expected: 'an array of 1: [ 1 ]' });
    const [d] = differences(function bigOrder(c: typeof call) { return c.properties.total > 100; }, call);
    expect(d).toMatchObject({ path: '', expected: 'predicate bigOrder to return true' });
    expect(differences({ event: 'x' }, 'not an object')).toEqual([{ path: '', expected: "{ event: 'x' }", received: "'not an object'" }]);
  });

  it('ranks a top-level difference (type, event) farther than a nested one (a property)', () => {
    const match = { event: 'Order Completed', properties: { total: 42 } };
    const wrongTotal = distance(differences(match, { ...call, properties: { total: 41 } }));
    const wrongEvent = distance(differences(match, { ...call, event: 'Product Viewed' }));
    expect(wrongTotal).toBeLessThan(wrongEvent);
    // A call with the property, of another value, is closer than one without it.
    const noTotal = distance(differences(match, { ...call, properties: {} }));
    expect(wrongTotal).toBeLessThan(noTotal);
    expect(distance(differences({ event: 'Order Completed' }, { ...call, event: 'Other' }))).toBeLessThan(distance(differences({ event: 'Order Completed' }, { type: 'identify' })));
  });

  it('prints a diff the way a test runner does, at most 8 differences', () => {
    expect(formatDifferences([{ path: 'properties.total', expected: '42', received: '41' }], '  ')).toBe('  properties.total\n    - expected 42\n    + received 41');
    const many = Array.from({ length: 10 }, (_, i) => ({ path: `p${i}`, expected: '1', received: '2' }));
    expect(formatDifferences(many, '').split('\n').at(-1)).toBe('… and 2 more differences');
  });
});
