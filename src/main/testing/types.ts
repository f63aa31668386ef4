import type { z } from 'zod';
import type { configSourceSchema } from '../../shared/config.schema';
import type { MockReceiverInput, SignatureState } from '../../shared/mock-receiver.schema';
import type { SettingsPatch } from '../../shared/settings.schema';
import type { trackingPlanInputSchema, Violation } from '../../shared/tracking-plan.schema';

// The public types of `webhook-lab/testing` (docs/testing.md). They name only src/shared's types, so
// the published declarations pull in nothing of the engine.

/** A call as the collector received it: the JSON object the client sent (for a batch, its item), with `type` added when the route gave it (POST /v1/track). */
export interface LabCall {
  type: string;
  [key: string]: unknown;
}

/** A request one of the lab's receivers got (docs/mock-receivers.md), with its answer and signature verdicts. */
export interface LabDelivery {
  /** The receiver's name. */
  receiver: string;
  receiverId: string;
  /** When it arrived (ISO 8601). */
  at: string;
  method: string;
  /** Path with query string, as requested. */
  path: string;
  /** Lowercased header names. */
  headers: Record<string, string>;
  /** The body parsed as JSON, or its text when it is not JSON. */
  body: unknown;
  /** The status the receiver answered; null when it reset or hung up instead. */
  status: number | null;
  /** X-Signature checked with the receiver's `secret`: valid, invalid, missing or not_checked. */
  signature: SignatureState;
  /** webhook-signature checked with the receiver's `standardWebhooksSecret`. */
  standardWebhooks: SignatureState;
  /** Why a signature is not valid, in words (null when valid or not checked). */
  signatureReason: string | null;
}

/** A call its source's tracking plan found violations in (or blocked), with what it found when the call arrived. */
export interface LabViolation {
  call: LabCall;
  violations: Violation[];
  /** Why enforcement blocked it (the call was not forwarded); null when it was let through. */
  blocked: string | null;
  /** The plan's name. */
  plan: string | null;
}

/**
 * What a call (or delivery) must look like: a partial object compared deeply with it (keys it names
 * must match, others are ignored; arrays item by item; a RegExp tests a string; a function tests the
 * value there), or a predicate over the whole of it.
 */
export type Match<T> = ((value: T) => boolean) | { [K in keyof T]?: MatchValue };

/** A value inside a match. */
export type MatchValue =
  | string
  | number
  | boolean
  | null
  | undefined
  | RegExp
  // `any`: an inline predicate (`total: (t) => t > 40`) takes its parameter's type from here, and a
  // call's nested values have no type the compiler knows.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  | ((value: any) => boolean)
  | readonly MatchValue[]
  | { [key: string]: MatchValue };

export interface CallsOptions {
  /**
   * Also the calls the lab dropped (unknown write key, no userId or anonymousId, a repeated
   * messageId, …): the app sent them but the lab did not accept them. Default false: only calls the
   * lab accepted, and those a tracking plan blocked.
   */
  includeDropped?: boolean;
}

export interface WaitOptions {
  /** How long to wait (default 4000 ms, under the 5 s a Vitest or Jest test may take by default). */
  timeoutMs?: number;
}

export interface Lab {
  /** Where clients send: analytics.js's host, analytics-node's `host`, curl's URL root. */
  readonly collectorUrl: string;
  /** The write key of the lab's first source (startLab: "Test" unless you gave sources). */
  readonly writeKey: string;
  /** Every source with its write key (startLab: as given, in order). */
  readonly sources: { id: string; name: string; writeKey: string }[];
  /** The control API (`…/api`) and its token; null for a lab started without `ui`. */
  readonly apiUrl: string | null;
  readonly token: string | null;
  /** The web UI with its token, when started with `ui: true` (or the lab connected to serves one). */
  readonly uiUrl: string | null;
  /** The calls the lab accepted (or a tracking plan blocked) since the start or the last reset(), oldest first, newest last; those matching `match` when given. */
  calls(match?: Match<LabCall>, options?: CallsOptions): Promise<LabCall[]>;
  /** The first call matching, one already received or the next to come; rejects after `timeoutMs` with the closest calls seen and how each differs. */
  waitForCall(match: Match<LabCall>, options?: WaitOptions & CallsOptions): Promise<LabCall>;
  /** Resolves once `count` calls match (with every call matching then, at least `count`, oldest first). */
  waitForCalls(match: Match<LabCall>, options: WaitOptions & CallsOptions & { count: number }): Promise<LabCall[]>;
  /** Resolves after `forMs` (default 1000) if no call matching was received (before or during); rejects as soon as one is. */
  expectNoCall(match: Match<LabCall>, options?: CallsOptions & { forMs?: number }): Promise<void>;
  /** What the lab's receivers got, oldest first; those matching when given. */
  deliveries(match?: Match<LabDelivery>): Promise<LabDelivery[]>;
  /** The first request a receiver got matching, received already or the next; rejects after `timeoutMs` as waitForCall does. */
  waitForDelivery(match: Match<LabDelivery>, options?: WaitOptions): Promise<LabDelivery>;
  /** Calls a tracking plan found violations in (or blocked), oldest first; rejects when no source of the lab has a plan. */
  violations(match?: Match<LabViolation>): Promise<LabViolation[]>;
  /** Forgets every call (deleted from the lab, unfinished deliveries canceled) and every request the receivers recorded, including one that arrived before it returned (a delivery in flight). */
  reset(): Promise<void>;
  /** startLab: closes every port and removes the lab's folder. connectLab: stops waiting (the lab keeps running). Afterwards the other methods reject ("the lab was stopped"). */
  stop(): Promise<void>;
}

export interface StartLabOptions {
  /** Sources as in the config file (docs: Config file); default one source named "Test". Its write key is generated unless given. */
  sources?: z.input<typeof configSourceSchema>[];
  /** Mock receivers as in the config file's mockReceivers; each no source sends to is attached to the first source (its URL added to the source's Webhooks URLs). */
  receivers?: MockReceiverInput[];
  /** Tracking plans as in the config file; connect one with a source's `trackingPlan: { name }`. */
  trackingPlans?: z.input<typeof trackingPlanInputSchema>[];
  /** Settings as in the config file (payloadFormat, retrySchedule, …). */
  settings?: SettingsPatch;
  /** Retry time-warp factor (as `--time-scale`). */
  timeScale?: number;
  /** Strict collector (as `--strict`): unknown write key → 401, invalid call → 400. */
  strict?: boolean;
  /** Also serve the control API and the web UI on a free port (apiUrl, token, uiUrl). Default false. */
  ui?: boolean;
  /** Collector port; default 0 (any free port). */
  collectorPort?: number;
  /** The engine's log lines (warnings, retention); default none. */
  log?: (line: string) => void;
}

export interface ConnectLabOptions {
  /** The control API: the `api:` line `webhook-lab serve` prints (with or without /api). */
  apiUrl: string;
  /** Its token (--token, WEBHOOK_LAB_TOKEN, or the one serve printed). */
  token: string;
  /** Only this source's calls (by name), and its write key as `writeKey`; default every source, the first one's write key. */
  source?: string;
}
