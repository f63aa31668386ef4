import { z } from 'zod';
import { collectorFaultsSchema } from './collector-faults';

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

// RFC 7230 token for names; visible ASCII, space and tab for values (no CR/LF injection).
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

export const headersSchema = z.record(z.string(), z.string()).superRefine((headers, ctx) => {
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name)) {
      ctx.addIssue({ code: 'custom', path: [name], message: `invalid header name "${name}"` });
    } else if (RESERVED_HEADERS.includes(name.toLowerCase())) {
      ctx.addIssue({ code: 'custom', path: [name], message: `header "${name}" is set by the dispatcher and cannot be replaced` });
    }
    if (!HEADER_VALUE.test(value)) {
      ctx.addIssue({ code: 'custom', path: [name], message: `invalid value for header "${name}"` });
    }
  }
});

export const webhookUrlSchema = z.strictObject({
  url: z.string().refine(isHttpUrl, { message: 'must be an absolute http: or https: URL' }),
  headers: headersSchema.default({}),
});

function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

export const webhookSettingsSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    urls: z
      .array(webhookUrlSchema)
      .superRefine((urls, ctx) => {
        // Reported on the first entry over the limit, so the message names it: urls[5].
        if (urls.length > 5) ctx.addIssue({ code: 'custom', path: [5], message: 'at most 5 URLs' });
      })
      .default([]),
    sharedSecret: z.string().max(1024).optional(),
  })
  .superRefine((w, ctx) => {
    if (w.enabled && w.urls.length === 0) {
      ctx.addIssue({ code: 'custom', path: ['enabled'], message: 'cannot enable Webhooks without a URL' });
    }
  });

export const sourceNameSchema = z.string().trim().min(1, { message: 'required' }).max(200);
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

export type CreateSourceInput = z.input<typeof createSourceSchema>;
export type UpdateSourceInput = z.input<typeof updateSourceSchema>;
