import { describe, expect, it } from 'vitest';
import { signBody } from '../../src/main/engine/dispatcher/sign';
import { SignatureVerifier, checkSignature } from '../../src/main/engine/simulation/mock-receivers/signature-check';

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
