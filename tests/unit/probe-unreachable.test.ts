import { describe, expect, it } from 'vitest';
import type { SendResult } from '../../src/main/engine/dispatcher/http-sender';
import { unreachable } from '../../src/main/engine/probe/probe-runner';

// Issue 44: "nothing listening" (exit 4) is told by what the connection did, never by how long it
// took: on a slow machine a refusal can be read after the attempt's deadline, and a connect that never
// completes is a timeout with no connection. Either way no connection was made.

const base: SendResult = {
  startedAt: 0, durationMs: 0, status: null, responseHeaders: null, responseBody: null, responseTruncated: false,
  errorCode: null, errorMessage: null, timedOut: false, tlsError: false, timing: null,
};
const connected = { connectMs: 1, tlsMs: null, ttfbMs: null, totalMs: 5000, reused: false };

describe('the probe: could the receiver be reached?', () => {
  it.each([
    ['refused', { errorCode: 'ECONNREFUSED' }, true],
    ['no such host', { errorCode: 'ENOTFOUND' }, true],
    ['timed out before any connection was made', { errorCode: 'TIMEOUT', timedOut: true }, true],
    ['connected, then no answer in time', { errorCode: 'TIMEOUT', timedOut: true, timing: connected }, false],
    ['connected, then reset', { errorCode: 'ECONNRESET', timing: connected }, false],
    ['answered 500', { status: 500, timing: connected }, false],
    ['answered 200', { status: 200, timing: connected }, false],
  ] as const)('%s → unreachable: %s', (_name, result, expected) => {
    expect(unreachable({ result: { ...base, ...result } as SendResult })).toBe(expected);
  });
});
