import { formatTimestamp, parseTimestamp } from '../timestamp';
import type { CallType, JsonObject } from '../types';

// The HTTP request the batching client sends for one queued message (SPEC §5, as the Go library
// sends it): POST {endpoint}/v1/batch, Basic auth with the write key as user name and an empty
// password, a JSON envelope {batch, context: {library}, messageId, sentAt}. Each item gets its
// type, a messageId and a timestamp when the message has none.

export interface ClientRequestOptions {
  endpoint: string;
  writeKey: string;
  /** messageId for the item when the message has none. */
  messageId: string;
  /** messageId of the batch envelope. */
  batchMessageId: string;
  /** ISO time the client stamps on the item when the message has no timestamp. */
  timestamp: string;
  sentAt: string;
  library?: { name: string; version: string };
  userAgent?: string;
}

export interface ClientRequestPreview {
  method: 'POST';
  url: string;
  headers: Record<string, string>;
  /** The envelope as sent (the item is `body.batch[0]`). */
  body: JsonObject;
}

export const DEFAULT_LIBRARY = { name: 'webhook-lab-client', version: '0.1.0' };

/** Base64 of the UTF-8 bytes; btoa alone only takes Latin-1. */
export function base64Utf8(text: string): string {
  let bin = '';
  for (const byte of new TextEncoder().encode(text)) bin += String.fromCharCode(byte);
  return btoa(bin);
}

export function basicAuth(writeKey: string): string {
  return `Basic ${base64Utf8(`${writeKey}:`)}`;
}

export function batchUrl(endpoint: string): string {
  return `${endpoint.replace(/\/+$/, '')}/v1/batch`;
}

/**
 * The item as the client puts it in the batch: the stamp (type, messageId, timestamp) first, then
 * the caller's keys; a given timestamp is re-written in UTC with milliseconds, as the client does.
 */
export function clientItem(type: CallType, message: JsonObject, opts: Pick<ClientRequestOptions, 'messageId' | 'timestamp'>): JsonObject {
  const { type: _t, messageId, timestamp, ...rest } = message;
  const given = parseTimestamp(timestamp);
  return {
    type,
    messageId: typeof messageId === 'string' && messageId ? messageId : opts.messageId,
    timestamp: given !== null ? formatTimestamp(given) : typeof timestamp === 'string' && timestamp ? timestamp : opts.timestamp,
    ...rest,
  };
}

export function clientRequest(type: CallType, message: JsonObject, opts: ClientRequestOptions): ClientRequestPreview {
  const headers: Record<string, string> = {
    Authorization: basicAuth(opts.writeKey),
    'Content-Type': 'application/json',
  };
  if (opts.userAgent) headers['User-Agent'] = opts.userAgent;
  return {
    method: 'POST',
    url: batchUrl(opts.endpoint),
    headers,
    body: {
      batch: [clientItem(type, message, opts)],
      context: { library: { ...(opts.library ?? DEFAULT_LIBRARY) } },
      messageId: opts.batchMessageId,
      sentAt: opts.sentAt,
    },
  };
}

/** The request as an HTTP/1.1 message, for display. */
export function formatHttpRequest(req: { method: string; url: string; headers: Record<string, string>; body: unknown }): string {
  const u = new URL(req.url);
  const lines = [`${req.method} ${u.pathname}${u.search} HTTP/1.1`, `Host: ${u.host}`];
  for (const [k, v] of Object.entries(req.headers)) lines.push(`${k}: ${v}`);
  return `${lines.join('\n')}\n\n${typeof req.body === 'string' ? req.body : JSON.stringify(req.body, null, 2)}`;
}
