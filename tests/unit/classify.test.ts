import { describe, expect, it } from 'vitest';
import { classify, parseRetryAfter } from '../../src/main/engine/dispatcher/classify';
import type { SendResult } from '../../src/main/engine/dispatcher/http-sender';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');

function response(status: number, headers: Record<string, string> = {}): SendResult {
  return {
    startedAt: NOW, durationMs: 12, status, responseHeaders: headers, responseBody: '', responseTruncated: false,
    errorCode: null, errorMessage: null, timedOut: false, tlsError: false, timing: null,
  };
}

function failure(errorCode: string, errorMessage: string, extra: Partial<SendResult> = {}): SendResult {
  return { ...response(0), status: null, responseHeaders: null, responseBody: null, errorCode, errorMessage, ...extra };
}

describe('classify', () => {
  it.each([200, 201, 204, 299])('%i is success', (s) => {
    expect(classify(response(s), NOW)).toEqual({ outcome: 'success', reason: `HTTP ${s}` });
  });

  it.each([500, 502, 503, 504, 599, 408, 429])('%i is retryable', (s) => {
    const c = classify(response(s), NOW);
    expect(c.outcome).toBe('retryable');
    expect(c.reason).toBe(`HTTP ${s}`);
    expect(c.retryAfterMs).toBeUndefined();
  });

  it.each([400, 401, 403, 404, 410, 422])('%i is failed and discarded', (s) => {
    expect(classify(response(s), NOW)).toEqual({ outcome: 'failed', reason: `discarded: 4xx (HTTP ${s})` });
  });

  it('3xx is failed, naming the Location it did not follow', () => {
    expect(classify(response(302, { location: 'http://127.0.0.1:1/elsewhere' }), NOW)).toEqual({
      outcome: 'failed', reason: 'HTTP 302: redirect not followed to http://127.0.0.1:1/elsewhere',
    });
    expect(classify(response(301, { Location: '/moved' }), NOW).reason).toBe('HTTP 301: redirect not followed to /moved');
    expect(classify(response(307), NOW)).toEqual({ outcome: 'failed', reason: 'HTTP 307: redirect not followed (no Location)' });
  });

  it('429 honours Retry-After in delta seconds', () => {
    const c = classify(response(429, { 'retry-after': '7' }), NOW);
    expect(c).toEqual({ outcome: 'retryable', reason: 'HTTP 429, Retry-After 7000 ms', retryAfterMs: 7000 });
  });

  it('429 honours Retry-After as an HTTP date, relative to now', () => {
    const c = classify(response(429, { 'retry-after': 'Sun, 01 Mar 2026 12:02:30 GMT' }), NOW);
    expect(c.retryAfterMs).toBe(150_000);
    expect(classify(response(429, { 'retry-after': 'Sun, 01 Mar 2026 11:00:00 GMT' }), NOW).retryAfterMs).toBe(0);
  });

  it('503 may carry Retry-After too; other statuses ignore it', () => {
    expect(classify(response(503, { 'retry-after': '3' }), NOW).retryAfterMs).toBe(3000);
    expect(classify(response(500, { 'retry-after': '3' }), NOW).retryAfterMs).toBeUndefined();
  });

  it('an unusable Retry-After is left out, the attempt stays retryable', () => {
    for (const v of ['soon', '-5', '1.5', '', '2026-03-01T12:00:10Z']) {
      const c = classify(response(429, { 'retry-after': v }), NOW);
      expect(c.outcome).toBe('retryable');
      expect(c.retryAfterMs).toBeUndefined();
    }
  });

  it('timeouts are retryable with the recorded message, even after a status line', () => {
    const r = failure('TIMEOUT', 'timed out after 5000 ms', { timedOut: true });
    expect(classify(r, NOW)).toEqual({ outcome: 'retryable', reason: 'timed out after 5000 ms' });
    expect(classify({ ...r, status: 200, responseHeaders: {} }, NOW).outcome).toBe('retryable');
  });

  it.each([
    ['ECONNREFUSED', 'connection refused'],
    ['ECONNRESET', 'connection reset by the receiver'],
    ['UND_ERR_SOCKET', 'socket closed by the receiver before the response was complete'],
    ['ENOTFOUND', 'DNS: host not found (nope.invalid)'],
    ['EAI_AGAIN', 'DNS: temporary lookup failure'],
    ['UND_ERR_CONNECT_TIMEOUT', 'connect timed out'],
  ])('connection error %s is retryable', (code, message) => {
    expect(classify(failure(code, message), NOW)).toEqual({ outcome: 'retryable', reason: message });
  });

  it('a reset after a 200 status line is retryable: the answer never completed', () => {
    const r = { ...failure('ECONNRESET', 'connection reset by the receiver'), status: 200, responseHeaders: {} };
    expect(classify(r, NOW).outcome).toBe('retryable');
  });

  it('TLS errors are failed, not retried', () => {
    const r = failure('DEPTH_ZERO_SELF_SIGNED_CERT', 'TLS: self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT)', { tlsError: true });
    const c = classify(r, NOW);
    expect(c.outcome).toBe('failed');
    expect(c.reason).toContain('DEPTH_ZERO_SELF_SIGNED_CERT');
  });

  it('a request that could not be built is failed, since a retry would fail the same way', () => {
    expect(classify(failure('UND_ERR_INVALID_ARG', 'invalid x-env header'), NOW)).toEqual({
      outcome: 'failed', reason: 'request not sent: invalid x-env header',
    });
  });
});

describe('parseRetryAfter', () => {
  it('reads delta seconds and HTTP dates (IMF-fixdate and the obsolete forms)', () => {
    expect(parseRetryAfter('0', NOW)).toBe(0);
    expect(parseRetryAfter(' 120 ', NOW)).toBe(120_000);
    expect(parseRetryAfter('Sun, 01 Mar 2026 12:00:10 GMT', NOW)).toBe(10_000);
    expect(parseRetryAfter('Sunday, 01-Mar-26 12:00:10 GMT', NOW)).toBe(10_000);
    expect(parseRetryAfter('Sun Mar  1 12:00:10 2026', NOW)).toBe(10_000);
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
  });
});
