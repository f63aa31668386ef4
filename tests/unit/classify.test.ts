import { describe, expect, it } from 'vitest';
import { classify, parseRetryAfter } from '../../src/main/engine/dispatcher/classify';
import type { SendResult } from '../../src/main/engine/dispatcher/http-sender';
import { sendingRules } from '../../src/main/engine/dispatcher/round';
import { resolveRetrySchedule } from '../../src/shared/retry-schedule';
import type { Settings } from '../../src/shared/types';

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

describe('classify by retry rule', () => {
  // Written out from the rules' words (issue 17, SPEC §4), not derived from retry-classes.ts:
  // Classic retries 408, 429 and every 5xx; Actions 408, 423, 429 and every 5xx but 501.
  const table: [status: number, classic: 'retryable' | 'failed' | 'success', actions: 'retryable' | 'failed' | 'success'][] = [
    [200, 'success', 'success'],
    [204, 'success', 'success'],
    [207, 'success', 'success'],
    [301, 'failed', 'failed'],
    [304, 'failed', 'failed'],
    [400, 'failed', 'failed'],
    [401, 'failed', 'failed'],
    [404, 'failed', 'failed'],
    [408, 'retryable', 'retryable'],
    [409, 'failed', 'failed'],
    [410, 'failed', 'failed'],
    [413, 'failed', 'failed'],
    [422, 'failed', 'failed'],
    [423, 'failed', 'retryable'],
    [425, 'failed', 'failed'],
    [429, 'retryable', 'retryable'],
    [451, 'failed', 'failed'],
    [500, 'retryable', 'retryable'],
    [501, 'retryable', 'failed'],
    [502, 'retryable', 'retryable'],
    [503, 'retryable', 'retryable'],
    [504, 'retryable', 'retryable'],
    [505, 'retryable', 'retryable'],
    [511, 'retryable', 'retryable'],
    [599, 'retryable', 'retryable'],
  ];

  it.each(table)('HTTP %i: classic %s, actions %s', (status, classic, actions) => {
    expect(classify(response(status), NOW, 'classic').outcome).toBe(classic);
    expect(classify(response(status), NOW, 'actions').outcome).toBe(actions);
  });

  it('the rule defaults to classic: today\'s behaviour unchanged', () => {
    for (const [status] of table) expect(classify(response(status), NOW)).toEqual(classify(response(status), NOW, 'classic'));
  });

  it('says why a 501 is not retried under Actions, and keeps the 4xx wording for 423 under Classic', () => {
    expect(classify(response(501), NOW, 'actions')).toEqual({ outcome: 'failed', reason: "discarded: HTTP 501 is not retried by Actions' retry classes" });
    expect(classify(response(423), NOW, 'classic')).toEqual({ outcome: 'failed', reason: 'discarded: 4xx (HTTP 423)' });
    expect(classify(response(423), NOW, 'actions')).toEqual({ outcome: 'retryable', reason: 'HTTP 423' });
  });

  it('Retry-After on 429 and 503 counts under both rules', () => {
    for (const rule of ['classic', 'actions'] as const) {
      expect(classify(response(429, { 'retry-after': '4' }), NOW, rule).retryAfterMs).toBe(4000);
      expect(classify(response(503, { 'retry-after': '2' }), NOW, rule).retryAfterMs).toBe(2000);
      expect(classify(response(423, { 'retry-after': '2' }), NOW, rule).retryAfterMs).toBeUndefined();
    }
  });

  it('timeouts and connection errors are retried, TLS errors and unsent requests are not, under both rules', () => {
    for (const rule of ['classic', 'actions'] as const) {
      expect(classify(failure('TIMEOUT', 'timed out after 10000 ms', { timedOut: true }), NOW, rule)).toEqual({ outcome: 'retryable', reason: 'timed out after 10000 ms' });
      expect(classify(failure('ECONNREFUSED', 'connection refused'), NOW, rule).outcome).toBe('retryable');
      expect(classify(failure('CERT_HAS_EXPIRED', 'TLS: expired', { tlsError: true }), NOW, rule).outcome).toBe('failed');
      expect(classify(failure('ERR_INVALID_URL', 'bad'), NOW, rule).outcome).toBe('failed');
    }
  });
});

describe('sendingRules: the timeout and rule a delivery is sent under', () => {
  const under = (preset: string, stored?: Partial<Settings['retrySchedule']>) =>
    ({ retrySchedule: stored ? { preset, delaysMs: [5000], jitter: 0, windowMs: 1, ...stored } : resolveRetrySchedule({ preset }) }) as Settings;

  it('Actions deliveries: 10 s and Actions\' classes whatever the preset', () => {
    for (const preset of ['default', 'svix', 'fast', 'actions']) {
      expect(sendingRules({ kind: 'actions', timeoutMs: null }, under(preset))).toEqual({ timeoutMs: 10_000, rule: 'actions' });
    }
    expect(sendingRules({ kind: 'actions', timeoutMs: 10_000 }, under('fast'))).toEqual({ timeoutMs: 10_000, rule: 'actions' });
  });

  it('Classic deliveries: the schedule\'s (5 s classic, or 10 s actions under the actions preset); settings saved before the fields are 5 s classic', () => {
    expect(sendingRules({ kind: 'classic', timeoutMs: null }, under('default'))).toEqual({ timeoutMs: 5000, rule: 'classic' });
    expect(sendingRules({ kind: 'classic', timeoutMs: null }, under('actions'))).toEqual({ timeoutMs: 10_000, rule: 'actions' });
    expect(sendingRules({ kind: 'classic', timeoutMs: null }, under('default', {}))).toEqual({ timeoutMs: 5000, rule: 'classic' });
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
