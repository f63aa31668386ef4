import { buildWebhookBody } from '../webhook-body';
import { normalizeCall } from '../normalize';
import type { AliasKeys, JsonObject, NormalizedCall, PayloadFormat } from '../types';
import { buildRequestHeaders, userAgentOf } from '../webhook-request';
import { hmacSha1Hex } from './signature';

// What a receiver will get for a call the composer is about to send: normalized by the collector's
// own code (SPEC §3), then the dispatcher's body and signature (SPEC §4).

type Msg = Record<string, unknown>;

export interface Envelope {
  context?: JsonObject;
  integrations?: JsonObject;
  sentAt?: string;
}

/** The collector's own normalization (src/shared/normalize.ts), lenient so a call still being typed previews too. */
export function normalizeForPreview(item: Msg, envelope: Envelope, receivedAtMs: number): NormalizedCall {
  const r = normalizeCall(item, { envelope, receivedAt: receivedAtMs, newId: () => '', lenient: true });
  // Only a non-object item fails in lenient mode; items here are built by the composer.
  if (!r.ok) throw new Error(r.reason);
  return r.call;
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
  opts: { format: PayloadFormat; aliasKeys?: AliasKeys; userAgentProduct: string; sharedSecret?: string; headers?: Record<string, string> },
): Promise<WebhookPreview> {
  const body = JSON.stringify(buildWebhookBody(call, opts.format, opts.aliasKeys));
  // Encoded once: its length is Content-Length and its bytes are what gets signed, as on the wire.
  const bytes = new TextEncoder().encode(body);
  const signature = opts.sharedSecret ? await hmacSha1Hex(opts.sharedSecret, bytes) : null;
  const headers = buildRequestHeaders({ userAgent: userAgentOf(opts.userAgentProduct), signature, urlHeaders: opts.headers ?? {}, body: bytes });
  return { normalized: call, body, headers, signature };
}
