import type { ApiHandlers, OpName } from '../../../shared/api.contract';
import type { StoppedSide } from '../../../shared/actions/mode';
import type { Store } from '../store/store';
import type { Ingest } from '../collector/ingest';
import type { EventHub } from '../event-hub';
import type { TrackingPlans } from '../tracking-plans/service';
import type { CallDetails } from '../call-detail';

/** What every simulation feature may use. */
export interface SimulationDeps {
  store: Store;
  /** `ingest.inject([...])` stores calls the app makes itself and forwards them like received ones. */
  ingest: Ingest;
  events: EventHub;
  /** The engine's tracking plans: the config's import and export read and write them. */
  plans: TrackingPlans;
  /** The read model of a call (call-detail.ts): an export's JSON Lines are its details. */
  details: CallDetails;
  now: () => number;
  random: () => number;
  dataDir: string;
  collectorUrl: () => string;
  log: (line: string) => void;
  /** Ends a source's unfinished deliveries as canceled (its Webhooks were turned off): the dispatcher's. */
  cancelDeliveries: (sourceId: string, reason: string, side?: StoppedSide) => Promise<number>;
}

/** A feature implements some operations of the contract, and may own timers or servers. */
export interface Feature<K extends OpName> {
  handlers(): Pick<ApiHandlers, K>;
  start?(): Promise<void> | void;
  stop?(): Promise<void> | void;
}
