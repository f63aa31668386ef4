import { describe, expect, it } from 'vitest';
import { matchesTrigger, triggerProblem, triggerWarning } from '../../src/main/engine/actions/trigger';
import { triggerFql } from '../../src/shared/actions/trigger';
import type { NormalizedCall } from '../../src/shared/types';

// Triggers are decided by Segment's own subscription code (@segment/destination-subscriptions); the
// object form is written out as FQL and decided by the same code.

const call = (type: NormalizedCall['type'], extra: Partial<NormalizedCall> = {}): NormalizedCall => ({ type, messageId: 'm', timestamp: 't', receivedAt: 'r', ...extra });
const track = call('track', { event: 'Order Completed', userId: 'u-42', properties: { plan: 'pro', total: 42, coupon: null }, context: { library: { name: 'analytics.js' } } });
const page = call('page', { name: 'Order Completed' });
const identify = call('identify', { userId: 'u-1', traits: { email: 'a@b.example', plan: 'free' } });

describe('Actions triggers in FQL', () => {
  it('type and event, equals exact and case-sensitive', () => {
    expect(matchesTrigger(track, 'type = "track" and event = "Order Completed"')).toBe(true);
    expect(matchesTrigger(track, 'event = "order completed"')).toBe(false);
    expect(matchesTrigger(page, 'event = "Order Completed"')).toBe(false); // event is the event field, as there
    expect(matchesTrigger(page, 'name = "Order Completed"')).toBe(true);
  });

  it('properties, traits and context, with !=, numbers, contains(), match() and exists', () => {
    expect(matchesTrigger(track, 'type = "track" and properties.plan = "pro"')).toBe(true);
    expect(matchesTrigger(track, 'properties.plan != "free"')).toBe(true);
    expect(matchesTrigger(track, 'properties.total > 40')).toBe(true);
    expect(matchesTrigger(track, 'properties.total = 41')).toBe(false);
    expect(matchesTrigger(track, 'contains(event, "Order")')).toBe(true);
    expect(matchesTrigger(track, 'match(userId, "u-*")')).toBe(true);
    expect(matchesTrigger(track, 'properties.plan exists')).toBe(true);
    expect(matchesTrigger(track, 'properties.nope exists')).toBe(false);
    expect(matchesTrigger(track, 'context.library.name = "analytics.js"')).toBe(true);
    expect(matchesTrigger(identify, 'type = "identify" and traits.plan = "free"')).toBe(true);
    expect(matchesTrigger(identify, 'traits.email = "x@y.example"')).toBe(false);
    expect(matchesTrigger(track, '(type = "page" or type = "track") and properties.plan = "pro"')).toBe(true);
  });

  it('a missing field never equals "undefined" (Segment stringifies the expected value only)', () => {
    expect(matchesTrigger(page, 'event = "undefined"')).toBe(false);
  });

  it('an empty trigger takes every call type, never a deletion; a trigger that does not parse takes none', () => {
    for (const t of ['identify', 'track', 'page', 'screen', 'group', 'alias'] as const) expect(matchesTrigger(call(t), {})).toBe(true);
    expect(matchesTrigger(call('track'), '')).toBe(true);
    expect(matchesTrigger(call('delete'), {})).toBe(false);
    expect(matchesTrigger(call('delete'), 'type = "delete"')).toBe(false);
    expect(matchesTrigger(track, 'foo = "x"')).toBe(false);
  });

  it('refuses only what Segment\'s parser refuses; what it reads otherwise than it looks is taken, with a warning (issue 37)', () => {
    expect(triggerProblem('type = "track"')).toBeNull();
    expect(triggerProblem({ type: 'track' })).toBeNull();
    expect(triggerProblem('foo = "x"')).not.toBeNull();
    expect(triggerProblem('(type = "track"')).not.toBeNull();
    // Each is taken by Segment's parser, read as the condition after "as:", and warned about.
    const cases: [string, RegExp, string][] = [
      ['type = ', /a value is missing after "="/, 'type = "eos"'],
      ['type = "track" and event =', /a value is missing after "="/, 'type = "track" and event = "eos"'],
      ['type == "track"', /"==" is not an operator/, 'type = "="'],
      ['!(type = "track")', /"!" before a group or a field is dropped/, 'type = "track"'],
      ['type = "track" and !properties.plan = "pro"', /"!" before a group or a field is dropped/, 'type = "track" and properties.plan = "pro"'],
      ['not (type = "track")', /"not" is dropped/, 'type = "track"'],
      ["event = 'Order'", /single quotes are kept/, `event = "'Order'"`],
      ['properties.total => 10', /"=>" is not an operator/, 'properties.total = ">"'],
      ['type = "track" or ()', /cannot evaluate it/, ''],
      // Found by a review: taken without a word before.
      ['contains(event,', /the text ends where a value was expected/, 'contains(event, "eos")'],
      ['match(userId, "u-*"', /the parentheses do not balance/, 'match(userId, "u-*")'],
      ['type = "track")', /the parentheses do not balance/, 'type = "track"'],
    ];
    for (const [fql, concern, reads] of cases) {
      expect(triggerProblem(fql), fql).toBeNull();
      const warning = triggerWarning(fql);
      expect(warning, fql).toMatch(concern);
      if (reads) expect(warning, fql).toContain(`reads it as: ${reads} (the lab's own check`);
    }
    // As Segment: the dropped `not` matches the call it looks like it excludes; a call that reaches the
    // hole fails there (Segment's validate throws: nothing sent), one decided before it does not.
    expect(matchesTrigger(track, 'not (type = "track")')).toBe(true);
    expect(matchesTrigger(track, 'type = "track" or ()')).toBe(true);
    expect(matchesTrigger({ ...track, type: 'page' }, 'type = "track" or ()')).toBe(false);
    expect(matchesTrigger({ ...track, event: "'Order'" }, "event = 'Order'")).toBe(true);
    expect(triggerWarning('!contains(event, "Order") and !match(userId, "u*") and properties.plan != "x!(y not \'q\'"')).toBeNull();
    expect(matchesTrigger(track, '!contains(event, "Order")')).toBe(false);
  });

  it('>= and <= are operators (issue 37, item 1: the lab read ">=" as ">" then "=" and refused it)', () => {
    const total = (n: number) => ({ ...track, properties: { total: n } });
    for (const fql of ['properties.total >= 10', 'type = "track" and properties.total >= 10']) {
      expect(triggerProblem(fql), fql).toBeNull();
      expect(triggerWarning(fql), fql).toBeNull();
    }
    expect([5, 10, 42].map((n) => matchesTrigger(total(n), 'properties.total >= 10'))).toEqual([false, true, true]);
    expect([5, 10, 42].map((n) => matchesTrigger(total(n), 'properties.total <= 10'))).toEqual([true, true, false]);
    // Two operators in a row: Segment compares with NaN; taken, warned.
    expect(triggerWarning('properties.total >= = 10')).toMatch(/is not an operator.*reads it as: properties.total >= NaN/);
    expect(triggerWarning('properties.total >== 10')).toMatch(/is not an operator/);
  });
});

describe('the object form, written as FQL and decided by the same code', () => {
  it('writes conditions as Segment would', () => {
    expect(triggerFql({})).toBeNull();
    expect(triggerFql({ type: 'track', event: { contains: 'Order' } })).toBe('type = "track" and contains(event, "Order")');
    expect(triggerFql({ type: { oneOf: ['page', 'screen'] } })).toBe('(type = "page" or type = "screen")');
    expect(triggerFql({ event: { equals: 'Signed Up' } })).toBe('event = "Signed Up"');
    expect(triggerFql({ type: { contains: 'i' } })).toBe('(type = "identify" or type = "alias")');
    expect(triggerFql('  type = "track"  ')).toBe('type = "track"');
  });

  it('matches as before: contains is a case-sensitive substring, oneOf any listed value, both must hold', () => {
    const trigger = { type: 'track', event: { contains: 'Order' } };
    expect(matchesTrigger(track, trigger)).toBe(true);
    expect(matchesTrigger(call('track', { event: 'Signed Up' }), trigger)).toBe(false);
    expect(matchesTrigger(call('track', { event: 'order' }), { event: { contains: 'Order' } })).toBe(false);
    expect(matchesTrigger(identify, trigger)).toBe(false);
    expect(matchesTrigger(page, { type: { oneOf: ['track', 'page'] } })).toBe(true);
    expect(matchesTrigger(call('screen'), { type: { oneOf: ['track', 'page'] } })).toBe(false);
    expect(matchesTrigger(page, { event: 'Order Completed' })).toBe(false);
  });
});
