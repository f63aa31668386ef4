import { z } from 'zod';
import { isWellFormedText, LONE_SURROGATE } from './well-formed';
import { dataFieldsOver } from './actions/data-mapping';
import { actionsRules } from './actions/rules';
import { ACTIONS_MAX_BATCH_SIZE, ACTIONS_REPLACEABLE_HEADERS } from './actions/request';
import { collectorFaultsSchema } from './collector-faults';
import { secretProblem, shortKeyWarning, STANDARD_WEBHOOKS_HEADERS } from './standard-webhooks';
import { CALL_TYPES, type Json, type JsonObject, type TriggerCondition } from './types';
import { MAX_CALL_DEPTH, nestsDeeperThan } from './nesting';
import { MAX_RECEIVER_URL_CHARS } from './limits';
import { MAX_MAPPING_DATA_FIELDS } from './limits';

// Headers the dispatcher owns; a static header may not replace them (SPEC §2).
export const RESERVED_HEADERS = [
  'content-type',
  'content-length',
  'host',
  'user-agent',
  'x-signature',
  'transfer-encoding',
  'connection',
];

// Hop-by-hop headers (RFC 9110 §7.6.1, RFC 2616 §13.5.1, and the de-facto Proxy-Connection) govern
// one connection, not the request; Expect asks for an interim 100 response. The dispatcher's HTTP
// client owns the connection: undici refuses Expect, Upgrade and Keep-Alive outright (every
// delivery would fail), and the others would mean nothing to a receiver. Connection and
// Transfer-Encoding are among RESERVED_HEADERS above.
export const HOP_BY_HOP_HEADERS = [
  'keep-alive',
  'upgrade',
  'expect',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'trailers',
  'http2-settings',
];

/** Why a static header may not have this name (it would replace ours, or is hop-by-hop), or null. The one rule for Classic URLs and Actions mappings. */
export function reservedHeaderProblem(name: string): string | null {
  const lower = name.toLowerCase();
  if (RESERVED_HEADERS.includes(lower)) return `header "${name}" is set by the dispatcher and cannot be replaced`;
  if (HOP_BY_HOP_HEADERS.includes(lower)) return `header "${name}" is hop-by-hop (it governs one connection, not the request) and cannot be set`;
  return null;
}

// RFC 7230 token for names; visible ASCII, space and tab for values (no CR/LF injection).
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Names are case-insensitive on the wire: `X-A` and `x-a` would go out as one header with both values. */
function refuseCaseTwins(headers: Record<string, string>, ctx: z.RefinementCtx): void {
  const seen = new Map<string, string>();
  for (const name of Object.keys(headers)) {
    const first = seen.get(name.toLowerCase());
    if (first !== undefined) ctx.addIssue({ code: 'custom', path: [name], message: `header "${name}" is given twice (as "${first}" too): header names are case-insensitive` });
    else seen.set(name.toLowerCase(), name);
  }
}

export const headersSchema = z.record(z.string(), z.string()).superRefine((headers, ctx) => {
  refuseCaseTwins(headers, ctx);
  for (const [name, value] of Object.entries(headers)) {
    const reserved = reservedHeaderProblem(name);
    if (!HEADER_NAME.test(name)) {
      ctx.addIssue({ code: 'custom', path: [name], message: `invalid header name "${name}"` });
    } else if (reserved) {
      ctx.addIssue({ code: 'custom', path: [name], message: reserved });
    }
    if (!HEADER_VALUE.test(value)) {
      ctx.addIssue({ code: 'custom', path: [name], message: `invalid value for header "${name}"` });
    }
  }
});

/**
 * A receiver's URL (a Classic URL, an Actions mapping's): absolute http(s), at most 2 KB as typed and
 * as sent (percent-encoded: 1,000 "é" are 6,000 characters on the wire), checked for length first
 * (every delivery stores its URLs, so a long one costs every call).
 */
export const receiverUrlSchema = z.string().superRefine((url, ctx) => {
  const max = `at most ${MAX_RECEIVER_URL_CHARS} characters (2 KB)`;
  if (url.length > MAX_RECEIVER_URL_CHARS) return ctx.addIssue({ code: 'custom', message: `${max}; this one has ${url.length}` });
  if (!isHttpUrl(url)) return ctx.addIssue({ code: 'custom', message: notHttpUrl(url) });
  // URL parsing drops tabs and line breaks silently: the URL stored would not be the one sent (issue 38).
  // Segment refuses them too (its url field is format: 'uri').
  if (/[\x00-\x1f\x7f]/.test(url)) return ctx.addIssue({ code: 'custom', message: 'must not contain control characters (a line break, a tab)' });
  if (url !== url.trim()) return ctx.addIssue({ code: 'custom', message: 'must not start or end with a space' });
  const sent = new URL(url).href.length;
  if (sent > MAX_RECEIVER_URL_CHARS) ctx.addIssue({ code: 'custom', message: `${max} as sent; percent-encoded, this one has ${sent}` });
});

/** Why the lab cannot send to this URL (receiverUrlSchema's message), or null: for a URL a mapping resolves per call. */
export function receiverUrlProblem(url: string): string | null {
  const r = receiverUrlSchema.safeParse(url);
  return r.success ? null : r.error.issues[0].message;
}

/** A Classic receiver URL: port 0 cannot be connected to (an Actions mapping's URL follows Segment, which takes it). */
export const classicUrlSchema = receiverUrlSchema.superRefine((url, ctx) => {
  if (URL.canParse(url) && new URL(url).port === '0') ctx.addIssue({ code: 'custom', message: 'port 0 cannot be connected to: give the port the receiver listens on' });
});

export const webhookUrlSchema = z.strictObject({
  url: classicUrlSchema,
  headers: headersSchema.default({}),
});

/** Why a URL that does not parse as http(s) is refused: its port when that is what is wrong (the parser says only "invalid URL"). */
function notHttpUrl(url: string): string {
  const port = /^https?:\/\/[^/?#]*:(\d+)(?:[/?#]|$)/i.exec(url)?.[1];
  if (port !== undefined && Number(port) > 65_535) return `port ${port} is out of range: give one from 1 to 65535`;
  return 'must be an absolute http: or https: URL';
}

function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

// Webhooks (Actions) mappings (issue 17). Segment sends their headers with fetch, which takes only
// ASCII (its send action: "Only ASCII characters are supported"), so values are held to that here.
const ASCII_HEADER_VALUE = /^[\t\x20-\x7e]*$/;

/** Whether Segment's client can send this header value (a directive's, resolved per call). */
export function isActionsHeaderValue(value: string): boolean {
  return ASCII_HEADER_VALUE.test(value);
}

// Names that differ only in case are taken, as Segment's request client takes them: one header with
// both values (buildActionsRequestHeaders), warned about (actionsHeaderTwins).
/**
 * A mapping field's directive (`{"@path": "$.userId"}`, `{"@template": "…{{userId}}"}`), resolved per
 * call: checked by the mapping kit's own validation (shared/actions/rules.ts), as `data` is.
 */
export const mappingDirectiveSchema = z
  .custom<JsonObject>((v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !nestsDeeperThan(v, MAX_CALL_DEPTH), {
    message: `text, or a mapping directive such as {"@path": "$.userId"} (nested at most ${MAX_CALL_DEPTH} levels)`,
  })
  .superRefine((v, ctx) => {
    for (const issue of actionsRules()?.dataProblems(v) ?? []) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  });

export const actionsHeadersSchema = z.record(z.string(), z.union([z.string(), mappingDirectiveSchema])).superRefine((headers, ctx) => {
  for (const [name, value] of Object.entries(headers)) {
    // Segment's client lets a mapping replace its User-Agent, X-Signature, Accept, Accept-Encoding and
    // (without a body) Content-Type: allowed, the Destinations screen warns (actionsHeaderWarning).
    const reserved = name.toLowerCase() in ACTIONS_REPLACEABLE_HEADERS ? null : reservedHeaderProblem(name);
    if (!HEADER_NAME.test(name)) {
      ctx.addIssue({ code: 'custom', path: [name], message: `invalid header name "${name}": use ASCII letters, digits and !#$%&'*+-.^_\`|~ only` });
    } else if (reserved) {
      ctx.addIssue({ code: 'custom', path: [name], message: reserved });
    }
    if (typeof value === 'string' && !ASCII_HEADER_VALUE.test(value)) {
      ctx.addIssue({ code: 'custom', path: [name], message: `invalid value for header "${name}": Segment's Actions destination sends only ASCII header values (printable characters, space and tab)` });
    }
  }
});

/** A trigger's FQL text; Segment's editor writes a line or a few. */
export const MAX_TRIGGER_CHARS = 2000;

/** A trigger condition; `allowed` restricts the values an equals or oneOf may name. */
function conditionSchema(allowed?: readonly string[]) {
  const shape = 'a condition is a string (equals), {"equals": "…"}, {"contains": "…"} or {"oneOf": ["…"]}';
  const notAllowed = (v: string) => `"${v}" is not a call type: ${allowed!.join(', ')}`;
  return z.custom<TriggerCondition>(() => true).superRefine((c, ctx) => {
    const check = (v: unknown, path: PropertyKey[]) => {
      if (typeof v !== 'string') ctx.addIssue({ code: 'custom', path, message: 'must be a string' });
      else if (v.includes('"')) ctx.addIssue({ code: 'custom', path, message: 'cannot hold a double quote: a trigger is FQL, whose strings cannot' });
      else if (allowed && !allowed.includes(v)) ctx.addIssue({ code: 'custom', path, message: notAllowed(v) });
    };
    if (typeof c === 'string') return check(c, []);
    const keys = c !== null && typeof c === 'object' && !Array.isArray(c) ? Object.keys(c) : [];
    if (keys.length !== 1 || !['equals', 'contains', 'oneOf'].includes(keys[0])) {
      return ctx.addIssue({ code: 'custom', path: [], message: shape });
    }
    const v = (c as Record<string, unknown>)[keys[0]];
    if (keys[0] === 'equals') return check(v, ['equals']);
    if (keys[0] === 'contains') {
      if (typeof v !== 'string' || v === '') ctx.addIssue({ code: 'custom', path: ['contains'], message: 'must be some text' });
      else if (v.includes('"')) ctx.addIssue({ code: 'custom', path: ['contains'], message: 'cannot hold a double quote: a trigger is FQL, whose strings cannot' });
      return;
    }
    if (!Array.isArray(v) || v.length === 0) return ctx.addIssue({ code: 'custom', path: ['oneOf'], message: 'must list at least one value' });
    v.forEach((item, i) => check(item, ['oneOf', i]));
  });
}

/** A trigger's older object form: conditions on the call's type and event. */
export const triggerObjectSchema = z.strictObject({ type: conditionSchema(CALL_TYPES).optional(), event: conditionSchema().optional() });

export const actionsMappingSchema = z.strictObject({
  name: z.string().trim().min(1, { message: 'required' }).max(100, { message: 'at most 100 characters' }).refine(isWellFormedText, LONE_SURROGATE),
  /** FQL text as Segment writes it, or the older object form; omitted or {} = every call (empty FQL text is refused, as Segment's parser refuses it). */
  trigger: z
    .union([
      z.string().max(MAX_TRIGGER_CHARS, { message: `at most ${MAX_TRIGGER_CHARS} characters` }),
      triggerObjectSchema,
    ])
    .superRefine((t, ctx) => {
      // FQL text only: the object form's conditions are checked above and always write valid FQL.
      const problem = typeof t === 'string' ? actionsRules()?.triggerProblem(t) : null;
      if (problem) ctx.addIssue({ code: 'custom', path: [], message: `not a trigger Segment can read: ${problem}` });
    })
    .default({}),
  /** A URL, or a directive resolved per call (target.ts checks what it resolves to). */
  url: z.union([receiverUrlSchema, mappingDirectiveSchema]),
  method: z.enum(['POST', 'PUT', 'PATCH'], { message: 'must be POST, PUT or PATCH' }).default('POST'),
  headers: actionsHeadersSchema.default({}),
  /** Omitted = the whole call. */
  data: z
    // Depth first, without recursion: z.json() and the directive walk recurse, and a value nested
    // thousands deep would overflow the stack (a 500) instead of naming the field.
    .custom<Json>((v) => !nestsDeeperThan(v, MAX_CALL_DEPTH), { message: `nested more than ${MAX_CALL_DEPTH} levels deep (a mapping's data is held to a call's limit)` })
    .pipe(z.json())
    .superRefine((data, ctx) => {
      if (dataFieldsOver(data, MAX_MAPPING_DATA_FIELDS)) {
        const message = `at most ${MAX_MAPPING_DATA_FIELDS.toLocaleString('en-US')} fields (object members and array items; a @path or @template is one): a mapping picks a call's fields, it need not repeat them`;
        return ctx.addIssue({ code: 'custom', path: [], message });
      }
      // Segment's mapping kit checks every directive where the engine runs (shared/actions/rules.ts).
      for (const issue of actionsRules()?.dataProblems(data) ?? []) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
    })
    .optional(),
  batchSize: z
    .number()
    .int({ message: `must be a whole number from 1 to ${ACTIONS_MAX_BATCH_SIZE}` })
    .min(1, { message: `must be a whole number from 1 to ${ACTIONS_MAX_BATCH_SIZE}` })
    .max(ACTIONS_MAX_BATCH_SIZE, { message: `at most ${ACTIONS_MAX_BATCH_SIZE}, Segment's limit; omit it to send one call per request` })
    .optional(),
});

/** A list of mappings (at most 5, names unique); the config file's may name a mock receiver instead of a URL (config.schema.ts). */
export function actionsMappingsSchemaOf<M extends z.ZodType<{ name: string }>>(mapping: M) {
  return z.array(mapping).superRefine((mappings, ctx) => mappingsRule(mappings as { name: string }[], ctx));
}

function mappingsRule(mappings: { name: string }[], ctx: z.RefinementCtx): void {
  // Reported on the first entry over the limit, as for urls: mappings[5].
  if (mappings.length > 5) ctx.addIssue({ code: 'custom', path: [5], message: 'at most 5 mappings' });
  const seen = new Map<string, number>();
  mappings.forEach((m, i) => {
    const first = seen.get(m.name);
    if (first !== undefined) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `"${m.name}" is already the name of mappings[${first}]` });
    else seen.set(m.name, i);
  });
}

export const actionsMappingsSchema = actionsMappingsSchemaOf(actionsMappingSchema);

type WithHeaders = { headers: Record<string, unknown> };

/**
 * A source's Webhooks settings, built from its URL entry and mapping schemas: the API's take URLs;
 * the config file's may name one of the lab's mock receivers instead (config.schema.ts).
 */
export function webhookSettingsSchemaOf<U extends z.ZodType<WithHeaders>, M extends z.ZodType<WithHeaders & { name: string }>>(urlEntry: U, mapping: M) {
  return z
    .strictObject({
      enabled: z.boolean().default(false),
      urls: z
        .array(urlEntry)
        .superRefine((urls, ctx) => {
          // Reported on the first entry over the limit, so the message names it: urls[5].
          if (urls.length > 5) ctx.addIssue({ code: 'custom', path: [5], message: 'at most 5 URLs' });
        })
        .default([]),
      sharedSecret: z.string().max(1024).optional(),
      // No zod defaults for the three below: settings written before them stay as they were, and
      // readers go through webhookMode() / webhookMappings() (src/shared/actions/mode.ts).
      mode: z.enum(['classic', 'actions', 'both'], { message: 'must be "classic", "actions" or "both"' }).optional(),
      mappings: actionsMappingsSchemaOf(mapping).optional(),
      /** '' = none, as for sharedSecret. */
      standardWebhooksSecret: z
        .string()
        .refine((s) => s === '' || secretProblem(s) === null, { error: (issue) => secretProblem(String(issue.input)) ?? 'invalid' })
        .optional(),
    })
    .superRefine((w, ctx) => {
      const mode = w.mode ?? 'classic';
      const urls = w.urls as WithHeaders[];
      const mappings = (w.mappings ?? []) as WithHeaders[];
      if (w.enabled && mode !== 'actions' && urls.length === 0) {
        const why = mode === 'both' ? ': mode "both" also sends Classic requests, to urls' : '';
        ctx.addIssue({ code: 'custom', path: ['enabled'], message: `cannot enable Webhooks without a URL${why}` });
      }
      if (w.enabled && mode !== 'classic' && mappings.length === 0) {
        ctx.addIssue({ code: 'custom', path: ['enabled'], message: `cannot enable Webhooks without a mapping: mode "${mode}" sends Actions requests, one per matching entry of mappings` });
      }
      // The Standard Webhooks headers are the signer's, like X-Signature.
      if (w.standardWebhooksSecret) {
        const own = new Set<string>(Object.values(STANDARD_WEBHOOKS_HEADERS));
        const refuse = (path: PropertyKey[], name: string) =>
          ctx.addIssue({ code: 'custom', path, message: `header "${name}" is set by the Standard Webhooks signature (standardWebhooksSecret) and cannot be replaced` });
        urls.forEach((u, i) => Object.keys(u.headers).forEach((h) => own.has(h.toLowerCase()) && refuse(['urls', i, 'headers', h], h)));
        mappings.forEach((m, i) => Object.keys(m.headers).forEach((h) => own.has(h.toLowerCase()) && refuse(['mappings', i, 'headers', h], h)));
      }
    });
}

export const webhookSettingsSchema = webhookSettingsSchemaOf(webhookUrlSchema, actionsMappingSchema);

export const sourceNameSchema = z.string().trim().min(1, { message: 'required' }).max(200).refine(isWellFormedText, LONE_SURROGATE);
export const writeKeySchema = z
  .string()
  .min(1, { message: 'required' })
  .max(200)
  .regex(/^[A-Za-z0-9_\-.]+$/, { message: 'letters, digits, _ - . only' });

export const createSourceSchema = z.strictObject({
  name: sourceNameSchema,
  writeKey: writeKeySchema.optional(),
  webhooks: webhookSettingsSchema.optional(),
  /** null: none. Kept in memory only (README, Decisions, "Collector faults"). */
  collectorFaults: collectorFaultsSchema.nullable().optional(),
});

export const updateSourceSchema = z.strictObject({
  id: z.string().min(1),
  name: sourceNameSchema.optional(),
  webhooks: webhookSettingsSchema.optional(),
  collectorFaults: collectorFaultsSchema.nullable().optional(),
});

/** Which secret to rotate, and its new value (omitted: a random one). */
export const rotateSecretSchema = z
  .strictObject({
    id: z.string().min(1),
    which: z.enum(['sharedSecret', 'standardWebhooksSecret'], { message: 'must be "sharedSecret" (X-Signature) or "standardWebhooksSecret" (webhook-signature)' }),
    secret: z.string().min(1, { message: 'must not be empty (omit it for a random one)' }).max(1024, { message: 'at most 1024 characters' }).optional(),
    /**
     * Standard Webhooks: whether the version it replaces keeps signing for the rotation window (default
     * true); false stops it at once (a leaked secret). X-Signature carries one signature: no overlap either way.
     */
    overlap: z.boolean().optional(),
  })
  .superRefine((r, ctx) => {
    if (r.which !== 'standardWebhooksSecret' || r.secret === undefined) return;
    const problem = secretProblem(r.secret) ?? shortKeyWarning(r.secret);
    if (problem) ctx.addIssue({ code: 'custom', path: ['secret'], message: problem });
  });

export type CreateSourceInput = z.input<typeof createSourceSchema>;
export type UpdateSourceInput = z.input<typeof updateSourceSchema>;
