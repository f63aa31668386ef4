import type { AttemptTrigger, Settings, Source } from '../../../shared/types';
import type { ActiveDelivery, SigningSecrets } from '../store/delivery.types';
import type { HttpSender } from './http-sender';
import { sendRound, type RoundRequest, type RoundResult } from './round';

// The one way a round goes out (issue 41): scheduled, a bulk retry's (`manual`), a replay's, a
// receiver check's (`probe`). Each enters as a request — the delivery, its URLs, the trigger — and
// goes out through its receivers' lanes, which are the queue's waiting room (lane-scheduler.ts): a
// scheduled delivery waits there before it is admitted (in a lane's memory queue, or parked as a row)
// and comes here with its slots taken; every other request waits here for a slot per URL, first in
// line as its lane frees. So a receiver's lane bounds everything sent to it, whoever asked. Nothing
// else in the engine calls sendRound (tests/integration/run-queue.test.ts).

/** A round asked for. */
export interface RunRequest {
  delivery: ActiveDelivery;
  /** Its URLs (indexes into delivery.urls) this round sends to. */
  urls: number[];
  /** Why it goes out, as its attempts record it; only `scheduled` comes with its slots already taken. */
  trigger: AttemptTrigger;
  /** Sent in place of the delivery's body (an edited replay, a check's tampered body). */
  body?: Buffer;
  /** Each URL as it answers (the inspector's round in flight, a check's judgement). */
  onAnswer?: RoundRequest['onAnswer'];
  /**
   * What a receiver check sends with, which the lab does not keep: its own transport (whether it
   * trusts the receiver's certificate), settings and secret. Other rounds use the lab's.
   */
  via?: { sender: HttpSender; source: Source; settings: Settings; secrets: SigningSecrets };
}

/**
 * A round someone asked for (a bulk retry, a replay, a receiver check): never `scheduled`, whose
 * slots only the scheduler takes, so what reaches the run queue from outside always waits for its lanes.
 */
export type AskedRun = RunRequest & { trigger: Exclude<AttemptTrigger, 'scheduled'> };

export interface RunQueueDeps {
  sender: HttpSender;
  store: { settings: { get(): Settings }; sources: { get(id: string): Source | undefined }; signingSecrets: SigningSecrets };
  now: () => number;
  /** A slot in the URL's receiver lane, and its release (lane-scheduler.ts `slot`). */
  slot(url: string): Promise<() => void>;
}

export class RunQueue {
  constructor(private readonly deps: RunQueueDeps) {}

  /**
   * Sends the round once its URLs have their slots (each timed from when it got one: `waitedMs`).
   * Rejects with LaneClosedError when the lab stops while a URL waits.
   */
  async run(req: RunRequest): Promise<RoundResult> {
    const { store, now } = this.deps;
    const d = req.delivery;
    const via = req.via;
    return sendRound({
      sender: via?.sender ?? this.deps.sender,
      d,
      urlIndexes: req.urls,
      // As it is now (undefined once deleted): a manual round or a replay signs with its current secrets.
      source: via ? via.source : store.sources.get(d.sourceId),
      settings: via?.settings ?? store.settings.get(),
      secrets: via?.secrets ?? store.signingSecrets,
      round: d.round + 1,
      trigger: req.trigger,
      now,
      body: req.body,
      onAnswer: req.onAnswer,
      slot: req.trigger === 'scheduled' ? undefined : this.deps.slot,
    });
  }
}
