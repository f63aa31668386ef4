import { describe, expect, it } from 'vitest';
import { currentRequest } from '../../src/main/engine/dispatcher/request-headers';
import { buildRequestHeaders } from '../../src/shared/webhook-request';
import { signBody } from '../../src/main/engine/dispatcher/sign';

const body = Buffer.from('{"type":"track","event":"Café ☕"}', 'utf8');

/** The request a new delivery (or a replay) makes from a product setting and a secret. */
function request(o: { userAgentProduct: string; secret?: string; urlHeaders: Record<string, string>; body: Buffer }) {
  const r = currentRequest(o.userAgentProduct, o.secret, o.body);
  return { headers: buildRequestHeaders({ ...r, urlHeaders: o.urlHeaders, body: o.body }), signature: r.signature };
}

describe('buildRequestHeaders', () => {
  it('sets the reserved headers; Content-Length counts bytes, not characters', () => {
    const { headers, signature } = request({ userAgentProduct: 'Segment.io', urlHeaders: {}, body });
    expect(headers).toEqual({
      'User-Agent': 'Segment.io/1.0',
      'Content-Type': 'application/json',
      'Content-Length': String(body.length),
    });
    expect(body.length).toBeGreaterThan(body.toString('utf8').length);
    expect(signature).toBeNull();
  });

  it('signs the body when a secret is set', () => {
    const { headers, signature } = request({ userAgentProduct: 'Segment.io', secret: 's3cret', urlHeaders: {}, body });
    expect(signature).toBe(signBody('s3cret', body));
    expect(signature).toMatch(/^[0-9a-f]{40}$/);
    expect(headers['X-Signature']).toBe(signature);
  });

  it('treats an empty secret as no secret', () => {
    const { headers, signature } = request({ userAgentProduct: 'Segment.io', secret: '', urlHeaders: {}, body });
    expect(signature).toBeNull();
    expect('X-Signature' in headers).toBe(false);
  });

  it('uses the configured product, defaulting to Segment.io, and keeps a full product/version token', () => {
    const ua = (p: string) => request({ userAgentProduct: p, urlHeaders: {}, body }).headers['User-Agent'];
    expect(ua('WebhookLab')).toBe('WebhookLab/1.0');
    expect(ua('')).toBe('Segment.io/1.0');
    expect(ua('Acme/2.3')).toBe('Acme/2.3');
  });

  it("adds the URL's static headers", () => {
    const { headers } = request({ userAgentProduct: 'Segment.io', urlHeaders: { 'X-Env': 'qa', Authorization: 'Bearer t' }, body });
    expect(headers['X-Env']).toBe('qa');
    expect(headers.Authorization).toBe('Bearer t');
  });

  it('never lets a static header replace a reserved one, whatever its case', () => {
    const { headers } = request({
      userAgentProduct: 'Segment.io',
      secret: 's3cret',
      urlHeaders: {
        'content-type': 'text/plain', 'CONTENT-LENGTH': '1', 'x-signature': 'forged', 'User-Agent': 'evil',
        Host: 'elsewhere', 'Transfer-Encoding': 'chunked', Connection: 'close', 'X-Ok': '1',
      },
      body,
    });
    expect(headers).toEqual({
      'User-Agent': 'Segment.io/1.0',
      'Content-Type': 'application/json',
      'Content-Length': String(body.length),
      'X-Signature': signBody('s3cret', body),
      'X-Ok': '1',
    });
  });
});
