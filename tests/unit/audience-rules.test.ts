import { describe, expect, it } from 'vitest';
import { audienceKey, computeValue, countEvents, evaluate, matchesRule, traitValue, type Profile } from '../../src/main/engine/simulation/audiences/rules';
import { audienceRuleSchema, type AudienceRule, type TraitCondition } from '../../src/shared/audience.schema';

const NOW = Date.parse('2024-06-30T12:00:00.000Z');
const DAY = 86_400_000;
const ago = (days: number) => NOW - days * DAY;

function profile(userId: string, traits: Profile['traits'] = {}, events: Profile['events'] = []): Profile {
  return { userId, traits, events };
}

const trait = (t: string, op: TraitCondition['op'], value?: TraitCondition['value']): AudienceRule => ({
  combine: 'and',
  conditions: [{ kind: 'trait', trait: t, op, ...(value === undefined ? {} : { value }) }],
});
const is = (rule: AudienceRule, p: Profile) => matchesRule(audienceRuleSchema.parse(rule), p, NOW);

describe('audienceKey', () => {
  it.each([
    ['High Value Users', 'high_value_users'],
    ['  high-value  users!! ', 'high_value_users'],
    ['lastOrderTotal', 'last_order_total'],
    ['Orders (30d)', 'orders_30d'],
    ['Café Crème', 'cafe_creme'],
    ['VIP', 'vip'],
    ['!!!', 'audience'],
  ])('%s → %s', (name, key) => expect(audienceKey(name)).toBe(key));
});

describe('trait conditions', () => {
  const p = profile('u', { plan: 'pro', seats: 12, score: '7.5', tags: ['beta', 'eu'], email: 'ann@example.com', nothing: null, address: { city: 'Oslo' }, active: false });

  it('eq / neq compare exactly, numbers with numeric strings', () => {
    expect(is(trait('plan', 'eq', 'pro'), p)).toBe(true);
    expect(is(trait('plan', 'eq', 'Pro'), p)).toBe(false);
    expect(is(trait('seats', 'eq', 12), p)).toBe(true);
    expect(is(trait('seats', 'eq', '12'), p)).toBe(true);
    expect(is(trait('score', 'eq', 7.5), p)).toBe(true);
    expect(is(trait('active', 'eq', false), p)).toBe(true);
    expect(is(trait('active', 'eq', 'false'), p)).toBe(false);
    expect(is(trait('plan', 'neq', 'free'), p)).toBe(true);
    expect(is(trait('plan', 'neq', 'pro'), p)).toBe(false);
    // Without the trait: not equal to any value, equal to null.
    expect(is(trait('missing', 'neq', 'x'), p)).toBe(true);
    expect(is(trait('missing', 'eq', 'x'), p)).toBe(false);
    expect(is(trait('nothing', 'eq', null), p)).toBe(true);
  });

  it('exists / not_exists treat null as absent', () => {
    expect(is(trait('plan', 'exists'), p)).toBe(true);
    expect(is(trait('nothing', 'exists'), p)).toBe(false);
    expect(is(trait('missing', 'exists'), p)).toBe(false);
    expect(is(trait('missing', 'not_exists'), p)).toBe(true);
    expect(is(trait('nothing', 'not_exists'), p)).toBe(true);
    expect(is(trait('active', 'exists'), p)).toBe(true);
  });

  it('gt / gte / lt / lte: numbers (and numeric strings) numerically, strings as text', () => {
    expect(is(trait('seats', 'gt', 11), p)).toBe(true);
    expect(is(trait('seats', 'gt', 12), p)).toBe(false);
    expect(is(trait('seats', 'gte', 12), p)).toBe(true);
    expect(is(trait('seats', 'lt', 100), p)).toBe(true);
    expect(is(trait('seats', 'lte', 11), p)).toBe(false);
    expect(is(trait('score', 'gt', 7), p)).toBe(true);
    expect(is(trait('seats', 'gt', '9'), p)).toBe(true); // 12 > 9, not "12" < "9"
    expect(is(trait('plan', 'gt', 'free'), p)).toBe(true);
    expect(is(trait('plan', 'gt', 5), p)).toBe(false);
    expect(is(trait('missing', 'lt', 5), p)).toBe(false);
    expect(is(trait('seats', 'gt'), p)).toBe(false);
  });

  it('ISO dates order as text', () => {
    const q = profile('u', { signedUpAt: '2024-03-01T00:00:00.000Z' });
    expect(is(trait('signedUpAt', 'gte', '2024-01-01'), q)).toBe(true);
    expect(is(trait('signedUpAt', 'lt', '2024-01-01'), q)).toBe(false);
  });

  it('contains: substring of a string, element of an array', () => {
    expect(is(trait('email', 'contains', '@example.com'), p)).toBe(true);
    expect(is(trait('email', 'contains', '@other'), p)).toBe(false);
    expect(is(trait('tags', 'contains', 'beta'), p)).toBe(true);
    expect(is(trait('tags', 'contains', 'be'), p)).toBe(false);
    expect(is(trait('seats', 'contains', '1'), p)).toBe(false);
    expect(is(trait('missing', 'contains', 'x'), p)).toBe(false);
  });

  it('reads nested traits by dotted path; a flat key with a dot wins', () => {
    expect(is(trait('address.city', 'eq', 'Oslo'), p)).toBe(true);
    expect(traitValue({ 'a.b': 1, a: { b: 2 } }, 'a.b')).toBe(1);
    expect(traitValue({ a: { b: 2 } }, 'a.b')).toBe(2);
    expect(traitValue({ a: 'x' }, 'a.b')).toBeUndefined();
    expect(traitValue({ a: [1] }, 'a.0')).toBeUndefined();
  });
});

describe('event conditions', () => {
  const p = profile('u', {}, [
    { name: 'Order Completed', at: ago(40) },
    { name: 'Order Completed', at: ago(10) },
    { name: 'Order Completed', at: ago(1) },
    { name: 'Signed In', at: ago(0.5) },
  ]);
  const ev = (event: string, op: 'gte' | 'lte' | 'eq', count: number, withinDays?: number): AudienceRule => ({
    combine: 'and',
    conditions: [{ kind: 'event', event, op, count, ...(withinDays === undefined ? {} : { withinDays }) }],
  });

  it('counts all time without withinDays, only the window with it', () => {
    expect(countEvents(p, 'Order Completed', undefined, NOW)).toBe(3);
    expect(countEvents(p, 'Order Completed', 30, NOW)).toBe(2);
    expect(countEvents(p, 'Order Completed', 7, NOW)).toBe(1);
    expect(countEvents(p, 'Order Completed', 10, NOW)).toBe(2); // the boundary is inside
    expect(countEvents(p, 'order completed', undefined, NOW)).toBe(0); // names are case sensitive
  });

  it('compares the count with gte / lte / eq', () => {
    expect(is(ev('Order Completed', 'gte', 3), p)).toBe(true);
    expect(is(ev('Order Completed', 'gte', 3, 30), p)).toBe(false);
    expect(is(ev('Order Completed', 'eq', 2, 30), p)).toBe(true);
    expect(is(ev('Order Completed', 'lte', 1, 7), p)).toBe(true);
    expect(is(ev('Never', 'eq', 0), p)).toBe(true);
    expect(is(ev('Never', 'gte', 1), p)).toBe(false);
  });
});

describe('and / or groups, nested', () => {
  const rule: AudienceRule = {
    combine: 'or',
    conditions: [
      { kind: 'trait', trait: 'plan', op: 'eq', value: 'enterprise' },
      {
        combine: 'and',
        conditions: [
          { kind: 'trait', trait: 'plan', op: 'eq', value: 'pro' },
          { kind: 'event', event: 'Order Completed', op: 'gte', count: 2, withinDays: 30 },
        ],
      },
    ],
  };
  const orders = (n: number) => Array.from({ length: n }, (_, i) => ({ name: 'Order Completed', at: ago(i + 1) }));

  it.each([
    ['enterprise without orders', profile('a', { plan: 'enterprise' }), true],
    ['pro with two recent orders', profile('b', { plan: 'pro' }, orders(2)), true],
    ['pro with one order', profile('c', { plan: 'pro' }, orders(1)), false],
    ['free with many orders', profile('d', { plan: 'free' }, orders(5)), false],
    ['no traits', profile('e'), false],
  ])('%s', (_name, p, expected) => expect(is(rule, p)).toBe(expected));

  it('and needs every condition, or any', () => {
    const p = profile('u', { a: 1, b: 2 });
    const c = (combine: 'and' | 'or') => ({ combine, conditions: [trait('a', 'eq', 1).conditions[0], trait('b', 'eq', 3).conditions[0]] });
    expect(is(c('and'), p)).toBe(false);
    expect(is(c('or'), p)).toBe(true);
  });
});

describe('computed traits', () => {
  const p = profile('u', {}, [
    { name: 'Order Completed', at: ago(40), properties: { total: 10, currency: 'EUR' } },
    { name: 'Order Completed', at: ago(2), properties: { total: 99.5 } },
    { name: 'Viewed', at: ago(1), properties: { total: 1 } },
  ]);

  it('event_count: the count in the window, no value at zero', () => {
    expect(computeValue({ kind: 'event_count', event: 'Order Completed' }, p, NOW)).toBe(2);
    expect(computeValue({ kind: 'event_count', event: 'Order Completed', withinDays: 7 }, p, NOW)).toBe(1);
    expect(computeValue({ kind: 'event_count', event: 'Order Completed', withinDays: 1 }, p, NOW)).toBeUndefined();
  });

  it('last_property: the latest event of that name carrying the property', () => {
    expect(computeValue({ kind: 'last_property', event: 'Order Completed', property: 'total' }, p, NOW)).toBe(99.5);
    expect(computeValue({ kind: 'last_property', event: 'Order Completed', property: 'currency' }, p, NOW)).toBe('EUR');
    expect(computeValue({ kind: 'last_property', event: 'Order Completed', property: 'coupon' }, p, NOW)).toBeUndefined();
    const nulled = profile('v', {}, [...p.events, { name: 'Order Completed', at: ago(0), properties: { total: null } }]);
    expect(computeValue({ kind: 'last_property', event: 'Order Completed', property: 'total' }, nulled, NOW)).toBeUndefined();
  });

  it('evaluate maps members to true and computed traits to their values', () => {
    const profiles = [p, profile('w', { plan: 'pro' })];
    expect([...evaluate({ type: 'audience', rule: trait('plan', 'eq', 'pro') }, profiles, NOW)]).toEqual([['w', true]]);
    expect([...evaluate({ type: 'computed_trait', compute: { kind: 'event_count', event: 'Viewed' } }, profiles, NOW)]).toEqual([['u', 1]]);
  });
});
