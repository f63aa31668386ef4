import { z } from 'zod';
import { isWellFormedText, LONE_SURROGATE } from './well-formed';
import { secretProblem } from './standard-webhooks';

// Mock receivers (SPEC §7): the definition schema, shared by the config file key `mockReceivers`,
// the control API and the UI, plus the record types every received request produces.
// Strict objects everywhere, so a typo such as `failfirst` is refused with its path.

/** Delays above this make no sense for a receiver the dispatcher gives up on after 5 s (10 s for Actions). */
export const MAX_DELAY_MS = 120_000;
export const DEFAULT_STATUS = 200;
/** With failFirst/failPercent, `status` is the failure status; this is its default. */
export const DEFAULT_FAILURE_STATUS = 500;
export const SUCCESS_STATUS = 200;
/** A per-item answer's HTTP status when every item got a 2xx, and when any did not. */
export const ITEMS_ALL_OK_STATUS = 200;
export const ITEMS_MIXED_STATUS = 207;
/** A failing item's status with itemFailPercent, unless itemFailStatus says otherwise. */
export const DEFAULT_ITEM_FAILURE_STATUS = 500;
/** A per-item answer reads the whole body to count its items; a body past this is answered as one item. */
export const MAX_ITEMS_BODY_BYTES = 16 * 1_048_576;

// Headers the host sets from the body it writes; letting a behavior replace them would corrupt framing.
const FRAMING_HEADERS = ['content-length', 'transfer-encoding', 'connection'];
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

const responseHeadersSchema = z.record(z.string(), z.string()).superRefine((headers, ctx) => {
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: `invalid header name "${name}"` });
    else if (FRAMING_HEADERS.includes(name.toLowerCase())) {
      ctx.addIssue({ code: 'custom', path: [name], message: `header "${name}" is set by the mock receiver and cannot be replaced` });
    }
    if (!HEADER_VALUE.test(value)) ctx.addIssue({ code: 'custom', path: [name], message: `invalid value for header "${name}"` });
  }
});

const delayMs = z.number().int().min(0).max(MAX_DELAY_MS);

export const mockBehaviorSchema = z
  .strictObject({
    /** Answer status; with failFirst/failPercent it is the status of the failing answers. */
    status: z.number().int().min(200).max(599).optional(),
    /** Fixed delay before answering (or resetting). */
    delayMs: delayMs.optional(),
    /** Random delay, uniform in [minMs, maxMs]. */
    delay: z
      .strictObject({ minMs: delayMs, maxMs: delayMs })
      .refine((d) => d.minMs <= d.maxMs, { path: ['maxMs'], message: 'must be at least minMs' })
      .optional(),
    /** Accept the request and never answer, until the client gives up. */
    hang: z.boolean().optional(),
    /** Fail the first N requests, then answer 200. */
    failFirst: z.number().int().min(0).max(1_000_000).optional(),
    /** Fail this percentage of requests (after the failFirst ones), decided by a seeded generator. */
    failPercent: z.number().min(0).max(100).optional(),
    /** Seed of the pass/fail sequence and of random delays: the same seed gives the same sequence. */
    seed: z.number().int().min(0).max(0xffffffff).optional(),
    /** Destroy the connection (TCP reset) instead of answering. */
    reset: z.boolean().optional(),
    /** Response body text; JSON text gets `application/json` unless headers say otherwise. */
    body: z.string().max(1_048_576).optional(),
    /** Extra response headers. */
    headers: responseHeadersSchema.optional(),
    /**
     * Per-item answer to a batch (a JSON-array body): item i gets itemStatuses[i % length]; the
     * answer is a JSON array of `{ "status": n }`, one per item. A body that is not a JSON array is one item.
     */
    itemStatuses: z.array(z.number().int().min(200, { message: 'an item status from 200 to 599' }).max(599, { message: 'an item status from 200 to 599' }))
      .min(1, { message: 'at least one status, e.g. [200, 500]' }).max(1000).optional(),
    /** Per-item answer where each item fails with this probability (seeded, as failPercent is). */
    itemFailPercent: z.number().min(0).max(100).optional(),
    /** A failing item's status with itemFailPercent (default 500). */
    itemFailStatus: z.number().int().min(300, { message: 'a failure status from 300 to 599' }).max(599, { message: 'a failure status from 300 to 599' }).optional(),
    /** HTTP status of a per-item answer; default 200 when every item got a 2xx, else 207 Multi-Status. */
    batchStatus: z.number().int().min(200).max(599).optional(),
    /**
     * Answer 401 when the X-Signature (with `secret`) or webhook-signature (with `standardWebhooksSecret`)
     * check fails. Without it the check is only recorded: the receiver accepts any signature.
     */
    enforceSignature: z.boolean().optional(),
    /** Answer 409 to a call whose messageId this receiver already accepted (the last 10,000; reset clears them). */
    rejectDuplicates: z.boolean().optional(),
    /** Answer 400 to a call whose `type` is not one of these (e.g. no "screen": 400 to screen calls). */
    knownTypes: z.array(z.string().min(1).max(50)).min(1).max(20).optional(),
  })
  .superRefine((b, ctx) => {
    if (b.delayMs !== undefined && b.delay !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['delay'], message: 'use either delayMs (fixed) or delay (random), not both' });
    }
    if (b.hang && b.reset) ctx.addIssue({ code: 'custom', path: ['reset'], message: 'hang and reset cannot both be set' });
    const gated = b.failFirst !== undefined || b.failPercent !== undefined;
    if (gated && b.status !== undefined && b.status < 300 && !b.hang && !b.reset) {
      ctx.addIssue({ code: 'custom', path: ['status'], message: 'with failFirst/failPercent, status is the failure status: use 3xx-5xx' });
    }
    if (b.seed !== undefined && b.failPercent === undefined && b.delay === undefined && b.itemFailPercent === undefined) {
      ctx.addIssue({ code: 'custom', path: ['seed'], message: 'seed only applies to failPercent, itemFailPercent or a random delay' });
    }
    const perItem = b.itemStatuses !== undefined || b.itemFailPercent !== undefined;
    if (b.itemStatuses !== undefined && b.itemFailPercent !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['itemFailPercent'], message: 'use either itemStatuses (a fixed cycle) or itemFailPercent (a seeded share), not both' });
    }
    if (b.itemFailStatus !== undefined && b.itemFailPercent === undefined) {
      ctx.addIssue({ code: 'custom', path: ['itemFailStatus'], message: 'itemFailStatus only applies with itemFailPercent' });
    }
    if (b.batchStatus !== undefined && !perItem) {
      ctx.addIssue({ code: 'custom', path: ['batchStatus'], message: 'batchStatus only applies to a per-item answer (itemStatuses or itemFailPercent)' });
    }
    if (perItem && (b.rejectDuplicates || b.knownTypes)) {
      ctx.addIssue({ code: 'custom', path: [b.knownTypes ? 'knownTypes' : 'rejectDuplicates'], message: 'reads one call per request: not with a per-item answer (itemStatuses or itemFailPercent)' });
    }
    if (perItem) {
      const field = b.itemStatuses !== undefined ? 'itemStatuses' : 'itemFailPercent';
      if (b.body !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['body'], message: `a per-item answer (${field}) writes its own body, a JSON array of {"status": n}: leave body out` });
      }
      if (!gated && b.status !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['status'], message: `with ${field}, the answer's status is batchStatus (default 200 when every item is 2xx, else 207); status is only the failure status of failFirst/failPercent` });
      }
      if (!gated && (b.hang || b.reset)) {
        ctx.addIssue({ code: 'custom', path: [field], message: `${b.hang ? 'hang' : 'reset'} without failFirst/failPercent ends every request, so the per-item answer would never be sent` });
      }
    }
  });

// Exact-match route; the query string is not part of it, so forbid one here.
export const mockPathSchema = z
  .string()
  .min(2, { message: 'a path such as /hook' })
  .max(200)
  .regex(/^\/[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*$/, { message: 'must start with / and contain no spaces, ? or #' });

export const mockReceiverSchema = z.strictObject({
  id: z.string().min(1).max(100).optional(),
  name: z.string().trim().min(1, { message: 'required' }).max(200).refine(isWellFormedText, LONE_SURROGATE),
  path: mockPathSchema,
  /** Shared secret the X-Signature header is checked against; absent = not checked. */
  secret: z.string().min(1, { message: 'leave out for no signature check' }).max(1024).optional(),
  /** Standard Webhooks secret (whsec_…) webhook-signature is checked against; absent = not checked. */
  standardWebhooksSecret: z.string().max(1024).superRefine((v, ctx) => {
    const problem = secretProblem(v);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
  }).optional(),
  /** Served by the HTTPS listener (self-signed certificate) instead of the HTTP one. */
  tls: z.boolean().default(false),
  behavior: mockBehaviorSchema.default({}),
});

/** The config file's `mockReceivers`: names, ids and paths must be unique. */
export const mockReceiversSchema = z.array(mockReceiverSchema).superRefine((list, ctx) => {
  const seen = { name: new Set<string>(), path: new Set<string>(), id: new Set<string>() };
  list.forEach((r, i) => {
    for (const key of ['name', 'path', 'id'] as const) {
      const value = r[key];
      if (value === undefined) continue;
      if (seen[key].has(value)) ctx.addIssue({ code: 'custom', path: [i, key], message: `duplicate ${key} "${value}"` });
      seen[key].add(value);
    }
  });
});

export type MockBehavior = z.output<typeof mockBehaviorSchema>;
export type MockReceiverInput = z.input<typeof mockReceiverSchema>;
/** A parsed definition as the host runs it: the store (or config loader) assigns the id. */
export type MockReceiver = z.output<typeof mockReceiverSchema> & { id: string };

const signatureStateOutput = z.enum(['valid', 'invalid', 'missing', 'not_checked']);
export type SignatureState = z.output<typeof signatureStateOutput>;

export const signatureCheckOutput = z.object({
  state: signatureStateOutput,
  /** X-Signature as received, or null when absent. */
  received: z.string().nullable(),
  /** Lowercase hex HMAC-SHA1 of the exact body bytes with the receiver's secret (null without secret). */
  expected: z.string().nullable(),
  /** Why it is not valid, in words (null when valid or not checked). */
  reason: z.string().nullable(),
});
export type SignatureCheck = z.output<typeof signatureCheckOutput>;

/** The Standard Webhooks check of one request (webhook-id, webhook-timestamp, webhook-signature). */
export const standardWebhooksCheckOutput = z.object({
  state: signatureStateOutput,
  /** webhook-id as received, or null. */
  id: z.string().nullable(),
  /** webhook-timestamp as received (Unix seconds, as text), or null. */
  timestamp: z.string().nullable(),
  /** webhook-signature as received, or null. */
  received: z.string().nullable(),
  /** `v1,<base64>` HMAC-SHA256 of id.timestamp.body with the receiver's secret; null without a secret or without a usable id and timestamp. */
  expected: z.string().nullable(),
  /** Why it is not valid, in words (null when valid or not checked). */
  reason: z.string().nullable(),
});
export type StandardWebhooksCheck = z.output<typeof standardWebhooksCheckOutput>;

/** What the behavior chose for one request, and how the exchange actually ended. */
export const mockResponseRecordOutput = z.object({
  action: z.enum(['status', 'reset', 'hang']),
  /** Status answered (or planned, when the client left first); null for reset and hang. */
  status: z.number().int().nullable(),
  /** Delay applied before answering or resetting. */
  delayMs: z.number(),
  /** True when failFirst/failPercent made this request one of the failures. */
  failed: z.boolean(),
  headers: z.record(z.string(), z.string()).nullable(),
  body: z.string().nullable(),
  /**
   * A per-item answer (itemStatuses / itemFailPercent): each item's status, in body order; absent
   * otherwise (and on records made before it).
   */
  itemStatuses: z.array(z.number().int()).optional(),
  /** response: answered; reset: connection destroyed; client: the client closed first; stop: host stopped. */
  endedBy: z.enum(['response', 'reset', 'client', 'stop']),
  /** From the end of the request body to the end of the exchange. */
  durationMs: z.number(),
});
export type MockResponseRecord = z.output<typeof mockResponseRecordOutput>;

export const mockRequestRecordOutput = z.object({
  /** Unique per record (UUID), usable as a primary key. */
  id: z.string(),
  receiverId: z.string(),
  receiverName: z.string(),
  /** 1 for the first request since the receiver's state was last reset. */
  seq: z.number().int(),
  /** Arrival time, ISO 8601 UTC. */
  at: z.string(),
  method: z.string(),
  /** Path with query string, as requested. */
  path: z.string(),
  tls: z.boolean(),
  /** Lowercased names; repeated headers joined with ", ". */
  headers: z.record(z.string(), z.string()),
  /** The raw body bytes as UTF-8 text (truncated past the host's body limit). */
  body: z.string(),
  bodyBytes: z.number().int(),
  bodyTruncated: z.boolean(),
  response: mockResponseRecordOutput,
  signature: signatureCheckOutput,
  /** The Standard Webhooks check; absent on records made before it. */
  standardWebhooks: standardWebhooksCheckOutput.optional(),
});
export type MockRequestRecord = z.output<typeof mockRequestRecordOutput>;

/**
 * A receiver as answered: as configured (the schema it was saved with), where to send to it, and what
 * it saw. Not strict, unlike the input: a field a later lab adds is left out, not refused, by a reader
 * of this version (connectLab, `webhook-lab mcp --api`).
 */
export const mockReceiverViewOutput = mockReceiverSchema
  .extend({
    id: z.string(),
    behavior: mockBehaviorSchema.strip(),
    /** Where to send to it (http or https per `tls`). */
    url: z.string(),
    requestCount: z.number().int(),
    lastRequestAt: z.string().nullable(),
  })
  .strip();
