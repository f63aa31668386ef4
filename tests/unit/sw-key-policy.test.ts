import { describe, expect, it } from 'vitest';
import { refuseShortNewKey, shortKeyWarnings } from '../../src/main/engine/sw-key-policy';
import { secretProblem, shortKeyWarning } from '../../src/shared/standard-webhooks';

const key = (n: number) => `whsec_${Buffer.alloc(n, 1).toString('base64')}`;

describe('Standard Webhooks key length (24 to 64 bytes for new keys)', () => {
  it('1 to 23 bytes still sign (no problem) but carry a warning; 24 to 64 none', () => {
    for (const n of [1, 5, 23]) {
      expect(secretProblem(key(n))).toBeNull();
      expect(shortKeyWarning(key(n))).toBe(`the key is ${n} bytes; the Standard Webhooks spec asks for 24 to 64 random bytes: generate a new secret (a new one this short is refused)`);
    }
    for (const n of [24, 32, 64]) expect(shortKeyWarning(key(n))).toBeNull();
    expect(shortKeyWarning('')).toBeNull();
    expect(secretProblem(key(65))).not.toBeNull();
  });

  it('a short key given anew is refused on its field; the stored one, unchanged, is kept', () => {
    let err: unknown;
    try {
      refuseShortNewKey({ standardWebhooksSecret: key(5) });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ status: 400, fields: [{ path: 'webhooks.standardWebhooksSecret', message: expect.stringContaining('the key is 5 bytes') }] });
    expect(() => refuseShortNewKey({ standardWebhooksSecret: key(5) }, { standardWebhooksSecret: key(5) })).not.toThrow();
    expect(() => refuseShortNewKey({ standardWebhooksSecret: key(6) }, { standardWebhooksSecret: key(5) })).toThrow(/the key is 6 bytes/);
    expect(() => refuseShortNewKey({ standardWebhooksSecret: key(32) })).not.toThrow();
    expect(() => refuseShortNewKey({ standardWebhooksSecret: '' })).not.toThrow();
    expect(() => refuseShortNewKey(undefined)).not.toThrow();
  });

  it('names each source whose stored key is short, for the start log', () => {
    const src = (name: string, s?: string) => ({ name, webhooks: { enabled: true, urls: [], standardWebhooksSecret: s } });
    expect(shortKeyWarnings([src('a', key(5)), src('b', key(32)), src('c')])).toEqual([
      'source "a": Standard Webhooks secret still used, but the key is 5 bytes; the Standard Webhooks spec asks for 24 to 64 random bytes: generate a new secret (a new one this short is refused)',
    ]);
  });
});
