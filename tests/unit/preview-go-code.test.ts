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
    expect(goCode('group', { userId: 'u', groupId: 'g', traits: {} })).toContain('\tGroupId: "g",\n\tTraits:  map[string]interface{}{},');
    const alias = goCode('alias', { previousId: 'old', userId: 'new', context: { ip: '1.2.3.4' } });
    // v2's Alias struct has only PreviousId, UserId and the embedded Message.
    expect(alias).toBe('client.Alias(&analytics.Alias{\n\tPreviousId: "old",\n\tUserId:     "new",\n})');
    const screen = goCode('screen', { userId: 'u', name: 'Home' });
    expect(screen.split('\n')[0]).toMatch(/^\/\/ analytics-go v2 has no Screen method/);
    expect(screen).toContain('client.Screen(&analytics.Screen{');
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
