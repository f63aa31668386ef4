import { describe, expect, it } from 'vitest';
import { headerValue } from '../../src/shared/header-value';

describe('headerValue', () => {
  it('finds a header whatever the case of its key, and says undefined for one absent', () => {
    const headers = { 'Content-Type': 'text/plain', 'x-request-id': 'r1' };
    expect(headerValue(headers, 'content-type')).toBe('text/plain');
    expect(headerValue(headers, 'x-request-id')).toBe('r1');
    expect(headerValue(headers, 'location')).toBeUndefined();
  });

  it("reads Node's null-prototype header maps, and never a name inherited from Object.prototype", () => {
    const node = Object.assign(Object.create(null) as Record<string, string>, { 'webhook-id': 'msg_1' });
    expect(headerValue(node, 'webhook-id')).toBe('msg_1');
    expect(headerValue({}, 'constructor')).toBeUndefined();
    expect(headerValue({}, 'tostring')).toBeUndefined();
  });
});
