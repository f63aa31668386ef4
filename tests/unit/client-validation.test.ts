import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  Analytics,
  AnalyticsError,
  AnalyticsValidationError,
  ClientClosedError,
  LIBRARY_VERSION,
  ManualClock,
  MAX_MESSAGE_BYTES,
  MemoryPersistence,
  MessageTooLargeError,
  QueueFullError,
  type Transport,
} from '../../src/main/engine/client';

// These tests never reach the network: a transport that must not be called proves nothing was sent.
const unusedTransport: Transport = {
  send: () => Promise.reject(new Error('transport must not be called in validation tests')),
};

function client(extra: ConstructorParameters<typeof Analytics>[1] = {}) {
  const persistence = new MemoryPersistence();
  const analytics = new Analytics('wk_test', { transport: unusedTransport, clock: new ManualClock(), persistence, flushAt: 10_000, maxQueueSize: 20_000, ...extra });
  return { analytics, persistence };
}

function refusal(fn: () => unknown): AnalyticsValidationError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AnalyticsValidationError);
    return err as AnalyticsValidationError;
  }
  throw new Error('expected a validation error');
}

const deepCycle = (): Record<string, unknown> => {
  const o: Record<string, unknown> = { userId: 'u1', event: 'E' };
  o.properties = { self: o };
  return o;
};

// [call type, message, field named, words of the message]
const RULES: [string, Record<string, unknown>, string, RegExp][] = [
  ['identify', { traits: { a: 1 } }, 'userId', /userId or anonymousId is required/],
  ['track', { event: 'Signed Up' }, 'userId', /userId or anonymousId is required/],
  ['page', { name: 'Home', userId: '   ' }, 'userId', /userId or anonymousId is required/],
  ['screen', { name: 'Main' }, 'userId', /userId or anonymousId is required/],
  ['group', { groupId: 'g1' }, 'userId', /userId or anonymousId is required/],
  ['track', { userId: 'u1' }, 'event', /required for track/],
  ['track', { userId: 'u1', event: '' }, 'event', /required for track/],
  ['group', { userId: 'u1' }, 'groupId', /required for group/],
  ['alias', { previousId: 'anon-1' }, 'userId', /required for alias/],
  ['alias', { userId: 'u1' }, 'previousId', /required for alias/],
  ['identify', { userId: { id: 1 } }, 'userId', /must be a string or a number/],
  ['identify', { userId: 'u1', anonymousId: ['a'] }, 'anonymousId', /must be a string or a number/],
  ['group', { userId: 'u1', groupId: true }, 'groupId', /must be a string or a number/],
  ['track', { userId: 'u1', event: 'E', messageId: {} }, 'messageId', /must be a string or a number/],
  ['track', { userId: 'u1', event: 42 }, 'event', /required for track|must be a string/],
  ['page', { userId: 'u1', name: 7 }, 'name', /must be a string/],
  ['page', { userId: 'u1', category: false }, 'category', /must be a string/],
  ['track', { userId: 'u1', event: 'E', context: 'web' }, 'context', /must be an object/],
  ['track', { userId: 'u1', event: 'E', properties: [1, 2] }, 'properties', /must be an object/],
  ['identify', { userId: 'u1', traits: 'vip' }, 'traits', /must be an object/],
  ['track', { userId: 'u1', event: 'E', integrations: true }, 'integrations', /must be an object/],
  ['track', { userId: 'u1', event: 'E', integrations: { Webhooks: 'yes' } }, 'integrations.Webhooks', /true, false or an options object/],
  ['track', { userId: 'u1', event: 'E', timestamp: 1451374825 }, 'timestamp', /not a number/],
  ['track', { userId: 'u1', event: 'E', timestamp: '2015-12-28T23:40:25' }, 'timestamp', /no time zone offset/],
  ['track', { userId: 'u1', event: 'E', timestamp: 'yesterday' }, 'timestamp', /not an ISO 8601 date-time/],
  ['track', { userId: 'u1', event: 'E', timestamp: '2015-13-28T23:40:25Z' }, 'timestamp', /month out of range/],
  ['track', { userId: 'u1', event: 'E', timestamp: new Date(Number.NaN) }, 'timestamp', /invalid Date/],
  ['track', { userId: 'u1', event: 'E', timestamp: new Date(Date.UTC(10000, 0, 1)) }, 'timestamp', /out of range/],
  ['track', { userId: 'u1', event: 'E', big: 1n }, '', /not serializable to JSON/],
  ['track', deepCycle(), '', /not serializable to JSON/],
  // JSON has no Infinity or NaN: JSON.stringify writes null, which the receiver took for the value (a review).
  ['track', { userId: 'u1', event: 'E', properties: { total: Infinity } }, 'properties.total', /Infinity or NaN, which JSON cannot hold/],
  ['track', { userId: 'u1', event: 'E', properties: { items: [1, { n: Number.NaN }] } }, 'properties.items[1].n', /Infinity or NaN, which JSON cannot hold/],
];

describe('validation (SPEC §5): an invalid message throws naming the field, and nothing is queued', () => {
  const cases = RULES.map(([type, message, field, words], i) => ({ i, type, message, field, words }));
  it.each(cases)('rule $i: $type refused, field "$field"', ({ type, message, field, words }) => {
    const { analytics, persistence } = client();
    const err = refusal(() => analytics.enqueue(type, message));
    expect(err.field).toBe(field);
    expect(err.code).toBe('invalid_message');
    expect(err.message).toMatch(words);
    expect(err.message).toContain(`invalid ${type} message`);
    expect(analytics.stats().queued).toBe(0);
    expect(persistence.size).toBe(0);
  });

  it('names a field once: a rule whose message starts with it is not prefixed again (a review)', () => {
    const err = refusal(() => client().analytics.enqueue('track', { event: 'E' }));
    expect(err.message).toBe('invalid track message: userId or anonymousId is required');
  });

  it('each typed method validates its own type', () => {
    const { analytics } = client();
    expect(refusal(() => analytics.track({ userId: 'u1' } as never)).field).toBe('event');
    expect(refusal(() => analytics.group({ anonymousId: 'a1' } as never)).field).toBe('groupId');
    expect(refusal(() => analytics.alias({ userId: 'u1' } as never)).field).toBe('previousId');
    expect(refusal(() => analytics.identify({})).field).toBe('userId');
    expect(refusal(() => analytics.page({ name: 'Home' })).field).toBe('userId');
    expect(refusal(() => analytics.screen({ name: 'Main' })).field).toBe('userId');
  });

  it('names the call type and the message itself when they are wrong', () => {
    const { analytics } = client();
    expect(refusal(() => analytics.enqueue('purchase', { userId: 'u1' })).field).toBe('type');
    expect(refusal(() => analytics.enqueue('track', 'Signed Up')).field).toBe('');
    expect(refusal(() => analytics.track(null as never)).message).toMatch(/must be an object/);
  });

  it('refuses a message the collector would drop as nested too deep, at the call, at any depth', () => {
    const { analytics } = client();
    const nest = (levels: number) => {
      let v: unknown = 1;
      for (let i = 0; i < levels; i++) v = [v];
      return v;
    };
    // The message is level 1 and properties level 2: 62 arrays inside reach level 64, the limit.
    expect(() => analytics.track({ userId: 'u', event: 'ok', properties: { x: nest(62) } })).not.toThrow();
    for (const levels of [63, 3000, 100_000]) {
      const err = refusal(() => analytics.track({ userId: 'u', event: 'deep', properties: { x: nest(levels) } }));
      expect(err.message).toMatch(/nested too deep \(more than 64 levels\)/);
    }
  });

  it('lists every violation, the first one as .field', () => {
    const { analytics } = client();
    const err = refusal(() => analytics.enqueue('group', { traits: [] }));
    expect(err.violations.map((v) => v.field)).toEqual(['userId', 'groupId', 'traits']);
    expect(err.field).toBe('userId');
  });

  it('accepts every valid call type and returns its messageId', () => {
    const { analytics, persistence } = client();
    const ids = [
      analytics.identify({ userId: 'u1', traits: { plan: 'pro' } }),
      analytics.track({ anonymousId: 'a1', event: 'Clicked', properties: { n: 1 }, integrations: { All: false, Webhooks: true } }),
      analytics.page({ userId: 42, name: 'Home', category: 'Docs', properties: { url: 'https://x.test/', path: '/', title: 'X', referrer: '' } }),
      analytics.screen({ userId: 'u1', name: 'Main', context: { device: { model: 'Pixel' } } }),
      analytics.group({ userId: 'u1', groupId: 'g1', traits: { size: 3 } }),
      analytics.alias({ userId: 'u1', previousId: 'a1' }),
    ];
    expect(new Set(ids).size).toBe(6);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(analytics.stats().queued).toBe(6);
    expect(persistence.size).toBe(6);
  });
});

describe('stamping', () => {
  it('sets type, messageId and the enqueue time; keeps a caller messageId; normalizes historical timestamps to UTC', () => {
    const clock = new ManualClock(Date.UTC(2024, 4, 6, 7, 8, 9, 10));
    const { analytics, persistence } = client({ clock });
    analytics.track({ userId: 'u1', event: 'Now', type: 'identify' } as never);
    analytics.track({ userId: 'u1', event: 'Mine', messageId: 'my-id-1' });
    analytics.track({ userId: 'u1', event: 'Go v2 offset', timestamp: '2015-12-28T23:40:25-0800' });
    analytics.track({ userId: 'u1', event: 'Date', timestamp: new Date(Date.UTC(2020, 1, 29, 12)) });
    const [now, mine, offset, date] = persistence.load().map((m) => JSON.parse(m.json));
    expect(now).toMatchObject({ type: 'track', event: 'Now', timestamp: '2024-05-06T07:08:09.010Z' });
    expect(now.messageId).toMatch(/^[0-9a-f-]{36}$/);
    expect(mine.messageId).toBe('my-id-1');
    expect(offset.timestamp).toBe('2015-12-29T07:40:25.000Z');
    expect(date.timestamp).toBe('2020-02-29T12:00:00.000Z');
    // The library goes on the batch envelope only (SPEC §5 wire), not into each message.
    expect(now.context).toBeUndefined();
  });
});

describe('messageId and getters', () => {
  it('an empty or blank messageId counts as none: a UUID is generated, as the Go v2 library does for ""', () => {
    const { analytics, persistence } = client();
    const ids = [analytics.track({ userId: 'u1', event: 'A', messageId: '' }), analytics.track({ userId: 'u1', event: 'B', messageId: '  ' })];
    const sent = persistence.load().map((m) => JSON.parse(m.json));
    for (const [i, m] of sent.entries()) {
      expect(m.messageId).toMatch(/^[0-9a-f-]{36}$/);
      expect(ids[i]).toBe(m.messageId);
    }
  });

  it('a getter that throws is a refusal like any other (AnalyticsValidationError), nothing queued', () => {
    const { analytics, persistence } = client();
    const top = { userId: 'u1', event: 'E', get properties(): Record<string, unknown> { throw new Error('getter boom'); } };
    const nested = { userId: 'u1', event: 'E', properties: { get total(): number { throw new Error('nested boom'); } } };
    for (const m of [top, nested]) {
      const err = refusal(() => analytics.track(m));
      expect(err.message).toMatch(/boom/);
      expect(err.field).toBe('');
    }
    expect(persistence.load()).toEqual([]);
  });
});

describe('refusals that are not validation', () => {
  it(`refuses a message over ${MAX_MESSAGE_BYTES} bytes serialized, and accepts one just under`, () => {
    const { analytics, persistence } = client();
    const sized = (pad: number) => ({ userId: 'u1', event: 'Big', properties: { pad: 'x'.repeat(pad) } });
    // Find the padding that lands exactly on the limit: measure one stamped message.
    analytics.track(sized(0));
    const overhead = persistence.load()[0].bytes;
    analytics.track(sized(MAX_MESSAGE_BYTES - overhead));
    expect(persistence.load()[1].bytes).toBe(MAX_MESSAGE_BYTES);
    let err: unknown;
    try {
      analytics.track(sized(MAX_MESSAGE_BYTES - overhead + 1));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(MessageTooLargeError);
    expect(err).toMatchObject({ code: 'message_too_large', bytes: MAX_MESSAGE_BYTES + 1, limit: 32768 });
    expect(analytics.stats().queued).toBe(2);
    expect(persistence.size).toBe(2);
  });

  it('measures UTF-8 bytes, not characters', () => {
    const { analytics } = client();
    // 11,000 three-byte characters: 33,000 bytes but only 11,000 characters.
    expect(() => analytics.track({ userId: 'u1', event: 'E', properties: { s: '€'.repeat(11_000) } })).toThrow(MessageTooLargeError);
  });

  it('refuses with QueueFullError when maxQueueSize messages are held, without blocking or dropping', () => {
    const { analytics, persistence } = client({ maxQueueSize: 3 });
    for (let i = 0; i < 3; i++) analytics.track({ userId: 'u1', event: `E${i}` });
    let err: unknown;
    try {
      analytics.track({ userId: 'u1', event: 'E3' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(QueueFullError);
    expect(err).toBeInstanceOf(AnalyticsError);
    expect(err).toMatchObject({ code: 'queue_full', limit: 3 });
    expect(analytics.stats().queued).toBe(3);
    expect(persistence.load().map((m) => JSON.parse(m.json).event)).toEqual(['E0', 'E1', 'E2']);
  });

  it('still names the invalid field when the queue is also full: a bug is not hidden behind backpressure', () => {
    const { analytics } = client({ maxQueueSize: 1 });
    analytics.track({ userId: 'u1', event: 'E0' });
    expect(refusal(() => analytics.track({ userId: 'u1' } as never)).field).toBe('event');
    expect(() => analytics.track({ userId: 'u1', event: 'E1' })).toThrow(QueueFullError);
  });

  it('refuses every call after close() with ClientClosedError', async () => {
    const { analytics } = client();
    await analytics.close();
    expect(() => analytics.track({ userId: 'u1', event: 'Late' })).toThrow(ClientClosedError);
    expect(() => analytics.identify({ userId: 'u1' })).toThrow(/client is closed/);
    expect(analytics.stats().closed).toBe(true);
  });

  it('refuses a persistence failure at enqueue as an error, queueing nothing', () => {
    const failing = { load: () => [], add: () => { throw new Error('disk full'); }, remove: () => {} };
    const analytics = new Analytics('wk', { transport: unusedTransport, persistence: failing });
    expect(() => analytics.track({ userId: 'u1', event: 'E' })).toThrow(/could not persist the message, nothing queued: disk full/);
    expect(analytics.stats().queued).toBe(0);
  });
});

describe('options', () => {
  it('has the documented defaults, and size is an alias of flushAt', () => {
    const a = new Analytics('wk', { transport: unusedTransport, env: {} });
    expect(a.options).toEqual({
      endpoint: 'http://127.0.0.1:8787',
      flushAt: 20,
      flushAfter: 5000,
      maxRetries: 10,
      httpTimeout: 10_000,
      maxQueueSize: 10_000,
      concurrency: 4,
      debug: false,
    });
    expect(new Analytics('wk', { transport: unusedTransport, size: 7 }).options.flushAt).toBe(7);
    expect(new Analytics('wk', { transport: unusedTransport, size: 7, flushAt: 3 }).options.flushAt).toBe(3);
    expect(new Analytics('wk', { transport: unusedTransport, endpoint: 'http://h:1/' }).options.endpoint).toBe('http://h:1');
  });

  it('refuses nonsense at construction', () => {
    expect(() => new Analytics('', { transport: unusedTransport })).toThrow(/writeKey/);
    // Blank is no key: every request would be refused 401 (a review).
    expect(() => new Analytics('  ', { transport: unusedTransport })).toThrow(/writeKey must be a non-empty string/);
    expect(() => new Analytics('wk', { transport: unusedTransport }).configure({ writeKey: '\t' })).toThrow(/writeKey must be a non-empty string/);
    expect(() => new Analytics('wk', { transport: unusedTransport, flushAt: 0 })).toThrow(/flushAt must be an integer ≥ 1/);
    expect(() => new Analytics('wk', { transport: unusedTransport, flushAfter: 1.5 })).toThrow(/flushAfter/);
    expect(() => new Analytics('wk', { transport: unusedTransport, maxRetries: -1 })).toThrow(/maxRetries/);
    expect(() => new Analytics('wk', { transport: unusedTransport, endpoint: 'ftp://x' })).toThrow(/http: or https:/);
    expect(() => new Analytics('wk', { transport: unusedTransport, endpoint: 'not a url' })).toThrow(/absolute http/);
    // A logger without log() would swallow every report of a listener that threw, silently.
    expect(() => new Analytics('wk', { transport: unusedTransport, logger: {} as never })).toThrow(/logger must have a log\(line\) function/);
    expect(() => new Analytics('wk', { transport: unusedTransport, debug: 'yes' as never })).toThrow(/debug must be true or false/);
  });

  it('refuses times a timer cannot hold (Node fires a setTimeout over 2^31-1 ms after 1 ms)', () => {
    const tooLong = 2 ** 31;
    expect(() => new Analytics('wk', { transport: unusedTransport, flushAfter: tooLong })).toThrow(/flushAfter must be an integer ≥ 1 and ≤ 2147483647/);
    expect(() => new Analytics('wk', { transport: unusedTransport, httpTimeout: tooLong })).toThrow(/httpTimeout must be an integer ≥ 1 and ≤ 2147483647/);
    const a = new Analytics('wk', { transport: unusedTransport, flushAfter: tooLong - 1, httpTimeout: tooLong - 1 });
    expect(a.options).toMatchObject({ flushAfter: tooLong - 1, httpTimeout: tooLong - 1 });
    expect(() => a.configure({ flushAfter: tooLong })).toThrow(/flushAfter/);
  });

  it('refuses an endpoint with a query or fragment, which {endpoint}/v1/batch would swallow the path into', () => {
    expect(() => new Analytics('wk', { transport: unusedTransport, endpoint: 'http://h:1/?x=1' })).toThrow(/query string or fragment/);
    expect(() => new Analytics('wk', { transport: unusedTransport, endpoint: 'http://h:1/lab#f' })).toThrow(/query string or fragment/);
  });

  it('reports the package version as the library version', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(LIBRARY_VERSION).toBe(pkg.version);
  });
});

describe('events', () => {
  it('off() removes a listener added with once(), as with node:events', () => {
    const { analytics } = client();
    const seen: string[] = [];
    const fn = (e: { messageId: string }) => void seen.push(e.messageId);
    analytics.once('enqueue', fn);
    analytics.off('enqueue', fn);
    analytics.track({ userId: 'u1', event: 'E' });
    expect(seen).toEqual([]);
    expect(analytics.listenerCount('enqueue')).toBe(0);
    analytics.once('enqueue', fn);
    const id = analytics.track({ userId: 'u1', event: 'F' });
    analytics.track({ userId: 'u1', event: 'G' });
    expect(seen).toEqual([id]);
  });
});

describe('messages with their own toJSON', () => {
  class Order {
    constructor(readonly id: string) {}
    toJSON() {
      return { userId: 'u1', event: 'Order Completed', properties: { orderId: this.id } };
    }
  }

  it('are validated, stamped and sent as JSON.stringify would serialize them', () => {
    const { analytics, persistence } = client();
    analytics.enqueue('track', new Order('o-1'));
    // toJSON returning the object itself, and a plain object carrying a toJSON that would drop the stamp.
    analytics.enqueue('track', { userId: 'u2', event: 'Self', toJSON() { return this; } });
    analytics.enqueue('track', { userId: 'u3', event: 'Ignored', toJSON: () => ({ userId: 'u3', event: 'Replaced', toJSON: () => 'lost' }) });
    const [order, self, replaced] = persistence.load().map((m) => JSON.parse(m.json));
    expect(order).toMatchObject({ type: 'track', userId: 'u1', event: 'Order Completed', properties: { orderId: 'o-1' } });
    expect(order.messageId).toMatch(/^[0-9a-f-]{36}$/);
    expect(self).toMatchObject({ type: 'track', userId: 'u2', event: 'Self' });
    expect(replaced).toMatchObject({ type: 'track', userId: 'u3', event: 'Replaced' });
    for (const m of [order, self, replaced]) expect(typeof m.timestamp).toBe('string');
  });

  it('are refused, naming why, when toJSON does not give an object or throws; nothing is queued', () => {
    const { analytics, persistence } = client();
    for (const [value, words] of [
      ['Signed Up', /toJSON\(\) returned string/],
      [[1, 2], /toJSON\(\) returned an array/],
      [null, /toJSON\(\) returned null/],
    ] as const) {
      const err = refusal(() => analytics.enqueue('track', { userId: 'u1', event: 'E', toJSON: () => value }));
      expect(err.field).toBe('');
      expect(err.message).toMatch(words);
    }
    const thrown = refusal(() => analytics.enqueue('track', { toJSON: () => { throw new Error('boom'); } }));
    expect(thrown.message).toMatch(/toJSON threw: boom/);
    // What toJSON gives is what is validated: a valid-looking object whose wire form lacks event.
    expect(refusal(() => analytics.enqueue('track', { userId: 'u1', event: 'E', toJSON: () => ({ userId: 'u1' }) })).field).toBe('event');
    expect(analytics.stats().queued).toBe(0);
    expect(persistence.size).toBe(0);
  });
});
