import { describe, expect, it } from 'vitest';
import { audienceInputOf, definitionOf, describeRule, emptyAudienceDraft, formatValue, newEvent, newGroup, parseValue, type AudienceDraft } from '../../src/renderer/features/audiences/audience-model';
import { createAppStore } from '../../src/renderer/stores/app.store';
import { previewKey, syncText } from '../../src/renderer/stores/audiences.slice';
import { audienceInputSchema, type Audience, type AudienceRule } from '../../src/shared/simulation.contract';
import { FakeApi, invalid } from './renderer-sim-fake-api';
import { until } from '../helpers/until';

function draft(): AudienceDraft {
  const d = emptyAudienceDraft(['s1']);
  d.name = 'Pro Buyers';
  d.rule = {
    kind: 'group',
    combine: 'and',
    conditions: [
      { kind: 'trait', trait: 'plan', op: 'eq', value: 'pro' },
      { kind: 'group', combine: 'or', conditions: [{ ...newEvent(), event: 'Order Completed', count: '3', withinDays: '30' }, { kind: 'trait', trait: 'vip', op: 'exists', value: 'ignored' }] },
    ],
  };
  return d;
}

describe('audience form model', () => {
  it('builds nested and/or rules the shared schema accepts', () => {
    const { input, errors } = audienceInputOf({ ...draft(), syncMinutes: '5' });
    expect(errors).toEqual({});
    expect(input).toEqual({
      name: 'Pro Buyers',
      type: 'audience',
      sourceIds: ['s1'],
      syncIntervalMs: 300_000,
      rule: {
        combine: 'and',
        conditions: [
          { kind: 'trait', trait: 'plan', op: 'eq', value: 'pro' },
          { combine: 'or', conditions: [{ kind: 'event', event: 'Order Completed', op: 'gte', count: 3, withinDays: 30 }, { kind: 'trait', trait: 'vip', op: 'exists' }] },
        ],
      },
    });
    expect(audienceInputSchema.safeParse(input).success).toBe(true);
    expect(describeRule(input.rule as AudienceRule)).toBe('plan equals "pro" and (Order Completed at least 3× in 30 d or vip exists)');
  });

  it('names bad numbers on the engine paths of their conditions', () => {
    const d = draft();
    const inner = d.rule.conditions[1];
    if (inner.kind !== 'group') throw new Error('fixture');
    inner.conditions[0] = { ...newEvent(), event: 'x', count: '-1', withinDays: 'soon' };
    expect(audienceInputOf({ ...d, syncMinutes: '0' }).errors).toEqual({
      'rule.conditions[1].conditions[0].count': 'a whole number, 0 or more',
      'rule.conditions[1].conditions[0].withinDays': 'a number of days above 0, or empty for all time',
      syncIntervalMs: 'minutes above 0, or empty to sync only on demand',
    });
  });

  it('computed traits: event count with a window, last property', () => {
    const d = { ...emptyAudienceDraft(['s1']), name: 'Orders', type: 'computed_trait' as const };
    expect(definitionOf({ ...d, compute: { kind: 'event_count', event: 'Order Completed', withinDays: '7', property: '' } }).def).toEqual({
      type: 'computed_trait',
      compute: { kind: 'event_count', event: 'Order Completed', withinDays: 7 },
    });
    const last = audienceInputOf({ ...d, compute: { kind: 'last_property', event: 'Order Completed', withinDays: '', property: 'revenue' } }).input;
    expect(last.compute).toEqual({ kind: 'last_property', event: 'Order Completed', property: 'revenue' });
    expect(audienceInputSchema.safeParse(last).success).toBe(true);
  });

  it('reads trait values as JSON scalars unless quoted', () => {
    expect([parseValue('true'), parseValue('42'), parseValue('null'), parseValue('"42"'), parseValue('pro plan')]).toEqual([true, 42, null, '42', 'pro plan']);
    expect([formatValue(true), formatValue('42'), formatValue('pro')]).toEqual(['true', '"42"', 'pro']);
    expect(newGroup().conditions).toHaveLength(1);
  });
});

describe('audiences slice', () => {
  const audience: Audience = {
    id: 'a1',
    name: 'Pro Buyers',
    key: 'pro_buyers',
    type: 'audience',
    rule: { combine: 'and', conditions: [{ kind: 'trait', trait: 'plan', op: 'eq', value: 'pro' }] },
    sourceIds: ['s1'],
    syncIntervalMs: null,
    createdAt: '2025-01-01T00:00:00.000Z',
    lastSyncAt: '2025-01-01T00:00:00.000Z',
    memberCount: 2,
  };

  it('creation keeps the first sync result; a refusal stays on the form', async () => {
    const api = new FakeApi().on('createAudience', (i) => {
      if (i.sourceIds.length === 0) throw invalid([{ path: 'sourceIds', message: 'choose at least one source' }]);
      return { ...audience, sync: { audienceId: 'a1', sent: 2, entered: 2, exited: 0, changed: 2, callIds: [10, 11] } };
    });
    const store = createAppStore(api);
    const { input } = audienceInputOf({ ...draft(), sourceIds: [] });
    expect(await store.getState().createAudience(input)).toBeNull();
    expect(store.getState().audienceFormError?.fieldMessage('sourceIds')).toBe('choose at least one source');
    const created = await store.getState().createAudience({ ...input, sourceIds: ['s1'] });
    expect(created).toEqual(audience);
    expect(store.getState().audiences).toEqual([audience]);
    expect(syncText(store.getState().syncResults.a1)).toBe('2 entered, 0 exited, 2 identify calls sent');
  });

  it('previews are tagged with their definition so a changed rule shows as stale', async () => {
    const api = new FakeApi().on('previewAudience', () => ({ members: [{ userId: 'u1', value: true }], total: 1 }));
    const store = createAppStore(api);
    const def = definitionOf(draft()).def;
    await store.getState().previewAudience(def);
    const p = store.getState().audiencePreview!;
    expect(p.total).toBe(1);
    expect(p.key).toBe(previewKey(def));
    const changed = draft();
    changed.rule.combine = 'or';
    expect(previewKey(definitionOf(changed).def)).not.toBe(p.key);
  });

  it('sync now records entered/exited/sent and reloads the list', async () => {
    const api = new FakeApi()
      .on('syncAudience', () => ({ audienceId: 'a1', sent: 1, entered: 0, exited: 1, changed: 1, callIds: [12] }))
      .on('listAudiences', () => [{ ...audience, memberCount: 1 }]);
    const store = createAppStore(api);
    const pending = store.getState().syncAudience('a1');
    expect(store.getState().syncingIds).toEqual(['a1']);
    await pending;
    await until(() => {
      expect(store.getState().syncingIds).toEqual([]);
      expect(store.getState().audiences[0].memberCount).toBe(1);
    });
    expect(syncText(store.getState().syncResults.a1)).toBe('0 entered, 1 exited, 1 identify call sent');
  });
});
