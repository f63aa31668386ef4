import { describe, expect, it } from 'vitest';
import { signBody } from '../../src/main/engine/dispatcher/sign';
import { SignatureVerifier, StandardWebhooksVerifier, checkSignature, checkStandardWebhooks } from '../../src/main/engine/simulation/mock-receivers/signature-check';
import { signStandardWebhook } from '../../src/main/engine/dispatcher/standard-webhooks-sign';

describe('signature check', () => {
  it('computes lowercase hex HMAC-SHA1 (RFC 2104 / Wikipedia vector)', () => {
    expect(signBody('key', 'The quick brown fox jumps over the lazy dog')).toBe('de7c9b85b8b78aa6bc8a7a36f70a90701c9db4d9');
  });

  const body = '{"type":"track","event":"Order Completed"}';
  const good = signBody('s3cret', body);

  it('valid, invalid with both digests, missing, not checked', () => {
    expect(checkSignature('s3cret', body, good)).toEqual({ state: 'valid', received: good, expected: good, reason: null });
    const bad = checkSignature('s3cret', body, signBody('other', body));
    expect(bad.state).toBe('invalid');
    expect(bad.expected).toBe(good);
    expect(bad.reason).toContain(good);
    expect(bad.reason).toContain(signBody('other', body));
    expect(checkSignature('s3cret', body, undefined)).toMatchObject({ state: 'missing', received: null, expected: good });
    expect(checkSignature(undefined, body, good)).toEqual({ state: 'not_checked', received: good, expected: null, reason: null });
    expect(checkSignature('s3cret', body, '')).toMatchObject({ state: 'invalid', reason: 'X-Signature is empty' });
  });

  it('a digest of a re-serialized body is invalid: the bytes are what is signed', () => {
    const pretty = JSON.stringify(JSON.parse(body), null, 2);
    expect(checkSignature('s3cret', body, signBody('s3cret', pretty)).state).toBe('invalid');
  });

  it('flags an uppercase digest, which byte-for-byte receivers reject', () => {
    expect(checkSignature('s3cret', body, good.toUpperCase())).toMatchObject({ state: 'invalid', reason: 'digest matches but is not lowercase hex' });
  });

  it('streams: chunks give the same digest as the whole body, over raw bytes', () => {
    const bytes = Buffer.from('{"name":"Zoë ☃"}');
    const v = new SignatureVerifier('k');
    for (let i = 0; i < bytes.length; i += 3) v.update(bytes.subarray(i, i + 3));
    expect(v.result(signBody('k', bytes)).state).toBe('valid');
  });
});

describe('Standard Webhooks check', () => {
  const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const body = '{"type":"track","event":"Order Completed"}';
  const ts = 1_772_000_000;
  const signed = (o: { secret?: string; id?: string; timestamp?: number; body?: string } = {}) => {
    const id = o.id ?? 'msg_1';
    const timestamp = o.timestamp ?? ts;
    const sig = signStandardWebhook({ secret: o.secret ?? SECRET, id, timestamp, body: o.body ?? body });
    return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': sig };
  };

  it('valid: the headers the dispatcher sends, checked over the raw body; the same vector as the reference', () => {
    const headers = signed();
    expect(checkStandardWebhooks(SECRET, headers, body, ts + 10)).toEqual({
      state: 'valid', id: 'msg_1', timestamp: String(ts), received: headers['webhook-signature'], expected: headers['webhook-signature'], reason: null,
    });
    const vector = { 'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek', 'webhook-timestamp': '1614265330', 'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=' };
    expect(checkStandardWebhooks(SECRET, vector, '{"test": 2432232314}', 1614265330).state).toBe('valid');
    // Any one of several space-separated signatures may match (secret rotation).
    const two = { ...headers, 'webhook-signature': `v1,AAAA ${headers['webhook-signature']}` };
    expect(checkStandardWebhooks(SECRET, two, body, ts).state).toBe('valid');
  });

  it('streams: chunks give the same answer as the whole body', () => {
    const v = new StandardWebhooksVerifier(SECRET, signed(), ts);
    for (const part of [body.slice(0, 7), body.slice(7, 20), body.slice(20)]) v.update(Buffer.from(part));
    expect(v.result().state).toBe('valid');
  });

  it('invalid, with why: another secret, a re-serialized body, a stale or future timestamp, no v1', () => {
    const other = checkStandardWebhooks(SECRET, signed({ secret: 'whsec_' + Buffer.from('another key').toString('base64') }), body, ts);
    expect(other).toMatchObject({ state: 'invalid', reason: expect.stringMatching(/no v1 signature matches: wrong secret/) });
    expect(other.expected).toBe(signed()['webhook-signature']);
    const pretty = JSON.stringify(JSON.parse(body), null, 2);
    expect(checkStandardWebhooks(SECRET, signed(), pretty, ts)).toMatchObject({ state: 'invalid', reason: expect.stringMatching(/body was changed/) });
    expect(checkStandardWebhooks(SECRET, signed(), body, ts + 301)).toMatchObject({ state: 'invalid', reason: expect.stringMatching(/301 s old/) });
    // The expected signature is still shown for a stale timestamp: the bytes were right, the time was not.
    expect(checkStandardWebhooks(SECRET, signed(), body, ts + 301).expected).toBe(signed()['webhook-signature']);
    expect(checkStandardWebhooks(SECRET, signed(), body, ts - 400)).toMatchObject({ state: 'invalid', reason: expect.stringMatching(/in the future/) });
    expect(checkStandardWebhooks(SECRET, { ...signed(), 'webhook-signature': 'v2,abc' }, body, ts)).toMatchObject({ state: 'invalid', reason: expect.stringMatching(/no "v1,<base64>"/) });
  });

  it('missing when none of the three headers came; invalid naming the ones absent otherwise', () => {
    expect(checkStandardWebhooks(SECRET, { 'x-signature': 'abc' }, body, ts)).toMatchObject({ state: 'missing', id: null, timestamp: null, received: null, expected: null });
    const { 'webhook-signature': _sig, ...noSig } = signed();
    expect(checkStandardWebhooks(SECRET, noSig, body, ts)).toMatchObject({ state: 'invalid', reason: 'missing header webhook-signature', expected: signed()['webhook-signature'] });
  });

  it('not checked without a secret; the received headers are still shown', () => {
    expect(checkStandardWebhooks(undefined, signed(), body, ts)).toMatchObject({ state: 'not_checked', id: 'msg_1', received: signed()['webhook-signature'], expected: null, reason: null });
  });
});
