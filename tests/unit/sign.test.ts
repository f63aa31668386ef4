import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { signBody } from '../../src/main/engine/dispatcher/sign';
import { currentRequest } from '../../src/main/engine/dispatcher/request-headers';
import { buildRequestHeaders } from '../../src/shared/webhook-request';

interface Vector { name: string; secret: string; body: string; signature: string | null }
const vectors: { description: string; cases: Vector[] } = JSON.parse(
  readFileSync(new URL('../fixtures/signature-vectors.json', import.meta.url), 'utf8'),
);

describe('signBody', () => {
  it('has vectors covering non-ASCII bodies and the empty-secret decision', () => {
    expect(vectors.description).toMatch(/openssl dgst -sha1 -hmac/);
    expect(vectors.cases.length).toBeGreaterThanOrEqual(4);
    expect(vectors.cases.some((c) => /[^\x00-\x7f]/.test(c.body))).toBe(true);
    expect(vectors.cases.some((c) => c.secret === '' && c.signature === null)).toBe(true);
  });

  for (const v of vectors.cases.filter((c) => c.signature !== null)) {
    it(`matches openssl: ${v.name}`, () => {
      expect(signBody(v.secret, v.body)).toBe(v.signature);
      expect(signBody(v.secret, Buffer.from(v.body, 'utf8'))).toBe(v.signature);
    });
  }

  for (const v of vectors.cases) {
    it(`request headers carry the vector's signature: ${v.name}`, () => {
      const body = Buffer.from(v.body, 'utf8');
      const { signature, userAgent } = currentRequest('Segment.io', v.secret, body);
      const headers = buildRequestHeaders({ userAgent, signature, urlHeaders: {}, body });
      expect(signature).toBe(v.signature);
      expect(headers['X-Signature']).toBe(v.signature ?? undefined);
    });
  }

  it('signs bytes, not characters: a latin1 re-encoding of the same text does not verify', () => {
    const text = '{"event":"Café"}';
    expect(signBody('k', Buffer.from(text, 'latin1'))).not.toBe(signBody('k', text));
  });
});
