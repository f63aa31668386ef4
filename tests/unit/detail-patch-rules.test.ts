import { describe, expect, it } from 'vitest';
import { patchedDetail, type DetailStep } from '../../src/renderer/stores/detail-patch';
import type { Attempt, CallDetail, CallSummary, UrlOutcome } from '../../src/shared/types';

// When the open detail may be patched from a summary, and when it must be read (issue 41, from a
// review): a URL's outcome may change only for a delivery an attempt was pushed for, or one the
// summary shows out. A call with a slow Classic receiver (its round out) and an Actions request:
// whatever happens to the Actions one without an attempt pushed (canceled, or its batch sent for
// another member) is read, not hidden behind the round out.

const T = '2026-11-30T10:00:00.000Z';
const classicUrl = (state: UrlOutcome['state']): UrlOutcome => ({ url: 'http://slow/', state, lastStatus: null, attempts: 0, startedAt: state === 'in_flight' ? T : null });
const actionsUrl = (state: UrlOutcome['state'], attempts = 1): UrlOutcome => ({
  url: 'http://actions/',
  state,
  lastStatus: state === 'delivered' ? 200 : 500,
  attempts,
  startedAt: null,
  via: { kind: 'actions', mapping: 'm', method: 'POST', deliveryId: 20 },
});

function delivery(id: number, kind: 'classic' | 'actions', state: CallDetail['deliveries'][number]['state'], attemptCount: number): CallDetail['deliveries'][number] {
  return {
    id, callId: 1, sourceId: 's', type: 'track', state, urls: [], round: attemptCount, attemptCount, nextAttemptAt: null, nextAttemptSimOffsetMs: null,
    firstAttemptAt: null, lastAttemptAt: null, deliveredAt: null, lastError: null, body: '{}', kind, mapping: kind === 'actions' ? 'm' : null, method: 'POST',
    itemCount: 1, swId: null, attempts: [],
  };
}

/** The detail as read mid-round: Classic 10 out, Actions 20 retrying after one failed attempt. */
function detail(): CallDetail {
  return {
    call: { id: 1 } as CallDetail['call'],
    urls: [classicUrl('in_flight'), actionsUrl('retrying')],
    deliveries: [{ ...delivery(10, 'classic', 'in_flight', 0) }, delivery(20, 'actions', 'retrying', 1)],
    violations: null,
    planCheck: null,
    forwarding: { forwarded: true },
  };
}

function summary(urls: UrlOutcome[]): DetailStep {
  const s = { id: 1, deliveryId: 10, deliveryState: 'in_flight', attemptCount: 0, nextAttemptAt: null, urls } as unknown as CallSummary;
  return { type: 'summary', summary: s };
}

const recorded = (state: 'delivered' | 'retrying'): DetailStep => ({
  type: 'attempt.recorded',
  callId: 1,
  attempt: { id: 99, deliveryId: 20, round: 2, urlIndex: 0, trigger: 'scheduled', startedAt: T } as Attempt,
  delivery: { state, round: 2, attemptCount: 2, nextAttemptAt: null, nextAttemptSimOffsetMs: null, firstAttemptAt: T, lastAttemptAt: T, deliveredAt: null, lastError: null },
});

describe('the open detail patched from a summary, or read', () => {
  it('the round out announced again, nothing else changed: patched', () => {
    expect(patchedDetail(detail(), [summary([classicUrl('in_flight'), actionsUrl('retrying')])])).not.toBeNull();
  });

  it('the Actions request canceled (a source update) while the Classic round is out, no attempt pushed: read', () => {
    expect(patchedDetail(detail(), [summary([classicUrl('in_flight'), actionsUrl('canceled')])])).toBeNull();
  });

  it("the Actions batch delivered for another member, no attempt pushed to this call: read", () => {
    expect(patchedDetail(detail(), [summary([classicUrl('in_flight'), actionsUrl('delivered', 2)])])).toBeNull();
  });

  it('the same change with its attempt pushed before it: patched, the delivery taking the attempt', () => {
    const patched = patchedDetail(detail(), [recorded('delivered'), summary([classicUrl('in_flight'), actionsUrl('delivered', 2)])]);
    expect(patched?.deliveries[1]).toMatchObject({ state: 'delivered', attemptCount: 2 });
    expect(patched?.urls[1]?.state).toBe('delivered');
  });

  it("an attempt pushed for one delivery does not explain another's change", () => {
    const pushedForClassic: DetailStep = { ...(recorded('retrying') as Extract<DetailStep, { type: 'attempt.recorded' }>), attempt: { id: 98, deliveryId: 10, round: 1, urlIndex: 0, trigger: 'scheduled', startedAt: T } as Attempt };
    expect(patchedDetail(detail(), [pushedForClassic, summary([classicUrl('in_flight'), actionsUrl('canceled')])])).toBeNull();
  });

  it('a call waiting in a filling batch: its queued count changes with no attempt pushed, and is patched, not read', () => {
    const waiting = (queued: number): UrlOutcome => ({ url: 'http://actions/', state: 'pending', lastStatus: null, attempts: 0, startedAt: null, via: { kind: 'actions', mapping: 'b', method: 'POST', deliveryId: null, waiting: { queued, of: 10 } } });
    const d = { ...detail(), urls: [classicUrl('in_flight'), waiting(3)], deliveries: [delivery(10, 'classic', 'in_flight', 0)] };
    const patched = patchedDetail(d, [summary([classicUrl('in_flight'), waiting(4)])]);
    expect(patched?.urls[1]?.via?.waiting?.queued).toBe(4);
  });
});
