import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { signStandardWebhook, verifyStandardWebhook } from '../../src/main/engine/dispatcher/standard-webhooks-sign';
import { signStandardWebhookWeb, verifyStandardWebhookWeb } from '../../src/shared/preview/standard-webhooks-web';
import { secretKey, secretProblem, signedContent, standardWebhooksHeaders, TOLERANCE_SECONDS } from '../../src/shared/standard-webhooks';

// The known vector (issue 17; the Standard Webhooks specification's example).
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
const TS = 1614265330;
const BODY = '{"test": 2432232314}';
const EXPECTED = 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=';
const vector = { secret: SECRET, id: ID, timestamp: TS, body: BODY };

afterEach(() => vi.useRealTimers());

describe('Standard Webhooks signing', () => {
  it('the known vector, with Node crypto and with WebCrypto', async () => {
    expect(signStandardWebhook(vector)).toBe(EXPECTED);
    expect(await signStandardWebhookWeb(vector)).toBe(EXPECTED);
  });

  it('signs id.timestamp.body with the base64-decoded key', () => {
    expect(signedContent(ID, TS, BODY)).toBe(`${ID}.${TS}.${BODY}`);
    expect(secretKey(SECRET)).toHaveLength(24);
    expect(signStandardWebhook({ ...vector, body: `${BODY} ` })).not.toBe(EXPECTED);
  });

  it('header names', () => {
    expect(standardWebhooksHeaders(ID, TS, EXPECTED)).toEqual({ 'webhook-id': ID, 'webhook-timestamp': String(TS), 'webhook-signature': EXPECTED });
  });
});

describe('secrets', () => {
  it('accepts whsec_ + base64 of 1..64 bytes', () => {
    expect(secretProblem(SECRET)).toBeNull();
    expect(secretProblem(`whsec_${btoa('k')}`)).toBeNull();
    expect(secretProblem(`whsec_${btoa('k'.repeat(64))}`)).toBeNull();
  });

  it.each([
    ['MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'must start with "whsec_"'],
    ['whsec_', 'the key is 0 bytes'],
    ['whsec_not base64!', 'is not base64'],
    ['whsec_abc', 'is not base64'],
    [`whsec_${btoa('k'.repeat(65))}`, 'the key is 65 bytes'],
  ])('%s is refused', (secret, why) => {
    expect(secretProblem(secret)).toContain(why);
    expect(secretProblem(secret)).toContain('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'); // names the expected shape
    expect(() => secretKey(secret)).toThrow();
  });
});

describe('verification', () => {
  const headers = standardWebhooksHeaders(ID, TS, EXPECTED);

  it('accepts the vector within tolerance, with both adapters', async () => {
    expect(verifyStandardWebhook({ secret: SECRET, headers, body: BODY, now: TS + 10 })).toEqual({ ok: true });
    expect(await verifyStandardWebhookWeb({ secret: SECRET, headers, body: BODY, now: TS - 10 })).toEqual({ ok: true });
  });

  it('any v1 signature of a space-separated list may match; header names in any case', () => {
    const many = { 'Webhook-Id': ID, 'WEBHOOK-TIMESTAMP': String(TS), 'webhook-signature': `v2,abc v1,AAAA ${EXPECTED}` };
    expect(verifyStandardWebhook({ secret: SECRET, headers: many, body: BODY, now: TS })).toEqual({ ok: true });
  });

  it.each([
    ['a changed body', { body: '{"test":2432232314}' }, 'no v1 signature matches'],
    ['another secret', { secret: `whsec_${btoa('other key')}` }, 'no v1 signature matches'],
    ['a timestamp too old', { now: TS + TOLERANCE_SECONDS + 1 }, '301 s old'],
    ['a timestamp too new', { now: TS - TOLERANCE_SECONDS - 1 }, '301 s in the future'],
    ['no headers', { headers: {} }, 'missing headers webhook-id, webhook-timestamp, webhook-signature'],
    ['no signature', { headers: { ...headers, 'webhook-signature': '' } }, 'missing header webhook-signature'],
    ['only other versions', { headers: { ...headers, 'webhook-signature': 'v2,abc' } }, 'no "v1,<base64>" signature'],
    ['a bad timestamp', { headers: { ...headers, 'webhook-timestamp': 'soon' } }, 'not Unix seconds'],
    ['a bad secret', { secret: 'hunter2' }, 'secret must start with "whsec_"'],
  ])('refuses %s, saying why', async (_, change, why) => {
    const input = { secret: SECRET, headers, body: BODY, now: TS, ...change };
    const r = verifyStandardWebhook(input);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toContain(why);
    expect(await verifyStandardWebhookWeb(input)).toEqual(r);
  });

  it('tolerance is 5 minutes, inclusive, as the library', () => {
    expect(verifyStandardWebhook({ secret: SECRET, headers, body: BODY, now: TS + 300 }).ok).toBe(true);
    expect(verifyStandardWebhook({ secret: SECRET, headers, body: BODY, now: TS - 300 }).ok).toBe(true);
  });
});

describe('against the standardwebhooks package', () => {
  it('our signature verifies with its Webhook.verify', async () => {
    const now = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ type: 'track', event: 'Order Completed', properties: { total: 42, note: 'é ✓' } });
    const signature = signStandardWebhook({ secret: SECRET, id: ID, timestamp: now, body });
    expect(await signStandardWebhookWeb({ secret: SECRET, id: ID, timestamp: now, body })).toBe(signature);
    const wh = new Webhook(SECRET);
    expect(wh.verify(body, standardWebhooksHeaders(ID, now, signature))).toEqual(JSON.parse(body));
    expect(() => wh.verify(`${body} `, standardWebhooksHeaders(ID, now, signature))).toThrow();
  });

  it('the vector verifies with it at the vector time', () => {
    vi.useFakeTimers({ now: TS * 1000 });
    expect(new Webhook(SECRET).verify(BODY, standardWebhooksHeaders(ID, TS, EXPECTED))).toEqual({ test: 2432232314 });
  });

  it('a header it signs verifies with ours', async () => {
    const secret = `whsec_${btoa(String.fromCharCode(...Array.from({ length: 32 }, (_, i) => (i * 37 + 11) % 256)))}`;
    const now = Math.floor(Date.now() / 1000);
    const body = '{"hello":"wörld"}';
    const signature = new Webhook(secret).sign('msg_1', new Date(now * 1000), body);
    const headers = standardWebhooksHeaders('msg_1', now, signature);
    expect(verifyStandardWebhook({ secret, headers, body, now })).toEqual({ ok: true });
    expect(await verifyStandardWebhookWeb({ secret, headers, body, now })).toEqual({ ok: true });
    expect(signStandardWebhook({ secret, id: 'msg_1', timestamp: now, body })).toBe(signature);
  });
});
