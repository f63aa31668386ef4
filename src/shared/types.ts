// Domain types shared by the engine, the control API, IPC and the renderer.
// Plain data only: everything here crosses a process or network boundary as JSON.
import type { CollectorFaults } from './collector-faults';
import type { z } from 'zod';
import type { settingsOutput } from './settings.output';
import type { actionsMethodAnswer } from './call-summary.output';
import type { Delivery, WebhookUrl } from './call-detail.output';

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

/** Which requests a source's Webhooks destination sends: Classic's, Webhooks (Actions)', or both. */
export type DestinationMode = 'classic' | 'actions' | 'both';
/** A bare string means equals. */
export type TriggerCondition = string | { equals: string } | { contains: string } | { oneOf: string[] };
/** Conditions on the call; every one given must hold, none given matches every call. */
export interface ActionsTrigger {
  type?: TriggerCondition;
  event?: TriggerCondition;
}

/** A mapping field's value: literal text, or one of the mapping kit's directives (`{"@path": "$.userId"}`). */
export type MappingValue = string | JsonObject;

/** One Webhooks (Actions) mapping: which calls it takes and the request it makes of each. */
export interface ActionsMapping {
  name: string;
  /** FQL as Segment's trigger editor writes it (`type = "track" and properties.plan = "pro"`), or the older object form. */
  trigger: ActionsTrigger | string;
  /** A URL, or a mapping directive resolved per call (`{"@template": "https://r.example/u/{{userId}}"}`), as Segment's field takes either. */
  url: MappingValue;
  method: ActionsMethod;
  /** Each value text or a directive, resolved per call. */
  headers: Record<string, MappingValue>;
  /** omitted = the whole event ({"@path": "$."}) */
  data?: Json;
  /** omitted = no batching; 1..4000 */
  batchSize?: number;
}

/**
 * The new fields are optional so that settings stored or written before Actions existed stay valid;
 * read them through webhookMode() and webhookMappings() (src/shared/actions/mode.ts), never directly.
 */
export interface WebhookSettings {
  enabled: boolean;
  urls: WebhookUrl[];
  sharedSecret?: string;
  /** Omitted = 'classic'. */
  mode?: DestinationMode;
  /** Omitted = none. At most 5. */
  mappings?: ActionsMapping[];
  /** `whsec_` + base64 key: adds the Standard Webhooks headers to Classic and Actions requests. */
  standardWebhooksSecret?: string;
}

export interface Source {
  id: string;
  name: string;
  writeKey: string;
  createdAt: string;
  webhooks: WebhookSettings;
  /** Fault injection on the way in (shared/collector-faults.ts); null when none. In memory only. */
  collectorFaults: CollectorFaults | null;
  /** The current version of each secret (kept once, versioned: README, Decisions); absent or null = none. Read-only. */
  secretVersions?: { sharedSecret?: SecretVersion | null; standardWebhooksSecret?: SecretVersion | null };
}

/** One version of a source's secret (the secret itself is in its webhooks). */
export interface SecretVersion {
  /** 1, 2, …: each change of the secret is a new version. */
  version: number;
  createdAt: string;
  /** Made by a rotation: until createdAt + the secretRotationWindowMs setting, Standard Webhooks requests carry the previous version's signature too. */
  rotated: boolean;
}

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

/** A page of an Actions batch's items (getBatchItems): each item's exact JSON text in the body sent. */
export interface BatchItemsPage {
  deliveryId: number;
  offset: number;
  /** Items in the batch. */
  total: number;
  /** From `offset`, in array order; fewer than asked near the end, or when a page reaches 1 MB. */
  items: { item: number; callId: number; data: string }[];
}

export interface Page<T> {
  items: T[];
  total: number;
  /** Cursor for the next page (pass as `before`), null at the end. */
  next: number | null;
}

export type { StorageState } from './health.output';
