import type { CallType, JsonObject, NormalizedCall } from './types';
import { collectorDropReason, isId, isPlainObject } from './message-rules';
import { applyClockSkew, checkTimestamp, formatTimestamp } from './timestamp';
import { callWalkProblem, MAX_CALL_DEPTH, nestsDeeperThan, NON_FINITE_REASON, nonFinitePath, TOO_DEEP_REASON } from './nesting';
import { formatPath } from './validation-error';

// One inbound item → the record the store keeps and the dispatcher builds bodies from (SPEC §3).
// Pure apart from id generation: no I/O, no de-duplication (the store owns that, it needs history).
// Single-call routes (/v1/track...) are expected to have set `type` from the route before calling.

/**
 * The version of the rules in this file (README, Decisions: normalize once). A received call is stored
 * as it arrived with this number, and its normalized form is rebuilt from it when read, by the rules
 * of the version it was stamped with: so the inspector shows what was true when the call arrived. A
 * change that alters any record (a field read, a merge, a format) bumps this and keeps the old rule
 * for older versions, branching on NormalizeOptions.version; tests/unit/normalize-version.test.ts
 * fails on a change to version 1's records. Calls stored before versions existed are version 1.
 *
 * Version 2 (2026-11-26): a call, or its batch's context or integrations, holding a number JSON cannot
 * carry (1e999, read as Infinity, written back as null) is dropped saying where, rather than stored
 * and forwarded with null there; and a messageId is made well-formed (a lone surrogate becomes U+FFFD),
 * as the calls list and the duplicate window already keep it.
 */
export const NORMALIZE_VERSION = 2;

/** Whether this build has the rules of that version (a newer build's calls read back as received only). */
export function knowsNormalizeVersion(version: number): boolean {
  return Number.isInteger(version) && version >= 1 && version <= NORMALIZE_VERSION;
}

export interface Envelope {
  context?: unknown;
  integrations?: unknown;
  sentAt?: unknown;
}

export interface NormalizeOptions {
  envelope?: Envelope;
  /** Arrival time, epoch ms. */
  receivedAt: number;
  /** messageId generator for items without one; UUID v4 by default. */
  newId?: () => string;
  /**
   * Previews: build the record even for a call the collector would drop (missing fields, a bad
   * timestamp is left out), so the composer can show the body while the user is still typing.
   */
  lenient?: boolean;
  /** The rules to apply: a stored call's own version when it is read back; NORMALIZE_VERSION when omitted. */
  version?: number;
}

/** `timestampMs`: the call's `timestamp` as epoch ms (after clock-skew correction). */
export type NormalizeResult = { ok: true; call: NormalizedCall; timestampMs: number } | { ok: false; reason: string };

const present = (v: unknown) => v !== undefined && v !== null;

/**
 * Envelope values go under the item's (decision: the item wins). Plain objects merge at every depth,
 * so an envelope `context.library` and an item `context.page` both survive, and an item's
 * `integrations.Webhooks: {...}` options merge with the envelope's. Anything else: the item's value.
 */
export function mergeUnder(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  // A JSON "__proto__" key is data, but Object.assign would set the prototype with it.
  if (Object.hasOwn(base, '__proto__') || Object.hasOwn(over, '__proto__')) return mergeWithProtoKey(base, over);
  // Object.assign copies both (several times faster than spreading two objects into one literal; the
  // item's values win, keys in the same order as assigning them one by one), then the few keys where
  // both sides hold objects are merged in turn. Hot: every event of every batch.
  const out = Object.assign({}, base, over);
  for (const k of Object.keys(base)) {
    const under = base[k];
    const v = over[k];
    if (isPlainObject(v) && isPlainObject(under) && Object.hasOwn(over, k)) out[k] = mergeUnder(under, v);
  }
  return out;
}

function mergeWithProtoKey(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base, ...over };
  for (const k of Object.keys(base)) {
    const under = base[k];
    const v = Object.hasOwn(over, k) ? over[k] : undefined;
    if (!isPlainObject(v) || !isPlainObject(under)) continue;
    Object.defineProperty(out, k, { value: mergeUnder(under, v), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function merged(envelopeValue: unknown, itemValue: unknown): JsonObject | undefined {
  // A non-object envelope value is ignored here; the collector's request checks report it.
  const base = isPlainObject(envelopeValue) ? envelopeValue : undefined;
  const own = isPlainObject(itemValue) ? itemValue : undefined;
  if (!base) return own as JsonObject | undefined;
  return mergeUnder(base, own ?? {}) as JsonObject;
}

// Numeric ids become strings (SPEC §3); blank ids are left out, as if absent.
const idText = (v: unknown): string | undefined => (isId(v) ? String(v) : undefined);

function parseTime(field: string, value: unknown): { ms?: number; reason?: string } {
  if (!present(value)) return {};
  const r = checkTimestamp(value);
  return r.ok ? { ms: r.ms } : { reason: `invalid ${field}: ${r.problem}` };
}

/**
 * What the collector checks and indexes of a call, read without building the rest: enough to drop
 * it, de-duplicate it and store its row. The full record (completeCall) is only needed to forward it.
 */
export interface CallHead {
  type: NormalizedCall['type'];
  messageId: string;
  /** `timestamp` after clock-skew correction, epoch ms. */
  timestampMs: number;
  /** The timestamp as sent, when skew correction replaced it. */
  originalMs?: number;
  sentMs?: number;
  userId?: string;
  anonymousId?: string;
  event?: string;
  name?: string;
}

export type HeadResult = { ok: true; head: CallHead } | { ok: false; reason: string };

export function readCallHead(item: unknown, opts: NormalizeOptions): HeadResult {
  // Asked for rules it does not have, this must not answer with today's: the caller checks first.
  if (opts.version !== undefined && opts.version !== NORMALIZE_VERSION && !knowsNormalizeVersion(opts.version)) {
    throw new RangeError(`normalization rules version ${opts.version} are unknown to this build (it has 1 to ${NORMALIZE_VERSION})`);
  }
  const version = opts.version ?? NORMALIZE_VERSION;
  const reason = collectorDropReason(item, version);
  if (reason !== null && !(opts.lenient && isPlainObject(item))) return { ok: false, reason };
  // collectorDropReason guarantees a plain object with a known call type.
  const m = item as Record<string, unknown>;
  const envelope = opts.envelope ?? {};
  if (!opts.lenient && envelopeTooDeep(envelope)) return { ok: false, reason: TOO_DEEP_REASON };
  const envelopeReason = !opts.lenient && version >= 2 ? envelopeNonFinite(envelope) : null;
  if (envelopeReason !== null) return { ok: false, reason: envelopeReason };

  const ts = parseTime('timestamp', m.timestamp);
  if (ts.reason && !opts.lenient) return { ok: false, reason: ts.reason };
  const sent = parseTime('sentAt', present(m.sentAt) ? m.sentAt : envelope.sentAt);
  if (sent.reason && !opts.lenient) return { ok: false, reason: sent.reason };
  const skew = applyClockSkew({ receivedAt: opts.receivedAt, timestamp: ts.ms, sentAt: sent.ms });

  const given = idText(m.messageId);
  const messageId = version >= 2 ? given?.toWellFormed() : given;
  const head: CallHead = { type: m.type as CallType, messageId: messageId ?? (opts.newId ?? defaultId)(), timestampMs: skew.timestamp };
  if (skew.originalTimestamp !== undefined) head.originalMs = skew.originalTimestamp;
  if (sent.ms !== undefined) head.sentMs = sent.ms;
  const userId = idText(m.userId);
  const anonymousId = idText(m.anonymousId);
  if (userId !== undefined) head.userId = userId;
  if (anonymousId !== undefined) head.anonymousId = anonymousId;
  if (typeof m.event === 'string') head.event = m.event;
  if (typeof m.name === 'string') head.name = m.name;
  return { ok: true, head };
}

/** Per envelope object: every item of a batch shares it, so a wide envelope is walked once. */
const deepEnvelopes = new WeakMap<Envelope, boolean>();
const nonFiniteEnvelopes = new WeakMap<Envelope, string | null>();

/** Where a batch's context or integrations holds a number JSON cannot carry (version 2), once per batch. */
function envelopeNonFinite(envelope: Envelope): string | null {
  if (envelope.context === undefined && envelope.integrations === undefined) return null;
  let reason = nonFiniteEnvelopes.get(envelope);
  if (reason === undefined) {
    const key = (['context', 'integrations'] as const).find((k) => callWalkProblem(envelope[k], MAX_CALL_DEPTH - 1) === 'non-finite');
    reason = key ? `${formatPath([key, ...nonFinitePath(envelope[key])])}: ${NON_FINITE_REASON}` : null;
    nonFiniteEnvelopes.set(envelope, reason);
  }
  return reason;
}

/**
 * Whether the envelope's context or integrations, merged into each call one level down (the call is
 * level 1), would nest it deeper than the limit: the call is then dropped like one sent that deep.
 */
function envelopeTooDeep(envelope: Envelope): boolean {
  if (envelope.context === undefined && envelope.integrations === undefined) return false;
  let deep = deepEnvelopes.get(envelope);
  if (deep === undefined) {
    deep = nestsDeeperThan(envelope.context, MAX_CALL_DEPTH - 1) || nestsDeeperThan(envelope.integrations, MAX_CALL_DEPTH - 1);
    deepEnvelopes.set(envelope, deep);
  }
  return deep;
}

/** The full record of a call readCallHead accepted (same item, same options, so the same version). */
export function completeCall(item: Record<string, unknown>, head: CallHead, opts: NormalizeOptions): NormalizedCall {
  const m = item;
  const envelope = opts.envelope ?? {};
  const call: NormalizedCall = {
    type: head.type,
    messageId: head.messageId,
    timestamp: formatTimestamp(head.timestampMs),
    receivedAt: formatTimestamp(opts.receivedAt),
  };
  if (head.userId !== undefined) call.userId = head.userId;
  if (head.anonymousId !== undefined) call.anonymousId = head.anonymousId;
  if (head.event !== undefined) call.event = head.event;
  if (head.name !== undefined) call.name = head.name;
  if (typeof m.category === 'string') call.category = m.category;
  const groupId = idText(m.groupId);
  const previousId = idText(m.previousId);
  if (groupId !== undefined) call.groupId = groupId;
  if (previousId !== undefined) call.previousId = previousId;
  if (isPlainObject(m.properties)) call.properties = m.properties as JsonObject;
  if (isPlainObject(m.traits)) call.traits = m.traits as JsonObject;
  const context = merged(envelope.context, m.context);
  const integrations = merged(envelope.integrations, m.integrations);
  if (context) call.context = context;
  if (integrations) call.integrations = integrations;
  if (head.originalMs !== undefined) call.originalTimestamp = formatTimestamp(head.originalMs);
  if (head.sentMs !== undefined) call.sentAt = formatTimestamp(head.sentMs);
  return call;
}

export function normalizeCall(item: unknown, opts: NormalizeOptions): NormalizeResult {
  const r = readCallHead(item, opts);
  if (!r.ok) return r;
  return { ok: true, call: completeCall(item as Record<string, unknown>, r.head, opts), timestampMs: r.head.timestampMs };
}

/**
 * How the collector reads a parsed request body into items and an envelope (a rule of the normalize
 * version too). Used when a request arrives and again when a stored call is read back (its
 * normalized form is rebuilt from the stored body rather than stored twice), so the two agree. A single-call route names the type,
 * whatever the body says. The caller has checked that a batch body has a `batch` array.
 */
export function requestItems(body: Record<string, unknown>, route: CallType | 'batch'): { items: unknown[]; envelope: Envelope } {
  if (route !== 'batch') return { items: [{ ...body, type: route }], envelope: {} };
  return { items: body.batch as unknown[], envelope: { context: body.context, integrations: body.integrations, sentAt: body.sentAt } };
}

function defaultId(): string {
  return globalThis.crypto.randomUUID();
}
