import type { Attempt, DeliveryProgress } from '../../../shared/types';
import type { Store } from '../store/store';
import type { ActiveDelivery } from '../store/delivery.types';
import type { HttpSender } from './http-sender';
import type { LaneLimits } from './lanes';

// What the dispatcher is given (engine.ts wires it), apart from the dispatcher, so that the parts it
// builds (manual-rounds.ts) and what it tells (in-flight-notices.ts) can name it without a circle.

/** What in-flight notices need of a delivery with a round out: which call lists its attempts, and their method. */
export type OutDelivery = Pick<ActiveDelivery, 'id' | 'callId' | 'method'>;

export interface DispatcherDeps {
  store: Store;
  sender: HttpSender;
  now: () => number;
  random: () => number;
  /** Called after each committed round or replay with what changed: its attempts and the delivery's progress (none for a call that only shows the change). */
  onAttempts: (callId: number, attempts: Attempt[], progress?: DeliveryProgress) => void;
  /**
   * A round went out, or one of its URLs answered while others are still out: what the inspector
   * shows as in flight changed (store.inFlight). Not called when a round's last URL answers (its
   * recording reports that).
   */
  onInFlight?: (callId: number, d: OutDelivery) => void;
  /** Per receiver endpoint: requests out at once, deliveries waiting in memory (lanes.ts). */
  lanes?: Partial<LaneLimits>;
  /** The properties a call's tracking plan omitted when it arrived (a replay made now leaves them out too, as ingest did). */
  omittedByPlan: (callId: number) => readonly string[];
  /** A round failed for a reason that is not the receiver's (a bug): logged, the row is resumed at the next start. */
  onError?: (err: unknown) => void;
}
