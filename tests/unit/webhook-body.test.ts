import { describe, expect, it } from 'vitest';
import { buildWebhookBody } from '../../src/shared/webhook-body';
import type { NormalizedCall } from '../../src/shared/types';

const TS = '2015-12-29T07:40:25.000Z';
const base = {
  messageId: 'm-1',
  userId: 'u-1',
  timestamp: TS,
  receivedAt: '2015-12-29T07:40:26.000Z',
} satisfies Partial<NormalizedCall>;

const keys = (o: object) => Object.keys(o);

describe('buildWebhookBody, documented format (SPEC §4)', () => {
  it('track: version, type, userId, event, properties, timestamp, context in that order', () => {
    const body = buildWebhookBody(
      { ...base, type: 'track', event: 'Order Completed', properties: { total: 1 }, context: { ip: '1.2.3.4' } },
      'documented',
    );
    expect(body).toEqual({
      version: 1,
      type: 'track',
      userId: 'u-1',
      event: 'Order Completed',
      properties: { total: 1 },
      timestamp: TS,
      context: { ip: '1.2.3.4' },
    });
    expect(keys(body)).toEqual(['version', 'type', 'userId', 'event', 'properties', 'timestamp', 'context']);
    // Receivers see the serialized text; its key order is part of the contract.
    expect(JSON.stringify(body)).toBe(
      '{"version":1,"type":"track","userId":"u-1","event":"Order Completed","properties":{"total":1},"timestamp":"2015-12-29T07:40:25.000Z","context":{"ip":"1.2.3.4"}}',
    );
  });

  it('identify: traits, with {} for missing traits and context', () => {
    const body = buildWebhookBody({ ...base, type: 'identify' }, 'documented');
    expect(keys(body)).toEqual(['version', 'type', 'userId', 'traits', 'timestamp', 'context']);
    expect(body.traits).toEqual({});
    expect(body.context).toEqual({});
  });

  it('page: name and category only when given, properties kept whole', () => {
    const properties = { path: '/pricing', referrer: 'https://a/', title: 'Pricing', url: 'https://a/pricing', plan: 'x' };
    const named = buildWebhookBody({ ...base, type: 'page', name: 'Pricing', category: 'Docs', properties }, 'documented');
    expect(keys(named)).toEqual(['version', 'type', 'userId', 'name', 'category', 'properties', 'timestamp', 'context']);
    expect(named.properties).toEqual(properties);
    const bare = buildWebhookBody({ ...base, type: 'page' }, 'documented');
    expect(keys(bare)).toEqual(['version', 'type', 'userId', 'properties', 'timestamp', 'context']);
    expect(bare.properties).toEqual({});
  });

  it('screen: name, properties, and the device/os/app context as given', () => {
    const context = { device: { model: 'iPhone', type: 'ios' }, os: { name: 'iOS', version: '17' }, app: { build: '1', name: 'A', version: '1.0' } };
    const body = buildWebhookBody({ ...base, type: 'screen', name: 'Home', context }, 'documented');
    expect(keys(body)).toEqual(['version', 'type', 'userId', 'name', 'properties', 'timestamp', 'context']);
    expect(body.context).toEqual(context);
    expect(keys(buildWebhookBody({ ...base, type: 'screen' }, 'documented'))).not.toContain('name');
  });

  it('group: groupId and traits', () => {
    const body = buildWebhookBody({ ...base, type: 'group', groupId: 'g-1', traits: { plan: 'ent' } }, 'documented');
    expect(keys(body)).toEqual(['version', 'type', 'userId', 'groupId', 'traits', 'timestamp', 'context']);
    expect(body).toMatchObject({ groupId: 'g-1', traits: { plan: 'ent' } });
  });

  it('alias: previousId and userId, and also "Previous ID" and "User ID"', () => {
    const body = buildWebhookBody({ ...base, type: 'alias', previousId: 'anon-9' }, 'documented');
    expect(body).toEqual({
      version: 1,
      type: 'alias',
      userId: 'u-1',
      previousId: 'anon-9',
      'Previous ID': 'anon-9',
      'User ID': 'u-1',
      timestamp: TS,
      context: {},
    });
  });

  it('alias keys setting: documented sends only "Previous ID"/"User ID", camel only previousId (userId stays)', () => {
    const alias = { ...base, type: 'alias' as const, previousId: 'anon-9' };
    expect(Object.keys(buildWebhookBody(alias, 'documented', 'documented'))).toEqual(['version', 'type', 'userId', 'Previous ID', 'User ID', 'timestamp', 'context']);
    expect(buildWebhookBody(alias, 'documented', 'camel')).toEqual({ version: 1, type: 'alias', userId: 'u-1', previousId: 'anon-9', timestamp: TS, context: {} });
    expect(buildWebhookBody(alias, 'documented', 'both')).toEqual(buildWebhookBody(alias, 'documented'));
    // Other types do not change with it.
    const track = { ...base, type: 'track' as const, event: 'E' };
    expect(buildWebhookBody(track, 'full', 'camel')).toEqual(buildWebhookBody(track, 'full', 'documented'));
  });

  it('an anonymous call still carries userId, as null', () => {
    const body = buildWebhookBody({ ...base, userId: undefined, anonymousId: 'a-1', type: 'track', event: 'E' }, 'documented');
    expect(body.userId).toBeNull();
    expect(body).not.toHaveProperty('anonymousId');
  });

  it('delete: only type, userId, timestamp — no version, no context', () => {
    const body = buildWebhookBody({ ...base, type: 'delete', context: { x: 1 } }, 'documented');
    expect(JSON.stringify(body)).toBe('{"type":"delete","userId":"u-1","timestamp":"2015-12-29T07:40:25.000Z"}');
  });

  it('never includes the full-format fields', () => {
    const body = buildWebhookBody(
      { ...base, type: 'track', event: 'E', anonymousId: 'a', integrations: { All: true }, originalTimestamp: TS, sentAt: TS },
      'documented',
    );
    for (const k of ['anonymousId', 'messageId', 'integrations', 'originalTimestamp', 'sentAt', 'receivedAt']) {
      expect(body).not.toHaveProperty(k);
    }
  });
});

describe('buildWebhookBody, full format', () => {
  it('appends the call metadata after the documented fields, in a fixed order', () => {
    const body = buildWebhookBody(
      {
        ...base,
        type: 'track',
        event: 'E',
        anonymousId: 'a-1',
        integrations: { Webhooks: true },
        originalTimestamp: '2015-12-28T23:40:25.000Z',
        sentAt: '2015-12-28T23:40:26.000Z',
      },
      'full',
    );
    expect(keys(body)).toEqual([
      'version', 'type', 'userId', 'event', 'properties', 'timestamp', 'context',
      'anonymousId', 'messageId', 'integrations', 'originalTimestamp', 'sentAt', 'receivedAt',
    ]);
    expect(body).toMatchObject({ anonymousId: 'a-1', messageId: 'm-1', integrations: { Webhooks: true }, receivedAt: base.receivedAt });
  });

  it('leaves out metadata the call does not have', () => {
    const body = buildWebhookBody({ ...base, type: 'identify', anonymousId: null }, 'full');
    expect(keys(body)).toEqual(['version', 'type', 'userId', 'traits', 'timestamp', 'context', 'messageId', 'receivedAt']);
  });

  it('delete keeps its three fields first and adds messageId for de-duplication', () => {
    const body = buildWebhookBody({ ...base, type: 'delete' }, 'full');
    expect(keys(body)).toEqual(['type', 'userId', 'timestamp', 'messageId', 'receivedAt']);
  });
});
