import { actionsUrlWarning } from '../../../shared/actions/private-url';
import { ACTIONS_DEFAULT_BATCH_SIZE } from '../../../shared/actions/request';
import { webhookMappings, webhookMode } from '../../../shared/actions/mode';
import { SECRET_PREFIX, toBase64 } from '../../../shared/standard-webhooks';
import { mappingValueOf, mappingValueText } from '../../../shared/actions/mapping-value';
import type { ActionsMapping, ActionsMethod, DestinationMode, Json, MappingValue, TriggerCondition, WebhookSettings } from '../../../shared/types';
import { parseJsonText } from '../../components/json-text';
import type { HeaderRow } from '../../components/header-editor';

// The Webhooks form's draft (what the inputs hold, as text) and its way to and from the settings the
// engine stores. React-free so the round trip is unit-tested: a source saved before Actions existed
// must come back unchanged (no mode, mappings or Standard Webhooks keys), or its form would read
// "unsaved changes" on open.

export const MAX_URLS = 5;
export const MAX_MAPPINGS = 5;
export const METHODS: readonly ActionsMethod[] = ['POST', 'PUT', 'PATCH'];
export const MODE_LABELS: Record<DestinationMode, string> = {
  classic: 'Classic',
  actions: 'Webhooks (Actions)',
  both: 'Both: Classic and Actions',
};

export interface UrlDraft {
  url: string;
  headers: HeaderRow[];
}

/** A trigger condition as the form edits it: `any` = no condition; oneOf's values comma-separated. */
export type ConditionOp = 'any' | 'equals' | 'contains' | 'oneOf';
export interface ConditionDraft {
  op: ConditionOp;
  value: string;
}

export interface MappingDraft {
  name: string;
  /** The trigger as FQL text when it is written so; null = edited as the type and event conditions. */
  fql: string | null;
  type: ConditionDraft;
  event: ConditionDraft;
  url: string;
  method: ActionsMethod;
  headers: HeaderRow[];
  /** JSON text; blank = omitted = the whole event. */
  data: string;
  batch: boolean;
  batchSize: string;
}

export interface WebhooksDraft {
  enabled: boolean;
  mode: DestinationMode;
  urls: UrlDraft[];
  secret: string;
  mappings: MappingDraft[];
  swSecret: string;
}

const rows = (h: Record<string, string>): HeaderRow[] => Object.entries(h).map(([name, value]) => ({ name, value }));

// A row left completely blank is ignored; a value without a name reaches the engine and is refused there.
export const headersOf = (r: HeaderRow[]): Record<string, string> =>
  Object.fromEntries(r.filter((h) => h.name !== '' || h.value !== '').map((h) => [h.name.trim(), h.value]));

// A mapping's header values may be directives (mapping-value.ts: `{{userId}}` makes a template).
const mappingRows = (h: Record<string, MappingValue>): HeaderRow[] => Object.entries(h).map(([name, value]) => ({ name, value: mappingValueText(value) }));
export const mappingHeadersOf = (r: HeaderRow[]): Record<string, MappingValue> =>
  Object.fromEntries(r.filter((h) => h.name !== '' || h.value !== '').map((h) => [h.name.trim(), mappingValueOf(h.value)]));

export function conditionDraft(c: TriggerCondition | undefined): ConditionDraft {
  if (c === undefined) return { op: 'any', value: '' };
  if (typeof c === 'string') return { op: 'equals', value: c };
  if ('equals' in c) return { op: 'equals', value: c.equals };
  if ('contains' in c) return { op: 'contains', value: c.contains };
  return { op: 'oneOf', value: c.oneOf.join(', ') };
}

/** undefined = no condition. An empty equals or oneOf goes to the engine, which names the field. */
export function conditionOf(d: ConditionDraft): TriggerCondition | undefined {
  switch (d.op) {
    case 'any':
      return undefined;
    case 'equals':
      return { equals: d.value.trim() };
    case 'contains':
      return { contains: d.value };
    case 'oneOf':
      return { oneOf: d.value.split(',').map((v) => v.trim()).filter((v) => v !== '') };
  }
}

export function mappingDraft(m: ActionsMapping): MappingDraft {
  return {
    name: m.name,
    fql: typeof m.trigger === 'string' ? m.trigger : null,
    type: conditionDraft(typeof m.trigger === 'string' ? undefined : m.trigger.type),
    event: conditionDraft(typeof m.trigger === 'string' ? undefined : m.trigger.event),
    url: mappingValueText(m.url),
    method: m.method,
    headers: mappingRows(m.headers),
    data: m.data === undefined ? '' : JSON.stringify(m.data, null, 2),
    batch: m.batchSize !== undefined,
    batchSize: String(m.batchSize ?? ACTIONS_DEFAULT_BATCH_SIZE),
  };
}

export function newMapping(existing: readonly MappingDraft[]): MappingDraft {
  let n = existing.length + 1;
  while (existing.some((m) => m.name === `mapping ${n}`)) n++;
  return {
    name: `mapping ${n}`,
    fql: null,
    type: { op: 'any', value: '' },
    event: { op: 'any', value: '' },
    url: '',
    method: 'POST',
    headers: [],
    data: '',
    batch: false,
    batchSize: String(ACTIONS_DEFAULT_BATCH_SIZE),
  };
}

/** The data editor's text as JSON: undefined when blank (the whole event), or where it stops parsing. */
export function dataOf(text: string): { ok: true; data: Json | undefined } | { ok: false; message: string } {
  if (text.trim() === '') return { ok: true, data: undefined };
  const r = parseJsonText(text);
  if (r.ok) return { ok: true, data: r.value as Json };
  return { ok: false, message: `line ${r.problem.line}, column ${r.problem.col}: ${r.problem.message}` };
}

/** A data text whose JSON holds a `__proto__` key: Segment's mapping kit drops it, as the lab does on save. */
export function dataKeyWarning(text: string): string | null {
  const data = dataOf(text);
  if (!data.ok || data.data === undefined) return null;
  const open: unknown[] = [data.data];
  while (open.length > 0) {
    const v = open.pop();
    if (v === null || typeof v !== 'object') continue;
    if (!Array.isArray(v) && Object.hasOwn(v, '__proto__')) {
      return 'key "__proto__" is dropped: Segment\'s mapping kit leaves it out of what it sends, and so does the lab (it is not saved)';
    }
    open.push(...Object.values(v));
  }
  return null;
}

/** The mapping to save; a data text that is not JSON is left out here and held back by draftProblems. */
export function mappingOf(d: MappingDraft): ActionsMapping {
  // An empty FQL field is every call: the object form with no condition (Segment's parser refuses empty FQL).
  const trigger: ActionsMapping['trigger'] = d.fql !== null && d.fql.trim() !== '' ? d.fql.trim() : {};
  const type = conditionOf(d.type);
  const event = conditionOf(d.event);
  if (typeof trigger !== 'string' && type !== undefined) trigger.type = type;
  if (typeof trigger !== 'string' && event !== undefined) trigger.event = event;
  const data = dataOf(d.data);
  const out: ActionsMapping = { name: d.name.trim(), trigger, url: mappingValueOf(d.url.trim()), method: d.method, headers: mappingHeadersOf(d.headers) };
  if (data.ok && data.data !== undefined) out.data = data.data;
  // Not a number reaches the engine as null, which refuses it on batchSize.
  if (d.batch) out.batchSize = d.batchSize.trim() === '' ? ACTIONS_DEFAULT_BATCH_SIZE : Number(d.batchSize);
  return out;
}

export function toDraft(w: WebhookSettings): WebhooksDraft {
  return {
    enabled: w.enabled,
    mode: webhookMode(w),
    urls: w.urls.map((u) => ({ url: u.url, headers: rows(u.headers) })),
    secret: w.sharedSecret ?? '',
    mappings: webhookMappings(w).map(mappingDraft),
    swSecret: w.standardWebhooksSecret ?? '',
  };
}

/**
 * The settings to save. The engine replaces the whole object, so what is left out is cleared; the
 * Actions keys are written only when they say something, so Classic-only settings keep their shape.
 * Mappings are kept in Classic mode too (switching back and forth loses nothing).
 */
export function fromDraft(d: WebhooksDraft): WebhookSettings {
  const out: WebhookSettings = {
    enabled: d.enabled,
    urls: d.urls.map((u) => ({ url: u.url.trim(), headers: headersOf(u.headers) })),
    ...(d.secret ? { sharedSecret: d.secret } : {}),
  };
  if (d.mode !== 'classic') out.mode = d.mode;
  if (d.mappings.length > 0) out.mappings = d.mappings.map(mappingOf);
  if (d.swSecret.trim() !== '') out.standardWebhooksSecret = d.swSecret.trim();
  return out;
}

/** Problems found before saving (the engine cannot see a data text that is not JSON): path → message. */
export function draftProblems(d: WebhooksDraft): Record<string, string> {
  const out: Record<string, string> = {};
  d.mappings.forEach((m, i) => {
    const data = dataOf(m.data);
    if (!data.ok) out[`webhooks.mappings[${i}].data`] = `not JSON: ${data.message}`;
  });
  return out;
}

/** A new Standard Webhooks secret: whsec_ + base64 of 32 random bytes (the spec asks for 24 to 64). */
export function generateSwSecret(random: (bytes: Uint8Array) => Uint8Array = (b) => crypto.getRandomValues(b)): string {
  return SECRET_PREFIX + toBase64(random(new Uint8Array(32)));
}

/** A new shared secret for X-Signature: 48 hex characters. */
export function generateSharedSecret(random: (bytes: Uint8Array) => Uint8Array = (b) => crypto.getRandomValues(b)): string {
  return Array.from(random(new Uint8Array(24)), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** The private-URL note under a mapping's URL; nothing for a blank or half-typed one (its own error says that). */
export function mappingUrlWarning(url: string): string | null {
  const u = url.trim();
  // A directive's URL is known per call: the Compose preview shows where each goes.
  if (u === '' || typeof mappingValueOf(u) !== 'string') return null;
  try {
    new URL(u);
  } catch {
    return null;
  }
  return actionsUrlWarning(u);
}

/**
 * The first error at `path` or under it (`webhooks.mappings[0].trigger` covers `….trigger.event.oneOf[1]`),
 * for inputs that stand for a whole subtree.
 */
export function errorUnder(fields: readonly { path: string; message: string }[], path: string): string | undefined {
  const hit = fields.find((f) => f.path === path || f.path.startsWith(`${path}.`) || f.path.startsWith(`${path}[`));
  if (!hit) return undefined;
  return hit.path === path ? hit.message : `${hit.path.slice(path.length).replace(/^\./, '')}: ${hit.message}`;
}

/** Paths the form shows on one of its inputs; the rest are listed under the form. */
export function shownOnForm(path: string): boolean {
  return (
    /^webhooks\.(enabled|mode|sharedSecret|standardWebhooksSecret|mappings)$/.test(path) ||
    /^webhooks\.urls\[\d+\](\.url|\.headers.*)?$/.test(path) ||
    /^webhooks\.mappings\[\d+\](\.(name|url|method|batchSize|headers|trigger|data)([.[].*)?)?$/.test(path)
  );
}
