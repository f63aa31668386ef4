// Domain types shared by the engine, the control API, IPC and the renderer: most come from the answers' one
// declaration in the *.output.ts files (issue 43) and are re-exported here, where their readers look.
// Plain data only: everything here crosses a process or network boundary as JSON.
import type { z } from 'zod';
import type { settingsOutput } from './settings.output';
import type { actionsMethodAnswer } from './call-summary.output';
import type { Delivery } from './call-detail.output';

/** A call's row in the list and its URLs' outcomes come from their one declaration (call-summary.output.ts). */
export type { ActionsVia, CallStatus, CallSummary, DeliveryState, UrlOutcome, UrlState } from './call-summary.output';
/** A call's detail, its deliveries and attempts, from theirs (call-detail.output.ts). */
export type {
  Attempt,
  AttemptOutcome,
  AttemptTiming,
  AttemptTrigger,
  CallDetail,
  Delivery,
  DeliveryKind,
  Forwarding,
  NormalizedCall,
  OutboundType,
  RequestMeta,
  StoredCall,
  TlsErrorKind,
  WebhookUrl,
} from './call-detail.output';
export type ActionsMethod = z.output<typeof actionsMethodAnswer>;

export { CALL_TYPES, type CallType } from './call-types';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** A source and its settings come from their one declaration (source.output.ts). */
export type { ActionsMapping, ActionsTrigger, DestinationMode, MappingValue, SecretVersion, Source, TriggerCondition, WebhookSettings } from './source.output';

/** The settings' types come from their one declaration, the API's output schema (settings.output.ts). */
export type Settings = z.output<typeof settingsOutput>;
export type RetrySchedule = Settings['retrySchedule'];
export type PayloadFormat = Settings['payloadFormat'];
/** Alias bodies' id keys: both spellings, only the documented `"Previous ID"`/`"User ID"`, or only `previousId`. */
export type AliasKeys = Settings['aliasKeys'];

/**
 * A delivery's progress fields as a recorded round left them: sent with each `attempt.recorded` event,
 * so the open detail is patched from the event (src/renderer/stores/detail-patch.ts), not read again.
 */
export type DeliveryProgress = Pick<
  Delivery,
  'state' | 'round' | 'attemptCount' | 'nextAttemptAt' | 'nextAttemptSimOffsetMs' | 'firstAttemptAt' | 'lastAttemptAt' | 'deliveredAt' | 'lastError'
>;

export type { BatchItemsPage } from './api-outputs';

export interface Page<T> {
  items: T[];
  total: number;
  /** Cursor for the next page (pass as `before`), null at the end. */
  next: number | null;
}

export type { StorageState } from './health.output';
