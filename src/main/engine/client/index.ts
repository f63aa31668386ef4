// Public entry of the batching client, built as the package export `webhook-lab/client`.
// It must import nothing outside src/main/engine/client and src/shared, and never Electron.
export { Analytics } from './analytics';
export {
  AnalyticsError,
  AnalyticsValidationError,
  ClientClosedError,
  DeliveryError,
  MessageTooLargeError,
  PersistenceError,
  QueueFullError,
  type AnalyticsErrorCode,
} from './errors';
export { MemoryPersistence, type Persistence, type QueuedMessage } from './persistence';
export {
  createFetchTransport,
  createUndiciTransport,
  TransportTimeoutError,
  type Transport,
  type TransportRequest,
  type TransportResponse,
} from './transport';
export { systemClock, type Clock } from './clock';
export { ManualClock } from './manual-clock';
export { debugEnabled, type Logger } from './logger';
export { classifyStatus } from './delivery';
export {
  BACKOFF_BASE_MS,
  BACKOFF_CAP_MS,
  DEFAULTS,
  LIBRARY_NAME,
  LIBRARY_VERSION,
  MAX_BATCH_BYTES,
  MAX_BATCH_MESSAGES,
  MAX_MESSAGE_BYTES,
  backoffDelay,
} from './constants';
export type {
  AliasMessage,
  GroupMessage,
  IdentifyMessage,
  MessageBase,
  PageMessage,
  ScreenMessage,
  TrackMessage,
} from './message';
export type {
  AnalyticsEvents,
  AnalyticsOptions,
  BatchResult,
  ClientStats,
  ConfigurePatch,
  DropEvent,
  EnqueueEvent,
  FlushEvent,
  FlushResult,
  FlushTrigger,
  ResolvedOptions,
  RetryEvent,
} from './types';
