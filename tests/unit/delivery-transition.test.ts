import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AttemptTrigger, DeliveryState } from '../../src/shared/types';
import { canceledFields, transition, type AttemptVerdict, type DeliveryEvent } from '../../src/main/engine/store/delivery-transition';
import { DEFAULT_SETTINGS } from '../../src/main/engine/store/settings.repo';
import type { ActiveDelivery, NewAttempt } from '../../src/main/engine/store/delivery.types';
import { engineSources } from '../helpers/engine-sources';

// A delivery's life as a table (issue 41): every state × outcome × trigger that can occur, and a
// guard that no other module of the engine writes a delivery's state itself.

const T0 = 1_000_000;
const SCHEDULE = { settings: { ...DEFAULT_SETTINGS, retrySchedule: { ...DEFAULT_SETTINGS.retrySchedule, jitter: 0 } }, random: () => 0.5 };

function delivery(state: DeliveryState, over: Partial<ActiveDelivery> = {}): ActiveDelivery {
  const urls = [{ url: 'http://a/', headers: {} }, { url: 'http://b/', headers: {} }];
  return {
    id: 7, callId: 3, sourceId: 's', type: 'track', state, urls, pendingUrls: [0, 1], round: 0, attemptCount: 0, simElapsedMs: 0, firstAttemptAt: null,
    nextAttemptAt: state === 'retrying' ? T0 : null, body: Buffer.from('{}'), urlStates: urls.map(() => ['pending', null, 0]), frozen: { userAgent: 'ua', signature: null },
    kind: 'classic', method: 'POST', timeoutMs: null, standardWebhooks: null, mapping: null, itemCount: 1, ...over,
  };
}

const VERDICTS: Record<string, AttemptVerdict> = {
  success: { outcome: 'success', reason: '200' },
  retryable: { outcome: 'retryable', reason: '500' },
  failed: { outcome: 'failed', reason: '400' },
};

function answers(...outcomes: (keyof typeof VERDICTS)[]) {
  const attempts = outcomes.map((_, i) => ({ urlIndex: i, url: `http://${'ab'[i]}/`, durationMs: 10, responseStatus: 200 }) as NewAttempt);
  return { attempts, classifications: outcomes.map((o) => VERDICTS[o]!) };
}

function round(trigger: AttemptTrigger, outcomes: (keyof typeof VERDICTS)[], over: Partial<Extract<DeliveryEvent, { kind: 'round' }>> = {}): DeliveryEvent {
  return { kind: 'round', trigger, answers: answers(...outcomes), startedAt: T0, finishedAt: T0 + 10, schedule: SCHEDULE, ...over };
}

describe('transition: a delivery after a round', () => {
  // [state before, trigger, the URLs' outcomes, extra, state after]
  const table: [DeliveryState, AttemptTrigger, (keyof typeof VERDICTS)[], Partial<Extract<DeliveryEvent, { kind: 'round' }>>, DeliveryState][] = [
    ['pending', 'scheduled', ['success', 'retryable'], {}, 'delivered'],
    ['pending', 'scheduled', ['retryable', 'failed'], {}, 'retrying'],
    ['pending', 'scheduled', ['failed', 'failed'], {}, 'failed'],
    ['pending', 'scheduled', ['failed'], { deferred: [1] }, 'retrying'],
    ['in_flight', 'scheduled', ['retryable', 'retryable'], {}, 'retrying'],
    ['retrying', 'scheduled', ['success'], { deferred: [1] }, 'delivered'],
    ['pending', 'scheduled', ['retryable', 'retryable'], { canceledWhileOut: true }, 'canceled'],
    ['pending', 'scheduled', ['success', 'retryable'], { canceledWhileOut: true }, 'delivered'],
    ['failed', 'manual', ['success', 'failed'], {}, 'delivered'],
    ['failed', 'manual', ['retryable', 'failed'], {}, 'failed'],
    ['expired', 'manual', ['retryable', 'retryable'], {}, 'expired'],
    ['retrying', 'replay', ['failed', 'failed'], {}, 'retrying'],
    ['delivered', 'replay', ['failed', 'failed'], {}, 'delivered'],
    ['canceled', 'replay', ['retryable', 'retryable'], {}, 'canceled'],
    ['canceled', 'replay', ['success'], {}, 'delivered'],
    ['failed', 'replay', ['success'], { canceledWhileOut: true }, 'delivered'],
    ['pending', 'probe', ['success'], {}, 'delivered'],
    ['pending', 'probe', ['retryable'], {}, 'failed'],
    ['pending', 'probe', ['failed'], {}, 'failed'],
    // The rest of what can occur: a retry's round (delivered, retried again, failed for good); a
    // manual round or a replay of a delivery in any state, pending and in flight included (a replay
    // while its scheduled round is out), delivering or leaving its state alone.
    ['retrying', 'scheduled', ['retryable', 'retryable'], {}, 'retrying'],
    ['retrying', 'scheduled', ['failed', 'failed'], {}, 'failed'],
    ['retrying', 'scheduled', ['failed', 'success'], {}, 'delivered'],
    ['retrying', 'manual', ['success'], {}, 'delivered'],
    ['retrying', 'manual', ['retryable', 'failed'], {}, 'retrying'],
    ['expired', 'manual', ['success', 'retryable'], {}, 'delivered'],
    ['delivered', 'manual', ['success'], {}, 'delivered'],
    ['canceled', 'manual', ['failed'], {}, 'canceled'],
    ['pending', 'replay', ['success'], {}, 'delivered'],
    ['pending', 'replay', ['retryable'], {}, 'pending'],
    ['in_flight', 'replay', ['success'], {}, 'delivered'],
    ['in_flight', 'replay', ['failed', 'failed'], {}, 'in_flight'],
    ['expired', 'replay', ['success'], {}, 'delivered'],
  ];
  it.each(table)('%s, %s round answered %j %j → %s', (before, trigger, outcomes, extra, after) => {
    const d = delivery(before);
    const u = transition(d, round(trigger, outcomes, extra));
    expect(u.state).toBe(after);
    expect(u.id).toBe(d.id);
    expect(u.round).toBe(1);
    expect(u.attemptCount).toBe(outcomes.length);
    expect(u.lastAttemptAt).toBe(T0);
    if (outcomes.includes('success')) expect(u).toMatchObject({ pendingUrls: [], nextAttemptAt: null, deliveredAt: T0 + 10, lastError: null });
    if (after === 'canceled' && trigger === 'scheduled') expect(u).toMatchObject({ pendingUrls: [], nextAttemptAt: null });
    if (trigger === 'manual' || trigger === 'replay') {
      // A manual round that does not deliver leaves the delivery's schedule alone.
      if (after !== 'delivered') expect(u).toMatchObject({ pendingUrls: d.pendingUrls, nextAttemptAt: d.nextAttemptAt, simElapsedMs: d.simElapsedMs });
    }
    if (trigger === 'probe' && after === 'failed') expect(u.lastError).toMatch(/^probe \(one attempt, never retried\): /);
  });

  it('a retryable round is retried at the schedule’s next delay, warped, with the URLs that waited for their lane', () => {
    const u = transition(delivery('pending'), round('scheduled', ['retryable', 'failed'], { deferred: [2] }));
    expect(u.pendingUrls).toEqual([0, 2]);
    expect(u.nextAttemptAt).toBeGreaterThan(T0 + 10);
    const warped = transition(delivery('pending'), round('scheduled', ['retryable'], { schedule: { ...SCHEDULE, settings: { ...SCHEDULE.settings, timeScale: 60 } } }));
    expect(warped.nextAttemptAt! - (T0 + 10)).toBe(Math.round((u.nextAttemptAt! - (T0 + 10)) / 60));
  });

  it('a retryable round past the window expires, saying why', () => {
    const d = delivery('retrying', { round: 3, simElapsedMs: DEFAULT_SETTINGS.retrySchedule.windowMs });
    const u = transition(d, round('scheduled', ['retryable']));
    expect(u.state).toBe('expired');
    expect(u.lastError).toMatch(/retry window of 4 h is over$/);
  });

  it('a delivery that cannot be sent is failed with its reason and no attempt', () => {
    const u = transition(delivery('pending'), { kind: 'not-sendable', reason: 'the mapped body is over 32 KB' });
    expect(u).toMatchObject({ state: 'failed', pendingUrls: [], round: 0, attemptCount: 0, lastError: 'the mapped body is over 32 KB' });
    expect(u.urlStates.map((s) => s[0])).toEqual(['failed', 'failed']);
  });

  it('a cancel ends every unfinished URL and schedules nothing', () => {
    const c = canceledFields([['pending', null, 0], ['delivered', 200, 1]], 'source deleted');
    expect(c).toMatchObject({ state: 'canceled', pendingUrls: [], nextAttemptAt: null, lastError: 'source deleted' });
    expect(c.urlStates.map((s) => s[0])).toEqual(['canceled', 'delivered']);
  });
});

describe('a delivery state is written only by delivery-transition.ts', () => {
  /** States a delivery moves to (pending is only born). */
  const MOVES = '(delivered|failed|expired|retrying|canceled|in_flight)';
  const WRITES = [
    // A literal or a choice between literals (state: ok ? 'delivered' : …).
    new RegExp(`\\bstate:\\s*[^,;}\\n]*?'${MOVES}'`, 'g'),
    new RegExp(`\\b\\w+\\.state\\s*=\\s*'${MOVES}';`, 'g'),
    new RegExp(`\\bSET\\s+(?:[\\w_]+\\s*=\\s*[^,]+,\\s*)*state\\s*=\\s*'${MOVES}'`, 'gi'),
  ];
  /** Each with its reason: these are not decisions of a delivery's life. */
  const ALLOWED: Record<string, string[]> = {
    // Computes URL states (a URL's, not the delivery's), for transition().
    'store/url-states.ts': ["out.state = 'in_flight';"],
    // What a call's summary shows of its Actions deliveries (a view, with rounds out laid over), not a write.
    'store/actions-outcomes.ts': ["state: d.state === 'canceled'", "state: hasUrlOut(rounds) ? 'in_flight'"],
  };

  it('finds no other write', () => {
    const found: string[] = [];
    for (const { file, text } of engineSources()) {
      if (file === join('store', 'delivery-transition.ts')) continue;
      for (const re of WRITES) for (const m of text.matchAll(re)) if (!(ALLOWED[file] ?? []).some((a) => m[0].endsWith(a) || m[0] === a)) found.push(`${file}: ${m[0]}`);
    }
    expect(found).toEqual([]);
  });

  it('the guard sees a write when there is one', () => {
    const sample = "const u = { ...x, state: ok ? ('delivered' as const) : d.state }; db.prepare(\"UPDATE deliveries SET round = 1, state = 'failed' WHERE d.state = 'canceled'\"); d.state = 'canceled';";
    expect(WRITES.map((re) => [...sample.matchAll(re)].length)).toEqual([1, 1, 1]);
  });
});
