import { describe, expect, it } from 'vitest';
import { cutText, MAX_TEXT_CHARS, redact, redactText } from '../../src/main/mcp/redact';
import { explainCall } from '../../src/main/mcp/explain';
import { inToolWords } from '../../src/main/mcp/tool-kit';
import { ATTEMPTS_PER_URL, attemptsCutText, boundAttempts, DETAIL_BUDGET_CHARS, fitAttempts, fitDetail, OLDER_BODY_CHARS } from '../../src/main/mcp/attempts-shown';
import type { Attempt, CallDetail, Delivery } from '../../src/shared/types';

// What the MCP tools answer passes through (issue 39): redaction and the 16 KB cut, and explain_call's
// sentences from a call's facts.

describe('redact', () => {
  const token = 'tok-0123456789';
  it('masks secrets by key, URL passwords in any string, and the token always, even when secrets are shown', () => {
    const value = {
      webhooks: { sharedSecret: 's3cret', standardWebhooksSecret: 'whsec_AAAA', urls: [{ url: 'https://bob:pw@host/hook' }] },
      note: `token ${token} and http://ann:pass@127.0.0.1:9/x`,
      list: [{ secret: 'x' }],
      n: 3,
      none: null,
    };
    expect(redact(value, { showSecrets: false, token })).toEqual({
      webhooks: { sharedSecret: '****', standardWebhooksSecret: 'whsec_****', urls: [{ url: 'https://bob:****@host/hook' }] },
      note: 'token **** and http://ann:****@127.0.0.1:9/x',
      list: [{ secret: '****' }],
      n: 3,
      none: null,
    });
    const shown = redact(value, { showSecrets: true, token });
    expect(shown.webhooks).toEqual(value.webhooks);
    expect(shown.note).toBe('token **** and http://ann:pass@127.0.0.1:9/x');
  });

  it('a short token (under 8 characters) is masked where it stands alone, not inside other words (found by a review: under 4 it was not masked at all)', () => {
    const o = { showSecrets: true, token: 'ab' };
    expect(redactText('Authorization: Bearer ab; ?token=ab&x=1; "ab"', o)).toBe('Authorization: Bearer ****; ?token=****&x=1; "****"');
    expect(redactText('a label: abc, tab, cab, a.b', o)).toBe('a label: abc, tab, cab, a.b');
    expect(redactText('x', { showSecrets: true, token: 'x' })).toBe('****');
    expect(redactText('t0k3n.+*', { showSecrets: true, token: '.+*' })).toBe('t0k3n.+*');
    // Eight or more: everywhere, even inside a longer string.
    expect(redactText('zzabcdefghzz', { showSecrets: true, token: 'abcdefgh' })).toBe('zz****zz');
  });

  it('masks credential headers of receiver URLs and attempts (found by a review), keeps signatures and other headers, and leaves call data as sent', () => {
    const value = {
      urls: [{ url: 'https://h/x', headers: { Authorization: 'Bearer HEADERSECRET', 'X-Api-Key': 'k1', 'X-Env': 'qa' } }],
      attempts: [{ requestHeaders: { 'x-signature': 'abc123', cookie: 'sid=1', 'x-auth-token': 't' }, responseHeaders: { 'set-cookie': 'a=b', 'content-type': 'text/plain' } }],
      call: { properties: { token: 'in the event', password: 'as sent' } },
    };
    expect(redact(value, { showSecrets: false })).toEqual({
      urls: [{ url: 'https://h/x', headers: { Authorization: '****', 'X-Api-Key': '****', 'X-Env': 'qa' } }],
      attempts: [{ requestHeaders: { 'x-signature': 'abc123', cookie: '****', 'x-auth-token': '****' }, responseHeaders: { 'set-cookie': '****', 'content-type': 'text/plain' } }],
      call: { properties: { token: 'in the event', password: 'as sent' } },
    });
    expect(redact(value, { showSecrets: true })).toEqual(value);
  });

  it('cuts a string over 16 KB with a marker saying how much and where the whole is; shorter ones are left whole', () => {
    const exact = 'a'.repeat(MAX_TEXT_CHARS);
    expect(cutText(exact)).toBe(exact);
    const long = 'b'.repeat(MAX_TEXT_CHARS + 10);
    expect(cutText(long, 'http://127.0.0.1:1/#/inspector/7')).toBe(`${'b'.repeat(MAX_TEXT_CHARS)}… [cut: 10 more characters; the whole of it: http://127.0.0.1:1/#/inspector/7]`);
    expect(redactText(long, { showSecrets: false })).toMatch(/… \[cut: 10 more characters\]$/);
  });
});

const attempt = (a: Partial<Attempt>): Attempt => ({
  id: 1, deliveryId: 1, round: 1, urlIndex: 0, url: 'http://127.0.0.1:3000/hook', method: 'POST', trigger: 'scheduled', startedAt: '2026-01-01T00:00:00.000Z',
  durationMs: 5, requestHeaders: {}, signature: 'abc', responseStatus: 200, responseHeaders: {}, responseBody: 'ok', responseTruncated: false, errorCode: null,
  errorMessage: null, timedOut: false, timeoutMs: null, tlsError: null, connectError: null, outcome: 'success', timing: null, ...a,
});

function detail(o: { status?: 'accepted' | 'dropped' | 'blocked'; dropReason?: string | null; forwarded?: boolean; reason?: 'webhooks_off' | 'integrations' | 'dropped'; deliveries?: Partial<Delivery & { attempts: Attempt[] }>[] }): CallDetail {
  return {
    call: { id: 9, status: o.status ?? 'accepted', dropReason: o.dropReason ?? null } as CallDetail['call'],
    urls: [],
    deliveries: (o.deliveries ?? []).map((d) => ({ id: 3, urls: [], kind: 'classic', mapping: null, state: 'delivered', attemptCount: 1, round: 1, nextAttemptAt: null, deliveredAt: null, lastError: null, attempts: [], ...d }) as Delivery & { attempts: Attempt[] }),
    violations: null,
    planCheck: null,
    forwarding: o.forwarded === false ? { forwarded: false, reason: o.reason } : { forwarded: true },
  };
}

describe('explainCall', () => {
  it('a dropped call: its reason', () => {
    const e = explainCall(detail({ status: 'dropped', dropReason: 'unknown write key', forwarded: false, reason: 'dropped' }));
    expect(e.outcome).toBe('dropped');
    expect(e.explanation[0]).toBe('Dropped, not forwarded: unknown write key');
  });

  it('not forwarded because of its integrations', () => {
    const e = explainCall(detail({ forwarded: false, reason: 'integrations' }));
    expect(e.outcome).toBe('not_forwarded');
    expect(e.explanation[0]).toMatch(/integrations turned Webhooks off/);
  });

  it('a 401 from a signed request: failed, not retried, pointing at verify_signature', () => {
    const e = explainCall(detail({ deliveries: [{ state: 'failed', attempts: [attempt({ responseStatus: 401, responseBody: 'bad signature', outcome: 'failed' })] }] }));
    expect(e.outcome).toBe('failed');
    expect(e.explanation[0]).toMatch(/^Delivery 3 failed and will not be retried\. Last attempt: POST http:\/\/127\.0\.0\.1:3000\/hook \(round 1, scheduled\): answered 401, body "bad signature"\./);
    expect(e.explanation[0]).toMatch(/verify_signature/);
    expect(e.deliveries[0].lastAttempt).toMatch(/answered 401/);
  });

  it('retrying after a timeout, with the next round; the worst delivery names the outcome', () => {
    const e = explainCall(
      detail({
        deliveries: [
          { id: 4, state: 'delivered', attempts: [attempt({})] },
          { id: 5, state: 'retrying', attemptCount: 2, nextAttemptAt: '2026-01-01T00:00:10.000Z', attempts: [attempt({ responseStatus: null, timedOut: true, timeoutMs: 5000, outcome: 'retryable' })] },
        ],
      }),
    );
    expect(e.outcome).toBe('retrying');
    expect(e.explanation[1]).toMatch(/^Delivery 5 is retrying: attempt 2 failed, the next round is at 2026-01-01T00:00:10\.000Z\. Last attempt: .*timed out after 5000 ms/);
  });

  it('a TLS failure and a connection refused say so', () => {
    const tls = explainCall(detail({ deliveries: [{ state: 'failed', attempts: [attempt({ responseStatus: null, tlsError: { code: 'DEPTH_ZERO_SELF_SIGNED_CERT', kind: 'self_signed' }, outcome: 'failed' })] }] }));
    expect(tls.explanation[0]).toMatch(/TLS handshake failed \(DEPTH_ZERO_SELF_SIGNED_CERT/);
    const refused = explainCall(detail({ deliveries: [{ state: 'expired', attemptCount: 9, attempts: [attempt({ responseStatus: null, connectError: { code: 'ECONNREFUSED' }, outcome: 'retryable' })] }] }));
    expect(refused.outcome).toBe('expired');
    expect(refused.explanation[0]).toMatch(/expired: its retries ran out of the retry window after 9 attempts\. Last attempt: .*no connection \(ECONNREFUSED\)/);
  });
});

describe('explainCall with several URLs', () => {
  it('a retrying delivery to two URLs says how each one\'s last attempt went, not only the last URL\'s', () => {
    const e = explainCall(
      detail({
        deliveries: [
          {
            state: 'retrying',
            attemptCount: 2,
            nextAttemptAt: '2026-01-01T00:01:00.000Z',
            attempts: [
              attempt({ id: 1, urlIndex: 0, url: 'http://a/hook', responseStatus: 401, responseBody: 'bad signature', outcome: 'failed' }),
              attempt({ id: 2, urlIndex: 1, url: 'http://b/hook', responseStatus: 503, responseBody: 'down', outcome: 'retryable' }),
            ],
          },
        ],
      }),
    );
    expect(e.outcome).toBe('retrying');
    expect(e.explanation[0]).toMatch(/Last attempt to each URL: URL 1: POST http:\/\/a\/hook .*answered 401, body "bad signature"; URL 2: POST http:\/\/b\/hook .*answered 503/);
    expect(e.explanation[0]).toMatch(/verify_signature/);
    expect(e.explanation[0]).toMatch(/503 is retried/);
  });
});

describe('boundAttempts (get_call)', () => {
  const many = (n: number, urlIndex: number, firstId: number) =>
    Array.from({ length: n }, (_, i) => attempt({ id: firstId + i, urlIndex, round: i + 1, responseStatus: 503, responseBody: 'x'.repeat(5000), outcome: 'retryable' }));

  it('keeps each URL\'s first attempt and its latest ones, cuts the older ones\' bodies, and says what it left out', () => {
    const a = many(40, 0, 1);
    const b = many(3, 1, 100);
    const d = detail({ deliveries: [{ state: 'retrying', attemptCount: 43, attempts: [...a, ...b] }] });
    const { detail: shown, attemptsCut } = boundAttempts(d);
    const ids = shown.deliveries[0].attempts.map((x) => x.id);
    expect(ids).toEqual([1, 37, 38, 39, 40, 100, 101, 102]);
    expect(attemptsCut).toEqual([{ deliveryId: 3, urlIndex: 0, shown: ATTEMPTS_PER_URL, of: 40 }]);
    const byId = new Map(shown.deliveries[0].attempts.map((x) => [x.id, x]));
    // The last of each URL keeps its body (the 16 KB cut applies later, to every string); the others are cut.
    expect(byId.get(40)!.responseBody).toHaveLength(5000);
    expect(byId.get(102)!.responseBody).toHaveLength(5000);
    expect(byId.get(1)!.responseBody).toMatch(new RegExp(`^x{${OLDER_BODY_CHARS}}… \\[cut: ${5000 - OLDER_BODY_CHARS} more characters`));
    expect(attemptsCutText(attemptsCut)).toBe(" Attempts shown: delivery 3 URL 1: 5 of 40 attempts (the first and the latest); every attempt is in the lab's Inspector.");
    // The input is left as it was.
    expect(d.deliveries[0].attempts).toHaveLength(43);
    expect(d.deliveries[0].attempts[0].responseBody).toHaveLength(5000);
  });

  it('shows every attempt of a URL that has few, the older ones\' bodies cut', () => {
    const d = detail({ deliveries: [{ attempts: many(ATTEMPTS_PER_URL, 0, 1) }] });
    const r = boundAttempts(d);
    expect(r.attemptsCut).toEqual([]);
    expect(r.detail.deliveries[0].attempts.map((x) => x.responseBody)).toEqual(d.deliveries[0].attempts.slice(0, -1).map(() => expect.stringMatching(/cut/)).concat(['x'.repeat(5000)]));
    expect(attemptsCutText(r.attemptsCut)).toBe('');
  });
});

describe('inToolWords', () => {
  it('drops the operation\'s name and says call, not message (found by a review: "getMessage: not found: message 9")', () => {
    expect(inToolWords('getMessage: not found: message 999999')).toBe('not found: call 999999');
    expect(inToolWords('verifySignature: not found: attempt 4 of message 1')).toBe('not found: attempt 4 of call 1');
    expect(inToolWords('replayMessage: body: not valid JSON')).toBe('body: not valid JSON');
    // A field named first is not an operation: kept.
    expect(inToolWords('body: not valid JSON')).toBe('body: not valid JSON');
    expect(inToolWords('cannot reach the lab at http://127.0.0.1:1/api')).toBe('cannot reach the lab at http://127.0.0.1:1/api');
  });
});

describe('fitDetail (get_call, wait_for_call)', () => {
  // As a review built it: five URLs answering 200 KB, a call of 290 properties, replays with 500 KB bodies.
  const props = Object.fromEntries(Array.from({ length: 290 }, (_, i) => [`p${i}`, 'v'.repeat(90)]));
  const big = (): CallDetail => {
    const d = detail({
      deliveries: [
        {
          state: 'retrying',
          attemptCount: 40,
          body: JSON.stringify({ properties: props }),
          attempts: Array.from({ length: 40 }, (_, i) =>
            attempt({ id: i + 1, urlIndex: i % 5, responseStatus: 500, responseBody: 'e'.repeat(200_000), requestBody: i % 3 === 0 ? 'z'.repeat(500_000) : undefined, outcome: 'retryable' }),
          ),
        },
      ],
    });
    return { ...d, call: { ...d.call, raw: { properties: props }, normalized: { properties: props } } as unknown as CallDetail['call'] };
  };

  it('cuts step by step until the detail fits, and says how', () => {
    const { detail: shown, attemptsCut, cut } = fitDetail(big());
    expect(JSON.stringify(shown).length).toBeLessThanOrEqual(DETAIL_BUDGET_CHARS);
    expect(cut).toEqual([
      "every attempt's bodies cut to 2 KB, each delivery's body to 4 KB, and header maps to 12 headers of 256 characters",
      'strings in call.raw and call.normalized cut to 2 KB',
      'call.raw given as the first 4 KB of its JSON',
      'call.normalized given as the first 4 KB of its JSON',
      "each URL's last attempt only",
    ]);
    expect(shown.deliveries[0].attempts.map((a) => a.id)).toEqual([36, 37, 38, 39, 40]);
    expect(attemptsCut).toEqual([0, 1, 2, 3, 4].map((u) => ({ deliveryId: 3, urlIndex: u, shown: 1, of: 8 })));
    expect(shown.call.raw).toMatch(/^\{"properties":\{"p0":"v+.*… \[cut: \d+ more characters; the answer was too long/);
    expect(attemptsCutText(attemptsCut, cut)).toMatch(/URL 1: 1 of 8 attempts \(the latest\).* To fit: every attempt's bodies cut to 2 KB/);
  });

  it('a call of 32 KB, the most the collector takes, with a URL\'s answer of 16 KB: whole but for the 16 KB cut of every answer', () => {
    const d = detail({ deliveries: [{ body: JSON.stringify({ big: 'b'.repeat(30_000) }), attempts: [attempt({ responseBody: 'r'.repeat(16_000) })] }] });
    const whole = { ...d, call: { ...d.call, raw: { big: 'b'.repeat(30_000) }, normalized: { big: 'b'.repeat(30_000) } } as unknown as CallDetail['call'] };
    const fitted = fitDetail(whole);
    expect(fitted.cut).toEqual(["every attempt's bodies cut to 2 KB, each delivery's body to 4 KB, and header maps to 12 headers of 256 characters"]);
    expect((fitted.detail.call.raw as { big: string }).big).toHaveLength(30_000);
    expect(JSON.stringify(redact(fitted.detail, { showSecrets: false })).length).toBeLessThanOrEqual(DETAIL_BUDGET_CHARS);
  });

  it('leaves a detail that fits as boundAttempts gives it', () => {
    const d = detail({ deliveries: [{ attempts: [attempt({ id: 1 }), attempt({ id: 2, urlIndex: 1 })] }] });
    expect(fitDetail(d)).toEqual({ ...boundAttempts(d), cut: [] });
  });

  it('a replay\'s attempts: bodies cut to 2 KB only when over budget', () => {
    const small = [attempt({ responseBody: 'x'.repeat(3000) })];
    expect(fitAttempts(small)).toBe(small);
    const large = Array.from({ length: 5 }, () => attempt({ responseBody: 'x'.repeat(16_000) }));
    expect(fitAttempts(large).every((a) => a.responseBody!.length < 2200)).toBe(true);
  });
});

describe('header maps in answers (found by a review: 20 static headers of 10 KB on five URLs made get_call 4 MB)', () => {
  it('redact keeps 32 headers of at most 1 KB each, says how many more, and masks credential names', () => {
    const headers = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`x-h${i}`, 'v'.repeat(i === 0 ? 5000 : 10)]));
    const out = redact({ headers: { ...headers, 'X-Auth': 'a', 'X-Access-Key': 'k', 'X-Private-Key': 'p' } }, { showSecrets: false }).headers as Record<string, string>;
    expect(Object.keys(out)).toHaveLength(33);
    expect(out['x-h0']).toMatch(/^v{1024}… \[cut: 3976 more characters\]$/);
    expect(out['…']).toBe('11 more headers, not shown');
    const creds = redact({ requestHeaders: { 'X-Auth': 'a', 'X-Access-Key': 'k', 'X-Private-Key': 'p', 'WWW-Authenticate': 'Bearer realm=x', 'X-Signature': 'abc' } }, { showSecrets: false }).requestHeaders;
    expect(creds).toEqual({ 'X-Auth': '****', 'X-Access-Key': '****', 'X-Private-Key': '****', 'WWW-Authenticate': '****', 'X-Signature': 'abc' });
  });

  it('fitDetail: five URLs whose receiver answers 100 headers fit the budget', () => {
    const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`x-answer-${i}`, 'h'.repeat(150)]));
    const d = detail({
      deliveries: [{ state: 'expired', attemptCount: 50, urls: Array.from({ length: 5 }, (_, i) => ({ url: `http://r/${i}`, headers: many })), attempts: Array.from({ length: 50 }, (_, i) => attempt({ id: i + 1, urlIndex: i % 5, responseStatus: 500, responseHeaders: many, outcome: 'retryable' })) }],
    });
    const { detail: shown, cut } = fitDetail(d);
    expect(JSON.stringify(shown).length).toBeLessThanOrEqual(DETAIL_BUDGET_CHARS);
    expect(cut[0]).toMatch(/header maps to 12 headers of 256 characters/);
    expect(Object.keys(shown.deliveries[0].attempts[0].responseHeaders!)).toHaveLength(13);
  });
});
