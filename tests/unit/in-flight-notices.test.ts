import { afterEach, describe, expect, it, vi } from 'vitest';
import { InFlightNotices, IN_FLIGHT_NOTICE_MS } from '../../src/main/engine/in-flight-notices';
import { answeredCount, InFlight } from '../../src/main/engine/store/url-states';
import type { CallSummary } from '../../src/shared/types';
import { EventHub } from '../../src/main/engine/event-hub';
import type { Store } from '../../src/main/engine/store/store';
import type { NewAttempt } from '../../src/main/engine/store/delivery.types';
import type { EngineEvent } from '../../src/shared/api.contract';

// Rounds in flight are announced in one gathering every IN_FLIGHT_NOTICE_MS, and only those still out
// then: under load (rounds ending within milliseconds) the event stream gains next to nothing.
afterEach(() => {
  vi.useRealTimers();
});

describe('in-flight notices', () => {
  it('1,000 rounds started: one gathering, touching only the 3 still out when it runs', () => {
    vi.useFakeTimers();
    const inFlight = new InFlight();
    const touched: number[] = [];
    const notices = new InFlightNotices({ inFlight } as unknown as Store, { announce: (ids: number[]) => touched.push(...ids) } as unknown as EventHub);
    const rounds = [];
    for (let d = 1; d <= 1000; d++) {
      rounds.push(inFlight.start(d, [0], 0));
      notices.add(d + 10_000, { id: d, callId: d + 10_000, method: 'POST' });
    }
    // All but three end quickly, as under load against a fast receiver.
    for (let d = 1; d <= 997; d++) inFlight.end(d, rounds[d - 1]);
    vi.advanceTimersByTime(IN_FLIGHT_NOTICE_MS - 1);
    expect(touched).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(touched).toEqual([10_998, 10_999, 11_000]);
    // Nothing more until something new is announced.
    vi.advanceTimersByTime(10 * IN_FLIGHT_NOTICE_MS);
    expect(touched).toHaveLength(3);
    notices.stop();
  });

  it('an attempt answered while its round is out is announced once, before its calls\' summaries, under its own call only', () => {
    vi.useFakeTimers();
    const inFlight = new InFlight();
    const seen: string[] = [];
    const hub = {
      announce: (ids: number[]) => seen.push(`summaries ${ids.join(',')}`),
      emit: (e: EngineEvent) => seen.push(e.type === 'attempt.answered' ? `answered ${e.callId} url ${e.attempt.urlIndex} id ${e.attempt.id} ${e.attempt.method}` : e.type),
    };
    const notices = new InFlightNotices({ inFlight } as unknown as Store, hub as unknown as EventHub);
    // An Actions batch (delivery 7, first call 70, member 71) out to two URLs.
    const d = { id: 7, callId: 70, method: 'PUT' as const };
    const round = inFlight.start(7, [0, 1], 0);
    notices.add(70, d);
    notices.add(71, d);
    const attempt = { deliveryId: 7, round: 1, urlIndex: 0, url: 'http://x/', trigger: 'scheduled', startedAt: 0, durationMs: 3, requestHeaders: {}, body: null, signature: null, responseStatus: 200, responseHeaders: {}, responseBody: 'ok', responseTruncated: false, errorCode: null, errorMessage: null, timedOut: false, timeoutMs: null, tlsError: null, connectError: null, outcome: 'success', timing: null } as NewAttempt;
    expect(inFlight.answered(round, 0, 200, 'success', attempt)).toBe(true);
    notices.add(70, d);
    vi.advanceTimersByTime(IN_FLIGHT_NOTICE_MS);
    expect(seen).toEqual(['answered 70 url 0 id -1 PUT', 'summaries 70,71']);
    // Still out a while later: announced again, the answer not announced twice.
    notices.add(70, d);
    vi.advanceTimersByTime(IN_FLIGHT_NOTICE_MS);
    expect(seen.slice(2)).toEqual(['summaries 70']);
    notices.stop();
  });

  it('the summaries go out as they were when the answers were chosen: a URL answering before the events leave is not counted ahead of its own event', () => {
    // The race detail-patch.test.ts once met under load: the summary was read at the event hub's
    // flush, a turn later, and counted an answer no attempt.answered had announced.
    vi.useFakeTimers();
    const inFlight = new InFlight();
    const hub = new EventHub((ids) => ids.map((id) => ({ id, attemptCount: answeredCount(inFlight.of(7)) }) as unknown as CallSummary));
    const got: string[] = [];
    hub.on((events) => got.push(...events.map((e) => (e.type === 'calls.updated' ? `updated ${e.calls[0]!.attemptCount}` : e.type))));
    const notices = new InFlightNotices({ inFlight } as unknown as Store, hub);
    const d = { id: 7, callId: 70, method: 'POST' as const };
    const round = inFlight.start(7, [0, 1], 0);
    notices.add(70, d);
    const attempt = (urlIndex: number) => ({ deliveryId: 7, round: 1, urlIndex, url: `http://x/${urlIndex}`, trigger: 'scheduled', startedAt: 0, durationMs: 3, requestHeaders: {}, body: null, signature: null, responseStatus: 200, responseHeaders: {}, responseBody: 'ok', responseTruncated: false, errorCode: null, errorMessage: null, timedOut: false, timeoutMs: null, tlsError: null, connectError: null, outcome: 'success', timing: null }) as NewAttempt;
    inFlight.answered(round, 0, 200, 'success', attempt(0));
    vi.advanceTimersByTime(IN_FLIGHT_NOTICE_MS);
    // The hub has not sent its turn yet; the second URL answers before it does.
    expect(got).toEqual([]);
    inFlight.answered(round, 1, 200, 'success', attempt(1));
    vi.runOnlyPendingTimers();
    expect(got).toEqual(['attempt.answered', 'updated 1']);
    notices.stop();
  });
});
