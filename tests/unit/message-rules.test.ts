import { describe, expect, it } from 'vitest';
import { clientViolations, collectorDropReason, passesClientChecks, validateMessage } from '../../src/shared/message-rules';
import { NORMALIZE_VERSION } from '../../src/shared/normalize';
import { CALL_TYPES } from '../../src/shared/types';

const fields = (type: string, message: unknown) => validateMessage(type, message).map((v) => v.field);

describe('validateMessage (client and UI rules, SPEC §5)', () => {
  it.each(['identify', 'track', 'page', 'screen', 'group'])('%s needs userId or anonymousId', (type) => {
    const base = { event: 'E', groupId: 'g' };
    expect(validateMessage(type, base)).toEqual([{ field: 'userId', message: 'userId or anonymousId is required' }]);
    expect(validateMessage(type, { ...base, userId: 'u1' })).toEqual([]);
    expect(validateMessage(type, { ...base, anonymousId: 'a1' })).toEqual([]);
  });

  it('accepts numeric ids and treats blank or null ones as missing', () => {
    expect(validateMessage('identify', { userId: 42 })).toEqual([]);
    expect(validateMessage('identify', { userId: 0 })).toEqual([]);
    expect(fields('identify', { userId: '' })).toEqual(['userId']);
    expect(fields('identify', { userId: '   ' })).toEqual(['userId']);
    expect(fields('identify', { userId: null, anonymousId: null })).toEqual(['userId']);
    expect(validateMessage('identify', { userId: null, anonymousId: 'a' })).toEqual([]);
  });

  it('refuses ids that are neither strings nor numbers, naming the field', () => {
    expect(validateMessage('identify', { anonymousId: 'a', userId: { id: 1 } })).toEqual([
      { field: 'userId', message: 'must be a string or a number' },
    ]);
    expect(validateMessage('identify', { userId: Number.NaN })).toEqual([
      { field: 'userId', message: 'must be a string or a number' },
    ]);
    expect(fields('track', { userId: 'u', event: 'E', messageId: true })).toEqual(['messageId']);
  });

  it('track needs a non-empty string event', () => {
    expect(fields('track', { userId: 'u' })).toEqual(['event']);
    expect(fields('track', { userId: 'u', event: '' })).toEqual(['event']);
    expect(validateMessage('track', { userId: 'u', event: 12 })).toEqual([{ field: 'event', message: 'must be a string' }]);
    expect(validateMessage('track', { userId: 'u', event: 'Signed Up' })).toEqual([]);
  });

  it('group needs groupId; alias needs userId and previousId', () => {
    expect(fields('group', { userId: 'u' })).toEqual(['groupId']);
    expect(validateMessage('group', { userId: 'u', groupId: 7 })).toEqual([]);
    expect(fields('alias', {})).toEqual(['userId', 'previousId']);
    expect(fields('alias', { anonymousId: 'a', previousId: 'p' })).toEqual(['userId']);
    expect(validateMessage('alias', { userId: 'u', previousId: 'p' })).toEqual([]);
  });

  it('page and screen need no name, but a given name/category must be a string', () => {
    expect(validateMessage('page', { anonymousId: 'a' })).toEqual([]);
    expect(validateMessage('page', { anonymousId: 'a', name: 'Home', category: 'Docs' })).toEqual([]);
    expect(fields('page', { anonymousId: 'a', name: 3, category: ['x'] })).toEqual(['name', 'category']);
  });

  it('integrations must be an object of booleans or option objects, with dotted paths', () => {
    expect(validateMessage('track', { userId: 'u', event: 'E', integrations: { All: false, Webhooks: true } })).toEqual([]);
    expect(validateMessage('track', { userId: 'u', event: 'E', integrations: { Webhooks: { opt: 1 } } })).toEqual([]);
    expect(validateMessage('track', { userId: 'u', event: 'E', integrations: { Webhooks: 'yes', Mixpanel: 1, All: false } })).toEqual([
      { field: 'integrations.Webhooks', message: 'must be true, false or an options object' },
      { field: 'integrations.Mixpanel', message: 'must be true, false or an options object' },
    ]);
    expect(fields('track', { userId: 'u', event: 'E', integrations: ['Webhooks'] })).toEqual(['integrations']);
    expect(fields('track', { userId: 'u', event: 'E', integrations: true })).toEqual(['integrations']);
  });

  it('context, properties and traits must be plain objects when present', () => {
    expect(validateMessage('track', { userId: 'u', event: 'E', context: null, properties: undefined })).toEqual([]);
    expect(
      validateMessage('track', { userId: 'u', event: 'E', context: 'ctx', properties: [1], traits: new Date() }),
    ).toEqual([
      { field: 'context', message: 'must be an object' },
      { field: 'properties', message: 'must be an object' },
      { field: 'traits', message: 'must be an object' },
    ]);
  });

  it('timestamp must be an accepted ISO string or a valid Date', () => {
    const ok = { userId: 'u', event: 'E' };
    expect(validateMessage('track', { ...ok, timestamp: '2015-12-28T23:40:25-0800' })).toEqual([]);
    expect(validateMessage('track', { ...ok, timestamp: new Date() })).toEqual([]);
    expect(validateMessage('track', { ...ok, timestamp: 'not a date' })).toEqual([
      { field: 'timestamp', message: 'is not an ISO 8601 date-time like 2015-12-28T23:40:25.000Z' },
    ]);
    expect(validateMessage('track', { ...ok, timestamp: '2015-13-01T00:00:00Z' })).toEqual([
      { field: 'timestamp', message: 'month out of range' },
    ]);
    expect(fields('track', { ...ok, timestamp: new Date(Number.NaN) })).toEqual(['timestamp']);
    expect(fields('track', { ...ok, timestamp: 1451374825000 })).toEqual(['timestamp']);
  });

  it('reports every problem at once, in a stable order', () => {
    expect(fields('track', { properties: 'x', timestamp: 'nope', name: 1 })).toEqual([
      'name',
      'userId',
      'event',
      'properties',
      'timestamp',
    ]);
  });

  it('an unknown type is a violation on type; a non-object message on the message itself', () => {
    expect(validateMessage('purchase', { userId: 'u' })).toEqual([
      { field: 'type', message: 'unknown type "purchase" (expected one of identify, track, page, screen, group, alias)' },
    ]);
    expect(fields('delete', { userId: 'u' })).toEqual(['type']);
    expect(validateMessage('track', 'hello')).toEqual([{ field: '', message: 'must be an object' }]);
    expect(validateMessage('track', [])).toEqual([{ field: '', message: 'must be an object' }]);
  });
});

describe('passesClientChecks (the no-allocation answer for valid messages)', () => {
  // Values that sit on either side of every rule: ids, strings, objects, integrations, timestamps.
  const VALUES: unknown[] = [
    null, '', '  ', 'u1', 0, 42, Number.NaN, Number.POSITIVE_INFINITY, true, {}, [], Object.create(null), new Map(),
    { a: true }, { a: { x: 1 } }, { a: 1 }, { a: 'yes' }, new Date(0), new Date(Number.NaN),
    '2015-12-28T23:40:25-0800', '2015-12-28T23:40:25', '2015-02-30T00:00:00Z', 1451374825,
  ];
  const FIELDS = ['userId', 'anonymousId', 'groupId', 'previousId', 'messageId', 'event', 'name', 'category', 'context', 'properties', 'traits', 'integrations', 'timestamp', 'other'];

  // Seeded, so a failure reproduces.
  let seed = 12345;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)];
  const message = (): Record<string, unknown> => {
    // Mostly valid ids and events, so that both answers come up often.
    const m: Record<string, unknown> = { userId: 'u1', anonymousId: 'a1', previousId: 'p1', groupId: 'g1', event: 'E' };
    for (const f of FIELDS) if (random() < 0.25) m[f] = pick(VALUES);
    for (const f of FIELDS) if (random() < 0.1) delete m[f];
    return m;
  };

  it('is true exactly when the checks report no violation, for every type', () => {
    let valid = 0;
    let invalid = 0;
    for (let i = 0; i < 20_000; i++) {
      const m = message();
      const type = pick(CALL_TYPES);
      const fast = passesClientChecks(m, type);
      expect({ type, m, fast }).toEqual({ type, m, fast: clientViolations(m, type).length === 0 });
      if (fast) valid++;
      else invalid++;
    }
    // Both sides well covered, or the comparison proves little.
    expect(valid).toBeGreaterThan(2000);
    expect(invalid).toBeGreaterThan(2000);
  });
});

describe('collectorDropReason (SPEC §3)', () => {
  it.each([
    [null, 'not a JSON object'],
    ['track', 'not a JSON object'],
    [[{ type: 'track' }], 'not a JSON object'],
    [{ userId: 'u' }, 'missing type'],
    [{ type: 'purchase', userId: 'u' }, 'unknown type "purchase"'],
    [{ type: 7, userId: 'u' }, 'unknown type 7'],
    [{ type: 'x'.repeat(100) }, `unknown type "${'x'.repeat(39)}…`],
    [{ type: 'Track', userId: 'u', event: 'E' }, 'unknown type "Track"'],
    [{ type: 'identify' }, 'missing userId or anonymousId'],
    [{ type: 'identify', userId: '' }, 'missing userId or anonymousId'],
    [{ type: 'alias', previousId: 'p' }, 'missing userId or anonymousId'],
    [{ type: 'track', userId: 'u' }, 'track without event'],
    [{ type: 'track', userId: 'u', event: '  ' }, 'track without event'],
    [{ type: 'group', userId: 'u' }, 'group without groupId'],
    [{ type: 'alias', userId: 'u' }, 'alias without previousId'],
    [{ type: 'identify', userId: 'u', traits: [] }, 'traits must be an object'],
    [{ type: 'identify', userId: ['u'] }, 'userId must be a string or a number'],
    [{ type: 'track', userId: 'u', event: 12 }, 'event must be a string'],
    [{ type: 'track', userId: 'u', event: null }, 'track without event'],
    [{ type: 'identify', anonymousId: 'a', userId: ['u'] }, 'userId must be a string or a number'],
  ])('%j → %s', (item, reason) => {
    expect(collectorDropReason(item, NORMALIZE_VERSION)).toBe(reason);
  });

  it('accepts what real clients send, including numeric ids and alias with only an anonymousId', () => {
    expect(collectorDropReason({ type: 'identify', userId: 123 }, NORMALIZE_VERSION)).toBeNull();
    expect(collectorDropReason({ type: 'track', anonymousId: 'a', event: 'E' }, NORMALIZE_VERSION)).toBeNull();
    expect(collectorDropReason({ type: 'alias', anonymousId: 'a', previousId: 'p' }, NORMALIZE_VERSION)).toBeNull();
    expect(collectorDropReason({ type: 'group', userId: 'u', groupId: 99 }, NORMALIZE_VERSION)).toBeNull();
    expect(collectorDropReason({ type: 'screen', userId: 'u' }, NORMALIZE_VERSION)).toBeNull();
  });

  it('is more lenient than the client where SPEC §3 says nothing: integration values and timestamps', () => {
    const item = { type: 'track', userId: 'u', event: 'E', integrations: { Webhooks: 'on' }, timestamp: 'garbage' };
    expect(collectorDropReason(item, NORMALIZE_VERSION)).toBeNull();
    expect(validateMessage('track', item).map((v) => v.field)).toEqual(['integrations.Webhooks', 'timestamp']);
  });
});
