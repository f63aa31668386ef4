import type { ApiHandlers, EngineEvent, OpParsed } from '../../shared/api.contract';
import type { ExportStream } from './simulation/export';
import type { Config } from '../../shared/config.schema';
import type { SettingsPatch } from '../../shared/settings.schema';
import type { LaneLimits } from './dispatcher/lanes';
import type { Store } from './store/store';
import type { TrackingPlans } from './tracking-plans/service';

export interface EngineOptions {
  /** Folder for the SQLite database, the generated TLS certificate and other state. */
  dataDir: string;
  /** The folder is the lab's own (the default app-data folder): made owner-only whatever it holds (store/data-folder.ts). */
  ownedDataDir?: boolean;
  collectorHost?: string; // default 127.0.0.1
  collectorPort?: number; // default 8787; 0 picks a free port
  /** Applied idempotently at start (sources matched by name). */
  config?: Config;
  /** Command-line overrides (--strict, --time-scale), applied after the config file. */
  overrides?: SettingsPatch;
  /** Path of a better-sqlite3 addon built for this runtime (Electron uses its own ABI). */
  sqliteNativeBinding?: string;
  log?: (line: string) => void;
  /** The control API's port when the caller serves one (serve's --ui-port): a config's URL there is the lab's own. */
  apiPort?: number;
  /** Mock receiver listeners; default: 8789/8790 at first start, then the ports chosen then. */
  mockReceiverPorts?: { http: number; https: number };
  /** Per receiver endpoint: scheduled requests out at once and deliveries waiting in memory (default 128 and 256). */
  lanes?: Partial<LaneLimits>;
  /** Tests: the store once opened (to cap its size as a full disk would, Store.capSize) and the tracking plans made on it (to give them a check pool). */
  onStore?: (store: Store, plans: TrackingPlans) => void;
}

export interface Engine {
  readonly collectorUrl: string;
  readonly dataDir: string;
  /** Every operation of the API contract; input must already be parsed with the op's schema. */
  readonly handlers: ApiHandlers;
  /**
   * What exportDeliveries returns, as text pulled a piece at a time (GET /api/export/file): a large
   * export is never held in memory whole. Throws a ValidationError for a bad filter.
   */
  openExport(input: OpParsed<'exportDeliveries'>): ExportStream;
  /** Engine events in batches (coalesced per tick). Returns an unsubscribe function. */
  onEvents(listener: (events: EngineEvent[]) => void): () => void;
  /** The control server says where it listens: a config's URL at that port is the lab's own (config-receivers.ts). */
  servesApiOn(port: number): void;
  /**
   * The control API is cutting requests it will not answer (its close ran out of grace): work begun
   * for them that would change the lab (a config import) is not committed. stop() does it first too.
   */
  abandonUnanswered(): void;
  /** Stop accepting, finish or persist in-flight work, close the database. */
  stop(): Promise<void>;
}
