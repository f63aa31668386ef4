import { describe, expect, it } from 'vitest';
import { failureFacts } from '../../src/main/engine/dispatcher/send-errors';
import { attemptTimeout, explainAttempt, outcomeLabel } from '../../src/renderer/features/inspector/explain';
import { tlsKind } from '../../src/shared/tls-codes';
import { connectCodeText, isConnectCode } from '../../src/shared/connect-codes';
import type { Attempt } from '../../src/shared/types';

// Issue 27: facts on the attempt. The dispatcher records how an attempt failed (timeoutMs, tlsError
// with its kind, connectError) by the shared code tables, and the inspector explains the attempt from
// those fields, never from its message text.

const base: Attempt = {
  id: 1, deliveryId: 1, round: 1, urlIndex: 0, url: 'http://x/', method: 'POST', trigger: 'scheduled', startedAt: '2026-01-01T00:00:00.000Z', durationMs: 1,
  requestHeaders: {}, requestBody: '{}', signature: null, responseStatus: null, responseHeaders: null, responseBody: null, responseTruncated: false,
  errorCode: null, errorMessage: null, timedOut: false, timeoutMs: null, tlsError: null, connectError: null, outcome: 'retryable', timing: null,
};

describe('the dispatcher records the facts', () => {
  it('a timeout: the limit it hit', () => {
    expect(failureFacts({ status: null, errorCode: 'TIMEOUT', timedOut: true, tlsError: false }, 300)).toEqual({ timeoutMs: 300, tlsError: null, connectError: null });
  });
  it('a TLS error: its code and kind from the shared table', () => {
    expect(failureFacts({ status: null, errorCode: 'DEPTH_ZERO_SELF_SIGNED_CERT', timedOut: false, tlsError: true }, 5000)).toEqual({
      timeoutMs: null, tlsError: { code: 'DEPTH_ZERO_SELF_SIGNED_CERT', kind: 'self_signed' }, connectError: null,
    });
  });
  it('a connection error before any response, and not one after the answer began', () => {
    expect(failureFacts({ status: null, errorCode: 'ECONNREFUSED', timedOut: false, tlsError: false }, 5000).connectError).toEqual({ code: 'ECONNREFUSED' });
    expect(failureFacts({ status: null, errorCode: 'ECONNRESET', timedOut: false, tlsError: false }, 5000).connectError).toEqual({ code: 'ECONNRESET' });
    expect(failureFacts({ status: 200, errorCode: 'ECONNRESET', timedOut: false, tlsError: false }, 5000).connectError).toBeNull();
    expect(failureFacts({ status: null, errorCode: 'INVALID_URL', timedOut: false, tlsError: false }, 5000).connectError).toBeNull();
    expect(failureFacts({ status: 503, errorCode: null, timedOut: false, tlsError: false }, 5000)).toEqual({ timeoutMs: null, tlsError: null, connectError: null });
  });
});

describe('the shared tables', () => {
  it('TLS kinds', () => {
    expect(tlsKind('DEPTH_ZERO_SELF_SIGNED_CERT')).toBe('self_signed');
    expect(tlsKind('SELF_SIGNED_CERT_IN_CHAIN')).toBe('self_signed');
    expect(tlsKind('CERT_HAS_EXPIRED')).toBe('expired');
    expect(tlsKind('ERR_TLS_CERT_ALTNAME_INVALID')).toBe('hostname_mismatch');
    expect(tlsKind('UNABLE_TO_GET_ISSUER_CERT_LOCALLY')).toBe('untrusted_ca');
    expect(tlsKind('ERR_SSL_WRONG_VERSION_NUMBER')).toBe('not_tls');
    expect(tlsKind('ERR_TLS_SOMETHING_NEW')).toBe('other');
    expect(tlsKind('ECONNREFUSED')).toBeNull();
    expect(tlsKind(null)).toBeNull();
  });
  it('connection codes', () => {
    for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'ECONNRESET', 'UND_ERR_SOCKET', 'EHOSTUNREACH']) expect(isConnectCode(code)).toBe(true);
    for (const code of ['TIMEOUT', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'INVALID_URL']) expect(isConnectCode(code)).toBe(false);
    expect(connectCodeText('ENOTFOUND')).toContain('DNS');
  });
});

describe('the inspector explains the attempt from its fields', () => {
  it('a timeout names the limit the attempt recorded, whatever its message says', () => {
    const a = { ...base, timedOut: true, timeoutMs: 300, errorCode: 'TIMEOUT', errorMessage: 'timed out after 5000 ms' };
    expect(explainAttempt(a)).toMatch(/^No answer within 300 ms: .* within 300 ms of the request\. Retried on the schedule\.$/);
    expect(attemptTimeout(a)).toBe('300 ms');
    expect(attemptTimeout({ timeoutMs: 10000 })).toBe('10 s');
    expect(outcomeLabel(a)).toBe('timed out');
  });
  it('a timeout whose limit was not recorded says so, without guessing 5 s', () => {
    expect(explainAttempt({ ...base, timedOut: true, errorMessage: 'timed out after 5000 ms' })).toMatch(/^No answer within the time limit: /);
  });
  it('a TLS error from tlsError; a TLS-looking code without the fact is not called one', () => {
    const tls = { ...base, outcome: 'failed' as const, errorCode: 'CERT_HAS_EXPIRED', tlsError: { code: 'CERT_HAS_EXPIRED', kind: 'expired' as const } };
    expect(explainAttempt(tls)).toBe(
      'TLS error (CERT_HAS_EXPIRED): the receiver’s certificate has expired. No HTTP request was sent. TLS errors are not retried; use a certificate the system trusts, or http: for local testing.',
    );
    expect(explainAttempt({ ...tls, tlsError: null, errorMessage: 'something else' })).toBe('something else (CERT_HAS_EXPIRED).');
  });
  it('a connection error from connectError; the same code after the answer began is the message', () => {
    const refused = { ...base, errorCode: 'ECONNREFUSED', errorMessage: 'connection refused', connectError: { code: 'ECONNREFUSED' } };
    expect(explainAttempt(refused)).toBe('connection refused: nothing is listening at that host and port (ECONNREFUSED). Retried on the schedule.');
    const broke = { ...base, errorCode: 'ECONNRESET', errorMessage: 'connection reset by the receiver', responseStatus: 200 };
    expect(explainAttempt(broke)).toBe('connection reset by the receiver (ECONNRESET).');
  });
});
