import { describe, expect, it } from 'vitest';
import { api } from '../../src/shared/api.contract';

// A number in a path or query arrives as text and is read as decimal digits (query-int.ts); a missing or non-numeric one used to
// be refused as "expected number, received NaN" (MCP get_call {} said so), which names no fix.
describe('whole-number parameters of the control API contract', () => {
  const messages = (input: unknown) => {
    const r = api.getMessage.input.safeParse(input);
    return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };

  it('say a whole number is wanted when it is missing or not a number, never NaN', () => {
    for (const input of [{}, { id: undefined }, { id: 'abc' }, { id: '12abc' }]) {
      const said = messages(input);
      expect(said, JSON.stringify(input)).toEqual(['id: expected a whole number']);
    }
  });

  it('take text only as decimal digits: hex, exponents, signs, spaces and a trailing dot do not open another call', () => {
    for (const id of ['0x10', '1e3', '+5', ' 5', '5.', '0b11', '0o7']) {
      expect(messages({ id }), id).toEqual([`id: expected a whole number in decimal digits, got "${id}"`]);
    }
    for (const id of ['1.5', '']) expect(messages({ id }), id).toHaveLength(1);
    expect(messages({ id: '05' })).toEqual([]);
    // Once, not once per rule it breaks.
    expect(messages({ id: '99999999999999999999' })).toEqual([expect.stringMatching(/^id: Too big: .*<=9007199254740991$/)]);
    expect(messages({ id: '9'.repeat(400) })).toEqual([expect.stringMatching(/^id: Too big: /)]);
    expect(api.getMessage.input.parse({ id: '42' })).toEqual({ id: 42 });
  });

  it('keep their bounds and accept text or numbers', () => {
    expect(messages({ id: '0' })).toEqual([expect.stringMatching(/^id: .*>=1/)]);
    expect(messages({ id: 1.5 })).toHaveLength(1);
    expect(messages({ id: '7' })).toEqual([]);
    expect(messages({ id: 7 })).toEqual([]);
  });
});
