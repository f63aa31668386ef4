import type { AttemptOutcome, DeliveryState, UrlOutcome, UrlState } from '../../../shared/types';
import { formatTimestamp } from '../../../shared/timestamp';
import { maskUrlPassword } from '../../../shared/url-credentials';
import type { NewAttempt, StoredUrlState } from './delivery.types';
import { isUnfinished } from './delivery-states';

// Per-URL outcome of a delivery (issue 14: "the inspector never hides a failure").
//
// Kept on the delivery row, written in the same statement as the delivery's state when the
// dispatcher records a round: `url_states`, a JSON array with one [state, lastStatus, attempts] per
// URL (NULL until the first attempt: every URL pending), and `url_mask`, one bit per state present,
// which the list filters on (urlState) without reading attempts. A call summary so costs no query
// of its own. What is in flight is not written at all (a round usually ends within milliseconds):
// the dispatcher registers it here in memory, and summaries lay it over the stored states.

export type { StoredUrlState } from './delivery.types';

export const URL_STATE_BITS: Record<UrlState, number> = {
  pending: 1,
  in_flight: 2,
  delivered: 4,
  retrying: 8,
  failed: 16,
  expired: 32,
  not_attempted: 64,
  canceled: 128,
};

/** A canceled delivery's URLs: those still waiting to be (re)tried will not be. */
export function canceledUrlStates(states: StoredUrlState[]): StoredUrlState[] {
  return states.map(([state, lastStatus, attempts]) => [state === 'pending' || state === 'retrying' ? 'canceled' : state, lastStatus, attempts]);
}

export function urlMask(states: StoredUrlState[]): number {
  let mask = 0;
  for (const s of states) mask |= URL_STATE_BITS[s[0]];
  return mask;
}

/** The stored column read back; NULL (no attempt yet) is every URL pending. */
export function decodeUrlStates(json: string | null, count: number): StoredUrlState[] {
  if (json) return JSON.parse(json) as StoredUrlState[];
  return Array.from({ length: count }, () => ['pending', null, 0]);
}

export interface RoundAnswer {
  urlIndex: number;
  status: number | null;
  outcome: AttemptOutcome;
}

/**
 * The URLs' states once a round (scheduled, manual or replay) is recorded, given the delivery's state
 * and pending URLs after it (SPEC §4): a URL answered 2xx is delivered; one that failed is retrying
 * while the delivery will try it again, expired if its retries ran out, and otherwise failed — also
 * when another URL delivered the call, since then it is not retried. A URL left waiting when the
 * delivery ended is failed (it had failed before) or not attempted (it never was).
 */
export function urlStatesAfter(prev: StoredUrlState[], answers: RoundAnswer[], after: { state: DeliveryState; pendingUrls: number[] }): StoredUrlState[] {
  const open = isUnfinished(after.state);
  return prev.map(([state, lastStatus, attempts], i) => {
    const a = answers.find((x) => x.urlIndex === i);
    const waiting = open && after.pendingUrls.includes(i);
    if (a) {
      const next: StoredUrlState[0] =
        a.outcome === 'success'
          ? 'delivered'
          : waiting
            ? after.state === 'pending' ? 'pending' : 'retrying'
            : after.state === 'expired' && a.outcome === 'retryable' ? 'expired' : 'failed';
      return [next, a.status, attempts + 1];
    }
    if ((state === 'pending' || state === 'retrying') && !waiting) {
      return [state === 'pending' ? 'not_attempted' : after.state === 'expired' ? 'expired' : 'failed', lastStatus, attempts];
    }
    return [state, lastStatus, attempts];
  });
}

interface InFlightUrl {
  startedAt: number;
  /**
   * Set when this URL answered while others of its round are still out, with its attempt as it
   * stands (the detail shows it until the round records it: inFlightAttempts).
   */
  answer: { status: number | null; outcome: AttemptOutcome; attempt?: NewAttempt } | null;
}

/** One round out: its URLs by index. */
export type InFlightRound = Map<number, InFlightUrl>;

/** Rounds being sent, by delivery id (a replay may run beside a scheduled round). */
export class InFlight {
  private readonly rounds = new Map<number, Set<InFlightRound>>();

  start(deliveryId: number, urlIndexes: number[], at: number): InFlightRound {
    const round: InFlightRound = new Map(urlIndexes.map((i) => [i, { startedAt: at, answer: null }]));
    let set = this.rounds.get(deliveryId);
    if (!set) this.rounds.set(deliveryId, (set = new Set()));
    set.add(round);
    return round;
  }

  /** A URL of the round answered; true while others of the round are still out. */
  answered(round: InFlightRound, urlIndex: number, status: number | null, outcome: AttemptOutcome, attempt?: NewAttempt): boolean {
    const u = round.get(urlIndex);
    if (u) u.answer = { status, outcome, attempt };
    return [...round.values()].some((x) => x.answer === null);
  }

  /** The round is recorded (or abandoned): call it in the write that records it, so no reader sees both. */
  end(deliveryId: number, round: InFlightRound): void {
    const set = this.rounds.get(deliveryId);
    if (!set) return;
    set.delete(round);
    if (set.size === 0) this.rounds.delete(deliveryId);
  }

  /** Deliveries with an attempt out now. */
  deliveryIds(): number[] {
    const out: number[] = [];
    for (const [id, set] of this.rounds) if ([...set].some((r) => [...r.values()].some((u) => u.answer === null))) out.push(id);
    return out;
  }

  of(deliveryId: number): Set<InFlightRound> | undefined {
    return this.rounds.get(deliveryId);
  }
}

/**
 * The one builder of a call's per-URL outcomes: the stored states, with the rounds in flight laid
 * over them. A URL that already answered in a round still out shows that answer (delivered, or
 * failed/retrying as the round stands so far); the others show in flight since their start.
 */
export function urlOutcomes(urls: { url: string }[], stored: StoredUrlState[] | null, rounds?: Set<InFlightRound>): UrlOutcome[] {
  return urls.map((u, i) => {
    const s = stored?.[i] ?? ['pending', null, 0];
    const out: UrlOutcome = { url: maskUrlPassword(u.url), state: s[0], lastStatus: s[1], attempts: s[2], startedAt: null };
    if (rounds) {
      for (const round of rounds) {
        const f = round.get(i);
        if (!f) continue;
        if (f.answer === null) {
          out.state = 'in_flight';
          out.startedAt = formatTimestamp(f.startedAt);
        } else {
          const someoneDelivered = [...round.values()].some((x) => x.answer?.outcome === 'success');
          out.state = f.answer.outcome === 'success' ? 'delivered' : f.answer.outcome === 'retryable' && !someoneDelivered ? 'retrying' : 'failed';
          out.lastStatus = f.answer.status;
          out.attempts = s[2] + 1;
        }
      }
    }
    return out;
  });
}

/** True when a round of this delivery has a URL still out. */
export function hasUrlOut(rounds: Set<InFlightRound> | undefined): boolean {
  if (!rounds) return false;
  for (const r of rounds) for (const u of r.values()) if (u.answer === null) return true;
  return false;
}

/** The attempts of a delivery's rounds still out whose URL already answered: not recorded until their round ends. */
export function answeredInFlight(rounds: Set<InFlightRound> | undefined): NewAttempt[] {
  const out: NewAttempt[] = [];
  if (rounds) for (const r of rounds) for (const u of r.values()) if (u.answer?.attempt) out.push(u.answer.attempt);
  return out;
}

/** How many URLs of a delivery's rounds still out have answered: counted as attempts before their round is recorded. */
export function answeredCount(rounds: Set<InFlightRound> | undefined): number {
  let n = 0;
  if (rounds) for (const r of rounds) for (const u of r.values()) if (u.answer) n++;
  return n;
}
