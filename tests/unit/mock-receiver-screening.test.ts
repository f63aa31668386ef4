import { describe, expect, it } from 'vitest';
import { screenRequest, screens, SEEN_MESSAGE_IDS } from '../../src/main/engine/simulation/mock-receivers/screening';

const body = (o: unknown) => Buffer.from(JSON.stringify(o));

describe('mock receiver screening (enforceSignature, knownTypes, rejectDuplicates)', () => {
  it('only a behaviour with one of them reads the body', () => {
    expect(screens({})).toBe(false);
    expect(screens({ status: 500 })).toBe(false);
    expect(screens({ enforceSignature: true })).toBe(true);
    expect(screens({ knownTypes: ['track'] })).toBe(true);
  });

  it('refuses in order: signature (401), type (400), duplicate (409)', () => {
    const seen = new Set<string>();
    const b = { enforceSignature: true, knownTypes: ['track'], rejectDuplicates: true };
    expect(screenRequest(b, seen, body({ type: 'screen', messageId: 'm' }), 'no X-Signature header')).toEqual({ status: 401, error: 'signature refused: no X-Signature header' });
    expect(screenRequest(b, seen, body({ type: 'screen', messageId: 'm' }), null)?.status).toBe(400);
    expect(screenRequest(b, seen, Buffer.from('not json'), null)?.error).toBe('unknown type: none (this receiver knows track)');
    expect(screenRequest(b, seen, body({ type: 'track', messageId: 'm' }), null)).toBeNull();
    expect(screenRequest(b, seen, body({ type: 'track', messageId: 'm' }), null)).toEqual({ status: 409, error: 'duplicate: messageId m was already received' });
    // A refused call is not remembered as accepted.
    expect(seen.has('x')).toBe(false);
    screenRequest(b, seen, body({ type: 'screen', messageId: 'x' }), null);
    expect(seen.has('x')).toBe(false);
  });

  it('remembers at most SEEN_MESSAGE_IDS accepted ids, forgetting the oldest', () => {
    const seen = new Set<string>();
    for (let i = 0; i <= SEEN_MESSAGE_IDS; i++) screenRequest({ rejectDuplicates: true }, seen, body({ messageId: `m${i}` }), null);
    expect(seen.size).toBe(SEEN_MESSAGE_IDS);
    expect(screenRequest({ rejectDuplicates: true }, seen, body({ messageId: 'm0' }), null)).toBeNull();
  });
});
