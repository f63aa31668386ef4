import { describe, expect, it } from 'vitest';
import { currentActionsRequest, currentRequest, standardWebhooksFor } from '../../src/main/engine/dispatcher/request-headers';
import { newWebhookId } from '../../src/shared/webhook-id';
import { buildActionsRequestHeaders, buildRequestHeaders } from '../../src/shared/webhook-request';
import { signBody } from '../../src/main/engine/dispatcher/sign';
import { signStandardWebhook, verifyStandardWebhook } from '../../src/main/engine/dispatcher/standard-webhooks-sign';

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

describe('Standard Webhooks headers per attempt', () => {
  const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const at = Date.parse('2026-03-01T12:00:00.400Z');

  it('signs id.timestamp.body with the attempt time in whole seconds', () => {
    const sw = standardWebhooksFor({ id: 'msg_1', secrets: [SECRET] }, body, at)!;
    const ts = Math.floor(at / 1000);
    expect(sw).toEqual({
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(ts),
      'webhook-signature': signStandardWebhook({ secret: SECRET, id: 'msg_1', timestamp: ts, body: body.toString('utf8') }),
    });
    expect(verifyStandardWebhook({ secret: SECRET, headers: sw, body: body.toString('utf8'), now: ts }).ok).toBe(true);
    // The known vector, through the same path.
    const vector = standardWebhooksFor({ id: 'msg_p5jXN8AQM9LWM0D4loKWxJek', secrets: [SECRET] }, Buffer.from('{"test": 2432232314}'), 1614265330_999);
    expect(vector?.['webhook-signature']).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('a later attempt gets its own timestamp and signature, same id', () => {
    const a = standardWebhooksFor({ id: 'msg_1', secrets: [SECRET] }, body, at)!;
    const b = standardWebhooksFor({ id: 'msg_1', secrets: [SECRET] }, body, at + 2 * 3600_000)!;
    expect(b['webhook-id']).toBe(a['webhook-id']);
    expect(Number(b['webhook-timestamp']) - Number(a['webhook-timestamp'])).toBe(7200);
    expect(b['webhook-signature']).not.toBe(a['webhook-signature']);
  });

  it('none without a secret, or with an unusable one', () => {
    expect(standardWebhooksFor(null, body, at)).toBeNull();
    expect(standardWebhooksFor({ id: 'msg_1', secrets: ['not-a-whsec'] }, body, at)).toBeNull();
  });

  it('new ids are msg_ and 18 random bytes in base64url, and distinct (one generator: the dispatcher, the probe, the preview)', () => {
    const ids = new Set(Array.from({ length: 50 }, () => newWebhookId()));
    expect(ids.size).toBe(50);
    for (const id of ids) expect(id).toMatch(/^msg_[A-Za-z0-9_-]{24}$/);
    // The bytes as given, in base64url: the same encoding as Node's.
    const bytes = Uint8Array.from({ length: 18 }, (_, i) => 250 - i * 13);
    expect(newWebhookId((b) => (b.set(bytes), b))).toBe(`msg_${Buffer.from(bytes).toString('base64url')}`);
  });

  it('replace static headers of the same names (any case) in Classic and Actions headers alike', () => {
    const sw = standardWebhooksFor({ id: 'msg_1', secrets: [SECRET] }, body, at)!;
    const urlHeaders = { 'Webhook-Id': 'forged', 'WEBHOOK-SIGNATURE': 'v1,forged', 'webhook-timestamp': '1', 'X-Ok': '1' };
    const classic = buildRequestHeaders({ userAgent: 'Segment.io/1.0', signature: null, urlHeaders, body, standardWebhooks: sw });
    expect(classic).toEqual({ 'User-Agent': 'Segment.io/1.0', 'Content-Type': 'application/json', 'Content-Length': String(body.length), 'X-Ok': '1', ...sw });
    const actions = buildActionsRequestHeaders({ userAgent: 'Segment (Actions)', signature: 'abc', urlHeaders, body, standardWebhooks: sw });
    expect(actions).toEqual({ 'user-agent': 'Segment (Actions)', 'x-signature': 'abc', 'x-ok': '1', 'content-type': 'application/json', accept: '*/*', 'content-length': String(body.length), 'accept-encoding': 'gzip,deflate', ...sw });
    // Without Standard Webhooks, such static headers are the user's to send.
    expect(buildRequestHeaders({ userAgent: 'x', signature: null, urlHeaders, body })['Webhook-Id']).toBe('forged');
  });
});

describe('Actions request headers', () => {
  it('a mapping header whose value is the text "undefined" is left out, Segment\'s own of that name too (issue 37, item 4)', () => {
    const h = buildActionsRequestHeaders({ userAgent: 'Segment (Actions)', signature: 'sig', urlHeaders: { 'X-Gone': 'undefined', 'X-Keep': 'k', 'X-Signature': 'undefined', 'User-Agent': 'undefined' }, body });
    expect(h['x-gone']).toBeUndefined();
    expect(h['x-signature']).toBeUndefined();
    expect(h['x-keep']).toBe('k');
    // node-fetch's own, as Segment's client sends when none is left.
    expect(h['user-agent']).toBe('node-fetch/1.0 (+https://github.com/bitinn/node-fetch)');
  });

  // As Segment's request client sends them (captured from @segment/actions-core's createRequestClient
  // with the webhook destination's X-Signature): user-agent, x-signature, the mapping's headers sorted
  // by name (node-fetch's Headers iterate sorted) and lowercased, content-type for a body, then what
  // node-fetch adds when missing: accept, content-length, accept-encoding (undici adds host, connection).
  it("in Segment's order: user-agent, x-signature, the mapping's headers sorted by name, content-type, accept, content-length, accept-encoding", () => {
    const h = buildActionsRequestHeaders({ userAgent: 'Segment (Actions)', signature: 'sig', urlHeaders: { 'X-Zed': '1', 'X-Api-Key': 'k', 'b-low': '2' }, body });
    expect(Object.entries(h)).toEqual([
      ['user-agent', 'Segment (Actions)'],
      ['x-signature', 'sig'],
      ['x-api-key', 'k'],
      ['x-zed', '1'],
      ['b-low', '2'],
      ['content-type', 'application/json'],
      ['accept', '*/*'],
      ['content-length', String(body.length)],
      ['accept-encoding', 'gzip,deflate'],
    ]);
  });

  it("a mapping may replace user-agent, x-signature, accept and accept-encoding, in place; content-type only without a body; never content-length or host", () => {
    const urlHeaders = { 'User-Agent': 'mine', 'X-Signature': 'forged', Accept: 'application/json', 'Accept-Encoding': 'identity', 'Content-Type': 'text/plain', 'Content-Length': '1', Host: 'h' };
    const h = buildActionsRequestHeaders({ userAgent: 'Segment (Actions)', signature: 'sig', urlHeaders, body });
    expect(h).toEqual({ 'user-agent': 'mine', 'x-signature': 'forged', accept: 'application/json', 'accept-encoding': 'identity', 'content-type': 'application/json', 'content-length': String(body.length) });
    expect(buildActionsRequestHeaders({ userAgent: 'Segment (Actions)', signature: null, urlHeaders, body: Buffer.alloc(0) })['content-type']).toBe('text/plain');
  });

  it('deliveries stored before (user-agent and content-type among their headers) go out the same', () => {
    const h = buildActionsRequestHeaders({ userAgent: 'Segment (Actions)', signature: 'sig', urlHeaders: { 'user-agent': 'Segment (Actions)', 'content-type': 'application/json', 'x-api-key': 'k' }, body });
    expect(h).toEqual({ 'user-agent': 'Segment (Actions)', 'x-signature': 'sig', 'x-api-key': 'k', 'content-type': 'application/json', accept: '*/*', 'content-length': String(body.length), 'accept-encoding': 'gzip,deflate' });
  });

  it('an empty body goes without content-type, with content-length 0', () => {
    const h = buildActionsRequestHeaders({ userAgent: 'Segment (Actions)', signature: null, urlHeaders: {}, body: Buffer.alloc(0) });
    expect(h).toEqual({ 'user-agent': 'Segment (Actions)', accept: '*/*', 'content-length': '0', 'accept-encoding': 'gzip,deflate' });
  });

  it("a replay re-signs X-Signature over the one call's data, or a batch's first item only", () => {
    const one = Buffer.from('{"event":"A","n":1}');
    expect(currentActionsRequest('s3cret', one, false)).toEqual({ userAgent: 'Segment (Actions)', signature: signBody('s3cret', one) });
    const batch = Buffer.from('[{"event":"A","n":1},{"event":"B","n":2}]');
    expect(currentActionsRequest('s3cret', batch, true).signature).toBe(signBody('s3cret', '{"event":"A","n":1}'));
    expect(currentActionsRequest('s3cret', batch, true).signature).not.toBe(signBody('s3cret', batch));
    expect(currentActionsRequest(undefined, one, false).signature).toBeNull();
    expect(currentActionsRequest('s3cret', Buffer.alloc(0), false).signature).toBeNull();
  });
});
