import { describe, expect, it } from 'vitest';
import { currentRequest } from '../../src/main/engine/dispatcher/request-headers';
import { normalizeForPreview, webhookPreview } from '../../src/shared/preview/webhook-preview';
import { buildRequestHeaders, DEFAULT_USER_AGENT_PRODUCT, userAgentOf } from '../../src/shared/webhook-request';
import { DEFAULT_SETTINGS } from '../../src/main/engine/store/settings.repo';

// The header rule has one home; these check that both of its users (the dispatcher, which sends,
// and the Compose preview, which shows) get the same request from it.

describe('userAgentOf', () => {
  it('adds /1.0 to a bare product, keeps a full token, and falls back to the default product', () => {
    expect(userAgentOf('WebhookLab')).toBe('WebhookLab/1.0');
    expect(userAgentOf('  Acme/2.3 ')).toBe('Acme/2.3');
    expect(userAgentOf(' ')).toBe(`${DEFAULT_USER_AGENT_PRODUCT}/1.0`);
    expect(userAgentOf(DEFAULT_SETTINGS.userAgentProduct)).toBe('Segment.io/1.0');
  });
});

describe('buildRequestHeaders', () => {
  it('counts Content-Length in bytes whether the body is a Node Buffer or browser-encoded bytes', () => {
    const text = '{"event":"Café ☕ 🎉"}';
    const fromBuffer = buildRequestHeaders({ userAgent: 'x', signature: null, urlHeaders: {}, body: Buffer.from(text) });
    const fromEncoder = buildRequestHeaders({ userAgent: 'x', signature: null, urlHeaders: {}, body: new TextEncoder().encode(text) });
    expect(fromBuffer['Content-Length']).toBe(String(Buffer.byteLength(text)));
    expect(fromEncoder).toEqual(fromBuffer);
    expect(Number(fromBuffer['Content-Length'])).toBeGreaterThan(text.length);
  });

  it('keeps a byte view of a larger buffer to its own length (a subarray, as the store hands out)', () => {
    const whole = Buffer.from('0123456789');
    const h = buildRequestHeaders({ userAgent: 'x', signature: null, urlHeaders: {}, body: whole.subarray(2, 5) });
    expect(h['Content-Length']).toBe('3');
  });
});

describe('the Compose preview shows what the dispatcher sends', () => {
  const call = normalizeForPreview({ type: 'track', userId: 'u1', event: 'Café ☕', messageId: 'm1' }, {}, Date.parse('2026-03-01T10:00:00Z'));
  const cases: { name: string; product: string; secret: string | undefined; urlHeaders: Record<string, string> }[] = [
    { name: 'unsigned, default product', product: 'Segment.io', secret: undefined, urlHeaders: {} },
    { name: 'signed, full product token, static headers incl. a forged reserved one', product: 'Acme/2.3', secret: 's3cret', urlHeaders: { 'X-Env': 'qa', 'x-signature': 'forged' } },
    { name: 'blank product', product: '', secret: 'k', urlHeaders: {} },
  ];
  it.each(cases)('$name', async (c) => {
    const preview = await webhookPreview(call, { format: 'full', userAgentProduct: c.product, sharedSecret: c.secret, headers: c.urlHeaders });
    const body = Buffer.from(preview.body);
    const sent = currentRequest(c.product, c.secret, body);
    expect(preview.signature).toBe(sent.signature);
    expect(preview.headers).toEqual(buildRequestHeaders({ ...sent, urlHeaders: c.urlHeaders, body }));
  });
});
