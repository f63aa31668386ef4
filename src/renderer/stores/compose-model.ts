import { validateMessage } from '../../shared/message-rules';
import type { SampleCall } from '../../shared/sample-calls';
import type { CallType, JsonObject } from '../../shared/types';
import { parseJsonText, type JsonProblem } from '../components/json-text';

// The composer's draft → the message the client is given, plus every problem keyed by the field
// it belongs to. Pure, so the UI and the tests read the same rules (shared/message-rules.ts).

export const TEXT_FIELDS = ['userId', 'anonymousId', 'event', 'name', 'category', 'groupId', 'previousId'] as const;
export type TextField = (typeof TEXT_FIELDS)[number];
export const JSON_FIELDS = ['properties', 'traits', 'context', 'integrations'] as const;
export type JsonField = (typeof JSON_FIELDS)[number];

export const FIELDS_BY_TYPE: Record<CallType, { text: TextField[]; json: JsonField[] }> = {
  identify: { text: ['userId', 'anonymousId'], json: ['traits', 'context', 'integrations'] },
  track: { text: ['userId', 'anonymousId', 'event'], json: ['properties', 'context', 'integrations'] },
  page: { text: ['userId', 'anonymousId', 'name', 'category'], json: ['properties', 'context', 'integrations'] },
  screen: { text: ['userId', 'anonymousId', 'name'], json: ['properties', 'context', 'integrations'] },
  group: { text: ['userId', 'anonymousId', 'groupId'], json: ['traits', 'context', 'integrations'] },
  alias: { text: ['previousId', 'userId'], json: ['context', 'integrations'] },
};

export interface Draft {
  type: CallType;
  fields: Record<TextField, string>;
  json: Record<JsonField, string>;
  timestampMode: 'now' | 'historical';
  historicalTimestamp: string;
}

export function emptyFields(): Record<TextField, string> {
  return { userId: '', anonymousId: '', event: '', name: '', category: '', groupId: '', previousId: '' };
}

export function emptyJson(): Record<JsonField, string> {
  return { properties: '', traits: '', context: '', integrations: '' };
}

export interface BuiltMessage {
  message: JsonObject;
  /** Field (top-level key, or `integrations.X`) → message, from JSON syntax and the message rules. */
  errors: Record<string, string>;
  jsonProblems: Partial<Record<JsonField, JsonProblem>>;
}

export function buildMessage(d: Draft): BuiltMessage {
  const spec = FIELDS_BY_TYPE[d.type];
  const message: JsonObject = {};
  const errors: Record<string, string> = {};
  const jsonProblems: BuiltMessage['jsonProblems'] = {};
  for (const f of spec.text) {
    const v = d.fields[f];
    if (v !== '') message[f] = v;
  }
  for (const f of spec.json) {
    const text = d.json[f];
    if (text.trim() === '') continue;
    const r = parseJsonText(text);
    if (r.ok) message[f] = r.value as JsonObject;
    else {
      jsonProblems[f] = r.problem;
      errors[f] = `line ${r.problem.line}, column ${r.problem.col}: ${r.problem.message}`;
    }
  }
  if (d.timestampMode === 'historical') message.timestamp = d.historicalTimestamp.trim();
  for (const v of validateMessage(d.type, message)) {
    const key = v.field || 'message';
    // A JSON syntax error already explains that field; do not stack a second message on it.
    if (!errors[key] && !errors[key.split('.')[0]]) errors[key] = v.message;
  }
  return { message, errors, jsonProblems };
}

/** The input a field error belongs to: `integrations.Webhooks` shows on the integrations editor. */
export function errorFor(errors: Record<string, string>, field: string): string | undefined {
  if (errors[field]) return errors[field];
  const nested = Object.keys(errors).find((k) => k.startsWith(`${field}.`) || k.startsWith(`${field}[`));
  return nested ? `${nested}: ${errors[nested]}` : undefined;
}

const pretty = (v: unknown) => JSON.stringify(v, null, 2);

export function draftFromSample(sample: SampleCall, prev: Draft): Draft {
  const fields = emptyFields();
  const json = emptyJson();
  for (const f of TEXT_FIELDS) {
    const v = sample.message[f];
    if (typeof v === 'string' || typeof v === 'number') fields[f] = String(v);
  }
  for (const f of JSON_FIELDS) {
    if (sample.message[f] !== undefined) json[f] = pretty(sample.message[f]);
  }
  return { ...prev, type: sample.type, fields, json };
}
