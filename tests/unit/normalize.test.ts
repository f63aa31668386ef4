import { describe, expect, it } from 'vitest';
import { normalizeCall } from '../../src/shared/normalize';

const receivedAt = Date.UTC(2024, 5, 1, 12, 0, 0, 500);
const RECEIVED = '2024-06-01T12:00:00.500Z';
const opts = { receivedAt, newId: () => 'generated-id' };

function accepted(item: unknown, o: Parameters<typeof normalizeCall>[1] = opts) {
  const r = normalizeCall(item, o);
  if (!r.ok) throw new Error(`dropped: ${r.reason}`);
  return r.call;
}
function dropped(item: unknown, o: Parameters<typeof normalizeCall>[1] = opts) {
  const r = normalizeCall(item, o);
  if (r.ok) throw new Error('accepted');
  return r.reason;
}

describe('normalizeCall: the record', () => {
  it('a minimal track call gets messageId, timestamp = receivedAt and receivedAt', () => {
    expect(accepted({ type: 'track', userId: 'u', event: 'E' })).toEqual({
      type: 'track',
      messageId: 'generated-id',
      userId: 'u',
      event: 'E',
      timestamp: RECEIVED,
      receivedAt: RECEIVED,
    });
  });

  it('keeps the client messageId and generates UUID v4 by default', () => {
    expect(accepted({ type: 'track', userId: 'u', event: 'E', messageId: 'client-1' }).messageId).toBe('client-1');
    expect(accepted({ type: 'track', userId: 'u', event: 'E', messageId: '' }).messageId).toBe('generated-id');
    const id = accepted({ type: 'identify', userId: 'u' }, { receivedAt }).messageId;
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(accepted({ type: 'identify', userId: 'u' }, { receivedAt }).messageId).not.toBe(id);
  });

  it('stringifies numeric ids and leaves blank ones out', () => {
    const call = accepted({ type: 'group', userId: 42, anonymousId: '', groupId: 7, messageId: 99 });
    expect(call).toMatchObject({ userId: '42', groupId: '7', messageId: '99' });
    expect(call).not.toHaveProperty('anonymousId');
    expect(accepted({ type: 'alias', userId: 0, previousId: 12.5 })).toMatchObject({ userId: '0', previousId: '12.5' });
  });

  it('copies the type fields and leaves out what the model does not hold', () => {
    const call = accepted({
      type: 'page', anonymousId: 'a', name: 'Home', category: 'Docs', properties: { path: '/' },
      traits: { t: 1 }, channel: 'server', options: { x: 1 },
    });
    expect(call).toMatchObject({ name: 'Home', category: 'Docs', properties: { path: '/' }, traits: { t: 1 } });
    expect(call).not.toHaveProperty('channel');
    expect(call).not.toHaveProperty('options');
  });

  it('does not change the item it was given', () => {
    const item = { type: 'track', userId: 'u', event: 'E', context: { a: { b: 1 } } };
    const copy = structuredClone(item);
    accepted(item, { ...opts, envelope: { context: { a: { c: 2 } } } });
    expect(item).toEqual(copy);
  });
});

describe('normalizeCall: drops (SPEC §3)', () => {
  it.each([
    ['not an object', 'hello', 'not a JSON object'],
    ['unknown type', { type: 'purchase', userId: 'u' }, 'unknown type "purchase"'],
    ['no identity', { type: 'identify' }, 'missing userId or anonymousId'],
    ['track without event', { type: 'track', userId: 'u' }, 'track without event'],
    ['group without groupId', { type: 'group', userId: 'u' }, 'group without groupId'],
    ['alias without previousId', { type: 'alias', userId: 'u' }, 'alias without previousId'],
    ['properties not an object', { type: 'track', userId: 'u', event: 'E', properties: [] }, 'properties must be an object'],
  ])('%s', (_, item, reason) => {
    expect(dropped(item)).toBe(reason);
  });

  it.each([
    ['not a date', 'invalid timestamp: is not an ISO 8601 date-time like 2015-12-28T23:40:25.000Z'],
    ['2015-13-01T00:00:00Z', 'invalid timestamp: month out of range'],
    ['2015-12-28T23:40:25', 'invalid timestamp: has no time zone offset (add Z or +hh:mm)'],
    ['', 'invalid timestamp: is not an ISO 8601 date-time like 2015-12-28T23:40:25.000Z'],
  ])('unparseable timestamp %j', (timestamp, reason) => {
    expect(dropped({ type: 'track', userId: 'u', event: 'E', timestamp })).toBe(reason);
  });

  it('a numeric timestamp is dropped with a reason that says why', () => {
    expect(dropped({ type: 'track', userId: 'u', event: 'E', timestamp: 1451374825 })).toMatch(/^invalid timestamp: .*not a number/);
  });

  it('an unparseable sentAt, on the item or on the envelope, names sentAt', () => {
    expect(dropped({ type: 'identify', userId: 'u', sentAt: 'yesterday' })).toMatch(/^invalid sentAt: /);
    expect(dropped({ type: 'identify', userId: 'u' }, { ...opts, envelope: { sentAt: '2015-02-30T00:00:00Z' } })).toBe(
      'invalid sentAt: day out of range',
    );
  });

  it('null timestamp and sentAt count as absent', () => {
    const call = accepted({ type: 'identify', userId: 'u', timestamp: null, sentAt: null });
    expect(call.timestamp).toBe(RECEIVED);
    expect(call).not.toHaveProperty('sentAt');
    expect(call).not.toHaveProperty('originalTimestamp');
  });
});

describe('normalizeCall: timestamps and clock skew', () => {
  it('timestamp and sentAt: corrected against receivedAt, original kept', () => {
    // Client clock 8 h off (sent with a -0800 offset but really UTC), event stamped 2.5 s before sending.
    const call = accepted({
      type: 'track', userId: 'u', event: 'E',
      timestamp: '2015-12-28T23:40:22.500-0800',
      sentAt: '2015-12-28T23:40:25-0800',
    });
    expect(call.timestamp).toBe('2024-06-01T11:59:58.000Z');
    expect(call.originalTimestamp).toBe('2015-12-29T07:40:22.500Z');
    expect(call.sentAt).toBe('2015-12-29T07:40:25.000Z');
    expect(call.receivedAt).toBe(RECEIVED);
  });

  it('timestamp without sentAt: kept as given (historical import), normalized to UTC ms Z', () => {
    const call = accepted({ type: 'identify', userId: 'u', timestamp: '2015-12-28T23:40:25.123456+05:30' });
    expect(call.timestamp).toBe('2015-12-28T18:10:25.123Z');
    expect(call.originalTimestamp).toBe('2015-12-28T18:10:25.123Z');
    expect(call).not.toHaveProperty('sentAt');
  });

  it('the envelope sentAt applies to items without their own, and an item sentAt wins', () => {
    const envelope = { sentAt: new Date(receivedAt - 60_000).toISOString() };
    const a = accepted({ type: 'track', userId: 'u', event: 'E', timestamp: new Date(receivedAt - 61_000).toISOString() }, { ...opts, envelope });
    expect(a.timestamp).toBe('2024-06-01T11:59:59.500Z');
    expect(a.sentAt).toBe(envelope.sentAt);
    const b = accepted(
      { type: 'track', userId: 'u', event: 'E', timestamp: '2020-01-01T00:00:00Z', sentAt: '2020-01-01T00:00:10Z' },
      { ...opts, envelope },
    );
    expect(b.timestamp).toBe('2024-06-01T11:59:50.500Z');
    expect(b.sentAt).toBe('2020-01-01T00:00:10.000Z');
  });

  it('sentAt alone does not change timestamp', () => {
    const call = accepted({ type: 'identify', userId: 'u', sentAt: '2015-12-28T23:40:25Z' });
    expect(call.timestamp).toBe(RECEIVED);
    expect(call.sentAt).toBe('2015-12-28T23:40:25.000Z');
  });
});

describe('normalizeCall: envelope merge', () => {
  it('envelope context and integrations go under the item, deep, the item winning', () => {
    const call = accepted(
      {
        type: 'track', userId: 'u', event: 'E',
        context: { library: { version: '2' }, page: { path: '/x' } },
        integrations: { Webhooks: { opt: 'item' } },
      },
      {
        ...opts,
        envelope: {
          context: { library: { name: 'analytics-go', version: '1' }, ip: '10.0.0.1' },
          integrations: { All: false, Webhooks: { opt: 'env', other: true } },
        },
      },
    );
    expect(call.context).toEqual({ library: { name: 'analytics-go', version: '2' }, ip: '10.0.0.1', page: { path: '/x' } });
    expect(call.integrations).toEqual({ All: false, Webhooks: { opt: 'item', other: true } });
  });

  it('the item replaces non-object values, and its own null wins', () => {
    const call = accepted(
      { type: 'identify', userId: 'u', context: { ip: null, traits: { a: 1 } } },
      { ...opts, envelope: { context: { ip: '1.1.1.1', traits: 'x' } } },
    );
    expect(call.context).toEqual({ ip: null, traits: { a: 1 } });
  });

  it('envelope values apply to items without their own', () => {
    const call = accepted({ type: 'identify', userId: 'u' }, { ...opts, envelope: { context: { ip: '1.1.1.1' }, integrations: { Webhooks: false } } });
    expect(call.context).toEqual({ ip: '1.1.1.1' });
    expect(call.integrations).toEqual({ Webhooks: false });
  });

  it('a non-object envelope value is ignored', () => {
    const call = accepted({ type: 'identify', userId: 'u', context: { a: 1 } }, { ...opts, envelope: { context: 'x', integrations: [1] } });
    expect(call.context).toEqual({ a: 1 });
    expect(call).not.toHaveProperty('integrations');
  });

  it('keys keep their order (envelope keys first) and a JSON "__proto__" key stays data', () => {
    const item = JSON.parse('{"type":"identify","userId":"u","context":{"z":1,"__proto__":{"b":2},"library":{"version":"2"}}}');
    const envelope = { context: JSON.parse('{"library":{"name":"go","version":"1"},"__proto__":{"a":1}}') };
    const call = accepted(item, { ...opts, envelope });
    expect(Object.keys(call.context!)).toEqual(['library', '__proto__', 'z']);
    expect(Object.getPrototypeOf(call.context)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(call.context, '__proto__')?.value).toEqual({ a: 1, b: 2 });
    expect(call.context!.library).toEqual({ name: 'go', version: '2' });
    expect(({} as Record<string, unknown>).a).toBeUndefined();
  });

  it('the envelope cannot rescue an invalid item', () => {
    expect(dropped({ type: 'identify', userId: 'u', context: 'bad' }, { ...opts, envelope: { context: { a: 1 } } })).toBe(
      'context must be an object',
    );
  });
});

describe('lenient (composer previews)', () => {
  it('builds the record of a call the collector would drop, leaving out a bad timestamp', () => {
    const item = { type: 'track', userId: 'u', timestamp: 'soon' };
    expect(normalizeCall(item, { receivedAt: 0 })).toMatchObject({ ok: false, reason: 'track without event' });
    const r = normalizeCall(item, { receivedAt: 0, lenient: true });
    expect(r).toMatchObject({ ok: true, call: { type: 'track', userId: 'u', timestamp: '1970-01-01T00:00:00.000Z' } });
  });
});
