import { describe, expect, it } from 'vitest';
import { describeTrigger, matchesTrigger, meetsCondition } from '../../src/shared/actions/trigger';
import type { NormalizedCall } from '../../src/shared/types';

const call = (type: NormalizedCall['type'], extra: Partial<NormalizedCall> = {}) => ({ type, ...extra });
const track = call('track', { event: 'Order Completed' });
const page = call('page', { name: 'Order Completed' });

describe('Actions trigger conditions', () => {
  it('a bare string and equals are exact and case-sensitive', () => {
    expect(meetsCondition('Order Completed', 'Order Completed')).toBe(true);
    expect(meetsCondition('Order Completed', { equals: 'Order Completed' })).toBe(true);
    expect(meetsCondition('Order Completed', 'order completed')).toBe(false);
    expect(meetsCondition('Order Completed', { equals: 'Order' })).toBe(false);
  });

  it('contains is a case-sensitive substring', () => {
    expect(meetsCondition('Order Completed', { contains: 'Order' })).toBe(true);
    expect(meetsCondition('Order Completed', { contains: 'order' })).toBe(false);
  });

  it('oneOf matches any listed value exactly', () => {
    expect(meetsCondition('page', { oneOf: ['track', 'page'] })).toBe(true);
    expect(meetsCondition('screen', { oneOf: ['track', 'page'] })).toBe(false);
  });

  it('a missing field meets no condition, not even equals "undefined"', () => {
    expect(meetsCondition(undefined, 'undefined')).toBe(false);
    expect(meetsCondition(undefined, { contains: '' })).toBe(false);
  });

  it('an empty trigger takes every call type, but never a deletion', () => {
    for (const t of ['identify', 'track', 'page', 'screen', 'group', 'alias'] as const) expect(matchesTrigger(call(t), {})).toBe(true);
    expect(matchesTrigger(call('delete'), {})).toBe(false);
  });

  it('type and event must both hold', () => {
    const trigger = { type: 'track', event: { contains: 'Order' } };
    expect(matchesTrigger(track, trigger)).toBe(true);
    expect(matchesTrigger(call('track', { event: 'Signed Up' }), trigger)).toBe(false);
    expect(matchesTrigger(call('identify'), trigger)).toBe(false);
  });

  it('event is the event field: a page named like the event does not match', () => {
    expect(matchesTrigger(page, { event: 'Order Completed' })).toBe(false);
    expect(matchesTrigger(track, { event: 'Order Completed' })).toBe(true);
  });

  it('describes a trigger in one line', () => {
    expect(describeTrigger({})).toBe('every call');
    expect(describeTrigger({ type: 'track', event: { contains: 'Order' } })).toBe('type = "track" and event contains "Order"');
    expect(describeTrigger({ type: { oneOf: ['page', 'screen'] } })).toBe('type is one of "page", "screen"');
  });
});
