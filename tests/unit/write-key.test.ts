import { describe, expect, it } from 'vitest';
import { findWriteKey } from '../../src/main/engine/collector/write-key';

// SPEC §3's two ways to give the write key; the Authorization headers read lately are remembered
// (write-key.ts), which must never change an answer.

const basic = (user: string, scheme = 'Basic') => `${scheme} ${Buffer.from(user).toString('base64')}`;

describe('findWriteKey', () => {
  it('reads the Basic user name, with or without the colon and password, in any letter case of the scheme', () => {
    expect(findWriteKey(basic('wk_a:'), {})).toEqual({ key: 'wk_a', from: 'basic' });
    expect(findWriteKey(basic('wk_a'), {})).toEqual({ key: 'wk_a', from: 'basic' });
    expect(findWriteKey(basic('wk_a:secret', 'basic'), {})).toEqual({ key: 'wk_a', from: 'basic' });
    expect(findWriteKey(`BASIC   ${Buffer.from('wk_a:').toString('base64')}  `, {})).toEqual({ key: 'wk_a', from: 'basic' });
  });

  it('takes the body key when the header is another scheme or names nobody, and gives the same answer the second time', () => {
    for (let round = 0; round < 2; round++) {
      expect(findWriteKey('Bearer wk_b', { writeKey: 'wk_body' })).toEqual({ key: 'wk_body', from: 'body' });
      expect(findWriteKey(basic(':pw'), { writeKey: 'wk_body' })).toEqual({ key: 'wk_body', from: 'body' });
      expect(findWriteKey(basic(':pw'), {})).toBeNull();
      expect(findWriteKey('Bearer wk_b', {})).toBeNull();
    }
  });

  it('answers each header for itself past the headers it remembers, and for headers too long to remember', () => {
    for (let i = 0; i < 1000; i++) expect(findWriteKey(basic(`wk_${i}:`), {})?.key).toBe(`wk_${i}`);
    for (let i = 0; i < 1000; i += 97) expect(findWriteKey(basic(`wk_${i}:`), {})?.key).toBe(`wk_${i}`);
    const long = `wk_${'x'.repeat(2000)}`;
    expect(findWriteKey(basic(`${long}:`), {})?.key).toBe(long);
    expect(findWriteKey(basic(`${long}:`), {})?.key).toBe(long);
  });
});
