import { describe, expect, it } from 'vitest';
import { goCode, goValue } from '../../src/shared/preview/go-code';

describe('Go v2 code preview', () => {
  it('writes a track call as client.Track(&analytics.Track{...}) with gofmt alignment', () => {
    const code = goCode('track', {
      userId: 'user_1234',
      event: 'Order Completed',
      properties: { revenue: 39.95, currency: 'USD', products: [{ sku: 'a' }], gift: false, coupon: null },
    });
    expect(code).toBe(
      [
        'client.Track(&analytics.Track{',
        '\tUserId: "user_1234",',
        '\tEvent:  "Order Completed",',
        '\tProperties: map[string]interface{}{',
        '\t\t"revenue":  39.95,',
        '\t\t"currency": "USD",',
        '\t\t"products": []interface{}{',
        '\t\t\tmap[string]interface{}{',
        '\t\t\t\t"sku": "a",',
        '\t\t\t},',
        '\t\t},',
        '\t\t"gift":   false,',
        '\t\t"coupon": nil,',
        '\t},',
        '})',
      ].join('\n'),
    );
  });

  it('uses the struct and fields of each call type', () => {
    expect(goCode('identify', { userId: 'u', traits: { plan: 'pro' } })).toMatch(/^client\.Identify\(&analytics\.Identify\{\n\tUserId: "u",\n\tTraits: map/);
    const page = goCode('page', { anonymousId: 'a1', name: 'Pricing', category: 'Docs', properties: { path: '/p' } });
    expect(page).toContain('client.Page(&analytics.Page{');
    expect(page).toContain('\tAnonymousId: "a1",\n\tName:        "Pricing",\n\tCategory:    "Docs",');
    // v2 names the page's properties field Traits (sent as "properties").
    expect(page).toContain('\tTraits: map[string]interface{}{\n\t\t"path": "/p",\n\t},');
    expect(page).not.toContain('Properties:');
    expect(goCode('group', { userId: 'u', groupId: 'g', traits: {} })).toContain('\tGroupId: "g",\n\tTraits:  map[string]interface{}{},');
    const alias = goCode('alias', { previousId: 'old', userId: 'new', context: { ip: '1.2.3.4' } });
    // v2's Alias struct has only PreviousId, UserId and the embedded Message.
    expect(alias).toBe('client.Alias(&analytics.Alias{\n\tPreviousId: "old",\n\tUserId:     "new",\n})');
  });

  it('puts context, integrations and a historical timestamp where v2 has them', () => {
    const code = goCode('track', {
      userId: 'u',
      event: 'E',
      context: { ip: '203.0.113.7' },
      integrations: { All: false, Webhooks: true },
      timestamp: '2015-12-28T23:40:25-0800',
    });
    expect(code).toContain('\tContext: map[string]interface{}{\n\t\t"ip": "203.0.113.7",\n\t},');
    expect(code).toContain('\tIntegrations: map[string]interface{}{\n\t\t"All":      false,\n\t\t"Webhooks": true,\n\t},');
    expect(code).toContain('\tMessage: analytics.Message{\n\t\tTimestamp: "2015-12-28T23:40:25-0800",\n\t},');
  });

  it('adds client setup when a write key is given, and escapes strings for Go', () => {
    const code = goCode('track', { userId: 'u"1', event: 'a\\b\nc' }, { writeKey: 'wk_1', endpoint: 'http://127.0.0.1:8787' });
    expect(code.split('\n').slice(0, 4)).toEqual([
      'client := analytics.New("wk_1")',
      'client.Endpoint = "http://127.0.0.1:8787"',
      'defer client.Close()',
      '',
    ]);
    expect(code).toContain('UserId: "u\\"1",');
    expect(code).toContain('Event:  "a\\\\b\\nc",');
    expect(goValue([], '')).toBe('[]interface{}{}');
    expect(goValue(12, '')).toBe('12');
  });

  it('stringifies numeric ids, which v2 types as strings', () => {
    expect(goCode('identify', { userId: 42 })).toContain('UserId: "42",');
  });
});

// The v2 structs as declared in github.com/segmentio/analytics-go at Version = "2.1.0" (analytics.go,
// the single-file v2 client; the 2.1.x line keeps these structs). Every struct embeds `Message`
// (Type, MessageId, Timestamp, SentAt). There is no Screen struct and no client.Screen in v2.
const V2_FIELDS: Record<string, string[]> = {
  Identify: ['Context', 'Integrations', 'Traits', 'AnonymousId', 'UserId', 'Message'],
  Group: ['Context', 'Integrations', 'Traits', 'AnonymousId', 'UserId', 'GroupId', 'Message'],
  Track: ['Context', 'Integrations', 'Properties', 'AnonymousId', 'UserId', 'Event', 'Message'],
  Page: ['Context', 'Integrations', 'Traits', 'AnonymousId', 'UserId', 'Category', 'Name', 'Message'],
  Alias: ['PreviousId', 'UserId', 'Message'],
};
const V2_MESSAGE_FIELDS = ['Type', 'MessageId', 'Timestamp', 'SentAt'];
const V2_METHODS = ['Identify', 'Group', 'Track', 'Page', 'Alias', 'Close'];

/** The live (uncommented) v2 code's struct literals: struct name → its top-level field names. */
function structLiterals(code: string): { method: string; struct: string; fields: string[] }[] {
  const live = code.split('\n').filter((l) => !l.trimStart().startsWith('//'));
  const out: { method: string; struct: string; fields: string[] }[] = [];
  for (let i = 0; i < live.length; i++) {
    const m = /^client\.(\w+)\(&analytics\.(\w+)\{$/.exec(live[i]);
    if (!m) continue;
    const fields: string[] = [];
    for (let j = i + 1; j < live.length && live[j] !== '})'; j++) {
      const f = /^\t(\w+):/.exec(live[j]);
      if (f) fields.push(f[1]);
    }
    out.push({ method: m[1], struct: m[2], fields });
  }
  return out;
}

describe('Go v2 code preview against the analytics-go 2.1 structs', () => {
  const full = {
    userId: 'u',
    anonymousId: 'a',
    previousId: 'old',
    groupId: 'g',
    event: 'E',
    name: 'N',
    category: 'C',
    properties: { p: 1 },
    traits: { t: 1 },
    context: { ip: '1.2.3.4' },
    integrations: { All: true },
    messageId: 'm1',
    timestamp: '2015-12-28T23:40:25-0800',
  };
  for (const type of ['identify', 'track', 'page', 'screen', 'group', 'alias'] as const) {
    it(`${type}: every field it writes exists on the v2 struct, and only v2 methods are called`, () => {
      const code = goCode(type, full, { writeKey: 'wk', endpoint: 'http://127.0.0.1:8787' });
      const literals = structLiterals(code);
      expect(literals).toHaveLength(1);
      for (const { method, struct, fields } of literals) {
        expect(V2_FIELDS[struct], `analytics.${struct} exists in v2`).toBeDefined();
        expect(method).toBe(struct);
        for (const f of fields) expect(V2_FIELDS[struct], `analytics.${struct}.${f}`).toContain(f);
      }
      for (const m of code.matchAll(/^client\.(\w+)\(/gm)) expect(V2_METHODS).toContain(m[1]);
      for (const m of code.matchAll(/^\t\t(\w+):/gm)) {
        // Fields nested one level in: only the embedded Message's (map keys are quoted).
        expect(V2_MESSAGE_FIELDS).toContain(m[1]);
      }
    });
  }

  it('screen: says v2 cannot send it, shows v3 in a comment and sends a track with v2', () => {
    const code = goCode('screen', { userId: 'u', name: 'Home', properties: { from: 'push' } });
    expect(code).toMatch(/^\/\/ analytics-go v2 cannot send a screen call/m);
    expect(code).toContain('// client.Enqueue(analytics.Screen{');
    expect(code).not.toMatch(/^client\.Screen/m);
    expect(structLiterals(code)).toEqual([{ method: 'Track', struct: 'Track', fields: ['UserId', 'Event', 'Properties'] }]);
    expect(code).toContain('\tEvent:  "Viewed Home Screen",');
  });
});
