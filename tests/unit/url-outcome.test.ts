import { describe, expect, it } from 'vitest';
import type { Attempt, CallSummary, UrlOutcome } from '../../src/shared/types';
import { deliveredWithFailures, inFlightSince, urlOutcomeNote } from '../../src/shared/url-outcome';
import { attemptTimeout, explainAttempt } from '../../src/renderer/features/inspector/explain';
import { matchesFilters } from '../../src/renderer/stores/inspector-merge';
import { urlStatesAfter, urlOutcomes, InFlight, type StoredUrlState } from '../../src/main/engine/store/url-states';

const url = (state: UrlOutcome['state'], extra: Partial<UrlOutcome> = {}): UrlOutcome => ({ url: 'http://x/', state, lastStatus: null, attempts: 1, startedAt: null, ...extra });

describe('the list row: per-URL outcome at a glance', () => {
  it('names the failed URLs of a call that counts as delivered, and flags it', () => {
    const urls = [url('delivered'), url('failed'), url('delivered'), url('delivered'), url('delivered')];
    expect(urlOutcomeNote(urls)).toBe('1 of 5 URLs failed');
    expect(deliveredWithFailures({ deliveryState: 'delivered', urls })).toBe(true);
    expect(urlOutcomeNote([url('delivered'), url('expired'), url('failed')])).toBe('2 of 3 URLs failed');
  });

  it('says nothing more when every URL agrees with the call state', () => {
    expect(urlOutcomeNote([url('delivered'), url('delivered')])).toBeNull();
    expect(urlOutcomeNote([url('failed'), url('expired')])).toBeNull();
    expect(urlOutcomeNote([])).toBeNull();
    expect(deliveredWithFailures({ deliveryState: 'delivered', urls: [url('delivered'), url('not_attempted')] })).toBe(false);
    expect(deliveredWithFailures({ deliveryState: 'failed', urls: [url('failed')] })).toBe(false);
  });

  it('in flight since the oldest attempt still out', () => {
    expect(inFlightSince([url('delivered'), url('in_flight', { startedAt: '2026-01-01T00:00:02.000Z' }), url('in_flight', { startedAt: '2026-01-01T00:00:01.000Z' })])).toBe(
      Date.parse('2026-01-01T00:00:01.000Z'),
    );
    expect(inFlightSince([url('pending')])).toBeNull();
  });
});

describe('the urlState filter of the live merge', () => {
  const call = (urls: UrlOutcome[]) => ({ id: 1, type: 'track', sourceId: 's', status: 'accepted', deliveryState: 'delivered', urls, userId: null, anonymousId: null, label: null, messageId: null }) as unknown as CallSummary;
  it('matches a call with at least one URL in that state', () => {
    expect(matchesFilters(call([url('delivered'), url('failed')]), { urlState: 'failed' })).toBe(true);
    expect(matchesFilters(call([url('delivered'), url('delivered')]), { urlState: 'failed' })).toBe(false);
    expect(matchesFilters(call([]), { urlState: 'pending' })).toBe(false);
  });
});

describe('the timeout message says what happens next', () => {
  const timedOut: Attempt = {
    id: 1, deliveryId: 1, round: 1, urlIndex: 1, url: 'http://x/', method: 'POST', trigger: 'scheduled', startedAt: '2026-01-01T00:00:00.000Z', durationMs: 5000,
    requestHeaders: {}, requestBody: '{}', signature: null, responseStatus: null, responseHeaders: null, responseBody: null, responseTruncated: false,
    errorCode: 'TIMEOUT', errorMessage: 'timed out after 5000 ms', timedOut: true, timeoutMs: 5000, tlsError: null, connectError: null, outcome: 'retryable', timing: null,
  };
  it('retried on the schedule when no other URL delivered', () => {
    expect(explainAttempt(timedOut)).toContain('Retried on the schedule');
  });
  it('not retried when another URL delivered the call in the same round (SPEC §4)', () => {
    const text = explainAttempt(timedOut, { deliveredByOther: true })!;
    expect(text).not.toContain('Retried on the schedule');
    expect(text).toContain('Not retried: another URL of this call answered 2xx in the same round');
    expect(explainAttempt({ ...timedOut, timedOut: false, timeoutMs: null, errorCode: null, errorMessage: null, responseStatus: 500 }, { deliveredByOther: true })).toContain('Not retried');
    expect(explainAttempt({ ...timedOut, timedOut: false, timeoutMs: null, errorCode: 'ECONNREFUSED', connectError: { code: 'ECONNREFUSED' } }, { deliveredByOther: true })).toContain('Not retried');
  });
  it('names the timeout the attempt had: 5 s Classic, 10 s Actions', () => {
    expect(explainAttempt(timedOut)).toMatch(/^No answer within 5 s: .* within 5 s of the request/);
    const actions = { ...timedOut, errorMessage: 'timed out after 10000 ms', timeoutMs: 10000 };
    expect(explainAttempt(actions)).toMatch(/^No answer within 10 s: .* within 10 s of the request/);
    expect(attemptTimeout({ timeoutMs: 300 })).toBe('300 ms');
  });
  it("an Actions 501 says it is not retried, an Actions 423 that it is", () => {
    const http = (status: number, outcome: Attempt['outcome']) => ({ ...timedOut, timedOut: false, timeoutMs: null, errorCode: null, errorMessage: null, responseStatus: status, outcome });
    expect(explainAttempt(http(501, 'failed'))).toContain('not retried');
    expect(explainAttempt(http(501, 'retryable'))).toContain('server error. Retried on the schedule');
    expect(explainAttempt(http(423, 'retryable'))).toContain('Retried on the schedule');
    expect(explainAttempt(http(423, 'failed'))).toContain('is not retried (discarded)');
  });
  it('not retried after the window is over, nor after a replay', () => {
    expect(explainAttempt(timedOut, { lastBeforeExpiry: true })).toContain('the retry window is over');
    expect(explainAttempt({ ...timedOut, trigger: 'replay' })).toContain('A replay is sent once');
  });
});

describe('URL states after a round (the dispatcher writes them with the delivery)', () => {
  const pending: StoredUrlState[] = [['pending', null, 0], ['pending', null, 0], ['pending', null, 0]];
  it('one success: delivered; the others of the round failed, retryable or not', () => {
    const after = urlStatesAfter(
      pending,
      [
        { urlIndex: 0, status: 200, outcome: 'success' },
        { urlIndex: 1, status: 500, outcome: 'retryable' },
        { urlIndex: 2, status: null, outcome: 'failed' },
      ],
      { state: 'delivered', pendingUrls: [] },
    );
    expect(after).toEqual([['delivered', 200, 1], ['failed', 500, 1], ['failed', null, 1]]);
  });
  it('no success: retryable URLs retrying, then expired; a URL failed for good stays failed', () => {
    const r1 = urlStatesAfter(pending.slice(0, 2), [{ urlIndex: 0, status: 500, outcome: 'retryable' }, { urlIndex: 1, status: 404, outcome: 'failed' }], { state: 'retrying', pendingUrls: [0] });
    expect(r1).toEqual([['retrying', 500, 1], ['failed', 404, 1]]);
    expect(urlStatesAfter(r1, [{ urlIndex: 0, status: 503, outcome: 'retryable' }], { state: 'expired', pendingUrls: [] })).toEqual([['expired', 503, 2], ['failed', 404, 1]]);
  });
  it('a replay of one URL delivering: the others end failed (tried before) or not attempted (never)', () => {
    const prev: StoredUrlState[] = [['retrying', 500, 1], ['retrying', 500, 1], ['pending', null, 0]];
    expect(urlStatesAfter(prev, [{ urlIndex: 0, status: 200, outcome: 'success' }], { state: 'delivered', pendingUrls: [] })).toEqual([
      ['delivered', 200, 2],
      ['failed', 500, 1],
      ['not_attempted', null, 0],
    ]);
  });
  it('in flight is laid over the stored states, an early answer shown before the round ends', () => {
    const inFlight = new InFlight();
    const round = inFlight.start(7, [0, 1], Date.parse('2026-01-01T00:00:00.000Z'));
    expect(inFlight.answered(round, 0, 200, 'success')).toBe(true);
    const out = urlOutcomes([{ url: 'a' }, { url: 'b' }], null, inFlight.of(7));
    expect(out).toEqual([
      { url: 'a', state: 'delivered', lastStatus: 200, attempts: 1, startedAt: null },
      { url: 'b', state: 'in_flight', lastStatus: null, attempts: 0, startedAt: '2026-01-01T00:00:00.000Z' },
    ]);
    expect(inFlight.deliveryIds()).toEqual([7]);
    inFlight.end(7, round);
    expect(inFlight.deliveryIds()).toEqual([]);
    expect(urlOutcomes([{ url: 'a' }], null, inFlight.of(7))[0].state).toBe('pending');
  });
});

describe('the short URL note and the chip\'s least width (issue 26: the status word is never cut)', () => {
  it('says ⚠failed/total only when some but not all failed, and the chip keeps room for its word', async () => {
    const { urlOutcomeNoteShort } = await import('../../src/shared/url-outcome');
    const { chipMinWidth, chipOf } = await import('../../src/renderer/components/status-chip-model');
    const u = (state: 'delivered' | 'failed' | 'expired') => ({ url: `https://r.example/${state}`, state, attempts: 1, lastStatus: null }) as never;
    expect(urlOutcomeNoteShort([u('delivered'), u('failed'), u('expired'), u('delivered')])).toBe('⚠2/4');
    expect(urlOutcomeNoteShort([u('delivered')])).toBeNull();
    expect(urlOutcomeNoteShort([u('failed')])).toBeNull();
    const chip = chipOf({ status: 'accepted', dropReason: null, deliveryState: 'delivered', nextAttemptAt: null, urls: [u('delivered'), u('failed')] });
    expect(chip).toMatchObject({ word: 'delivered', note: '1 of 2 URLs failed', noteShort: '⚠1/2' });
    expect(chipMinWidth(chip)).toBe('calc(9ch + 16px)');
    expect(chipOf({ status: 'dropped', dropReason: 'missing userId or anonymousId', deliveryState: null, nextAttemptAt: null }).word).toBe('dropped');
  });
});
