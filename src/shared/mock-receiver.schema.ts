import { z } from 'zod';

// Mock receivers (SPEC §7): the definition schema, shared by the config file key `mockReceivers`,
// the control API and the UI, plus the record types every received request produces.
// Strict objects everywhere, so a typo such as `failfirst` is refused with its path.

/** Delays above this make no sense for a receiver the dispatcher gives up on after 5 s. */
export const MAX_DELAY_MS = 120_000;
export const DEFAULT_STATUS = 200;
/** With failFirst/failPercent, `status` is the failure status; this is its default. */
export const DEFAULT_FAILURE_STATUS = 500;
export const SUCCESS_STATUS = 200;

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
    if (b.seed !== undefined && b.failPercent === undefined && b.delay === undefined) {
      ctx.addIssue({ code: 'custom', path: ['seed'], message: 'seed only applies to failPercent or a random delay' });
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
  name: z.string().trim().min(1, { message: 'required' }).max(200),
  path: mockPathSchema,
  /** Shared secret the X-Signature header is checked against; absent = not checked. */
  secret: z.string().min(1, { message: 'leave out for no signature check' }).max(1024).optional(),
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

export type SignatureState = 'valid' | 'invalid' | 'missing' | 'not_checked';

export interface SignatureCheck {
  state: SignatureState;
  /** X-Signature as received, or null when absent. */
  received: string | null;
  /** Lowercase hex HMAC-SHA1 of the exact body bytes with the receiver's secret (null without secret). */
  expected: string | null;
  /** Why it is not valid, in words (null when valid or not checked). */
  reason: string | null;
}

/** What the behavior chose for one request, and how the exchange actually ended. */
export interface MockResponseRecord {
  action: 'status' | 'reset' | 'hang';
  /** Status answered (or planned, when the client left first); null for reset and hang. */
  status: number | null;
  /** Delay applied before answering or resetting. */
  delayMs: number;
  /** True when failFirst/failPercent made this request one of the failures. */
  failed: boolean;
  headers: Record<string, string> | null;
  body: string | null;
  /** response: answered; reset: connection destroyed; client: the client closed first; stop: host stopped. */
  endedBy: 'response' | 'reset' | 'client' | 'stop';
  /** From the end of the request body to the end of the exchange. */
  durationMs: number;
}

export interface MockRequestRecord {
  /** Unique per record (UUID), usable as a primary key. */
  id: string;
  receiverId: string;
  receiverName: string;
  /** 1 for the first request since the receiver's state was last reset. */
  seq: number;
  /** Arrival time, ISO 8601 UTC. */
  at: string;
  method: string;
  /** Path with query string, as requested. */
  path: string;
  tls: boolean;
  /** Lowercased names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** The raw body bytes as UTF-8 text (truncated past the host's body limit). */
  body: string;
  bodyBytes: number;
  bodyTruncated: boolean;
  response: MockResponseRecord;
  signature: SignatureCheck;
}
