import { buildWebhookBody } from '../webhook-body';
import { applyClockSkew, formatTimestamp, parseTimestamp } from '../timestamp';
import type { CallType, JsonObject, NormalizedCall, PayloadFormat } from '../types';
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

function merged(under: JsonObject | undefined, over: unknown): JsonObject | undefined {
  if (!under && !isObject(over)) return undefined;
  return { ...(under ?? {}), ...(isObject(over) ? over : {}) };
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
    userId: id(item.userId) ?? null,
    anonymousId: id(item.anonymousId) ?? null,
    timestamp: formatTimestamp(skew.timestamp),
    receivedAt: formatTimestamp(receivedAtMs),
  };
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
    'User-Agent': `${opts.userAgentProduct}/1.0`,
    'Content-Type': 'application/json',
  };
  if (signature) headers['X-Signature'] = signature;
  Object.assign(headers, opts.headers ?? {});
  return { normalized: call, body, headers, signature };
}
