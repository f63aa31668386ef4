import { buildWebhookBody } from '../webhook-body';
import { applyClockSkew, formatTimestamp, parseTimestamp } from '../timestamp';
import type { CallType, JsonObject, NormalizedCall, PayloadFormat } from '../types';
import { RESERVED_HEADERS } from '../source.schema';
import { hmacSha1Hex } from './signature';

// What a receiver will get for a call the composer is about to send, derived the way the collector
// normalizes (SPEC §3): envelope context/integrations merged under the item's own (item wins),
// envelope sentAt for items without one, receivedAt = arrival, clock-skew correction of timestamp,
// ids stringified. Then the dispatcher's body and signature (SPEC §4).

type Msg = Record<string, unknown>;

export interface Envelope {
  context?: JsonObject;
  integrations?: JsonObject;
  sentAt?: string;
}

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

function id(v: unknown): string | undefined {
  if (typeof v === 'string' && v !== '') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

// Plain objects merge at every depth (the collector's rule), so envelope context.library and an
// item's context.page both survive; otherwise the item's value wins.
function mergeUnder(base: JsonObject, over: JsonObject): JsonObject {
  const out: JsonObject = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isObject(v) && isObject(b) ? mergeUnder(b, v) : v;
  }
  return out;
}

function merged(under: JsonObject | undefined, over: unknown): JsonObject | undefined {
  const own = isObject(over) ? over : undefined;
  if (!under) return own;
  return mergeUnder(under, own ?? {});
}

/** The collector's normalized record for one batch item (the item carries its `type`). */
export function normalizeForPreview(item: Msg, envelope: Envelope, receivedAtMs: number): NormalizedCall {
  const sentAtText = str(item.sentAt) ?? envelope.sentAt;
  const ts = parseTimestamp(item.timestamp);
  const sentAt = parseTimestamp(sentAtText);
  const skew = applyClockSkew({ receivedAt: receivedAtMs, timestamp: ts ?? undefined, sentAt: sentAt ?? undefined });
  const call: NormalizedCall = {
    type: item.type as CallType,
    messageId: id(item.messageId) ?? '',
    timestamp: formatTimestamp(skew.timestamp),
    receivedAt: formatTimestamp(receivedAtMs),
  };
  if (id(item.userId) !== undefined) call.userId = id(item.userId);
  if (id(item.anonymousId) !== undefined) call.anonymousId = id(item.anonymousId);
  if (str(item.event) !== undefined) call.event = str(item.event);
  if (str(item.name) !== undefined) call.name = str(item.name);
  if (str(item.category) !== undefined) call.category = str(item.category);
  if (id(item.groupId) !== undefined) call.groupId = id(item.groupId);
  if (id(item.previousId) !== undefined) call.previousId = id(item.previousId);
  if (isObject(item.properties)) call.properties = item.properties;
  if (isObject(item.traits)) call.traits = item.traits;
  const context = merged(envelope.context, item.context);
  if (context) call.context = context;
  const integrations = merged(envelope.integrations, item.integrations);
  if (integrations) call.integrations = integrations;
  if (skew.originalTimestamp !== undefined) call.originalTimestamp = formatTimestamp(skew.originalTimestamp);
  if (sentAt !== null) call.sentAt = formatTimestamp(sentAt);
  return call;
}

export interface WebhookPreview {
  normalized: NormalizedCall;
  /** The exact bytes the dispatcher sends (compact JSON). */
  body: string;
  headers: Record<string, string>;
  signature: string | null;
}

export async function webhookPreview(
  call: NormalizedCall,
  opts: { format: PayloadFormat; userAgentProduct: string; sharedSecret?: string; headers?: Record<string, string> },
): Promise<WebhookPreview> {
  const body = JSON.stringify(buildWebhookBody(call, opts.format));
  const signature = opts.sharedSecret ? await hmacSha1Hex(opts.sharedSecret, body) : null;
  const headers: Record<string, string> = {
    'User-Agent': userAgent(opts.userAgentProduct),
    'Content-Type': 'application/json',
    'Content-Length': String(new TextEncoder().encode(body).length),
  };
  if (signature) headers['X-Signature'] = signature;
  for (const [name, value] of Object.entries(opts.headers ?? {})) {
    if (!RESERVED_HEADERS.includes(name.toLowerCase())) headers[name] = value;
  }
  return { normalized: call, body, headers, signature };
}

/** `Segment.io` → `Segment.io/1.0`; a full product token (`Acme/2.3`) is used as given. */
export function userAgent(product: string): string {
  const p = product.trim();
  if (p === '') return 'Segment.io/1.0';
  return p.includes('/') ? p : `${p}/1.0`;
}
