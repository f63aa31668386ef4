import secureJsonParse from 'secure-json-parse';
import { api, type OpName } from '../../shared/api.contract';
import type { ConfigWarning } from '../../shared/config.schema';
import { inputTooDeep } from '../../shared/input-depth';
import { capFields, fieldErrors, type FieldError } from '../../shared/validation-error';
import { droppedWarnings, scanKeys } from '../load-config';

// How the control API reads an operation's JSON body and checks its input: on the event loop for a
// small body, in a worker thread for a large one (body-pool.ts). Pure and without Fastify, so both
// paths run this same code and answer the same, byte for byte (tests/integration/body-pool.test.ts).

/** Fastify's own default JSON parser's options for the control API: a prototype key is an error, never a prototype. */
const PARSE_OPTIONS = { protoAction: 'error', constructorAction: 'error' } as const;

export type BodyRead =
  | { ok: true; body: unknown; droppedKeys?: ConfigWarning[] }
  /** Not JSON: answered as Fastify answers it (FST_ERR_CTP_INVALID_JSON_BODY). */
  | { ok: false; invalidJson: true }
  | { ok: false; fields: FieldError[] };

/**
 * A body as the control API takes it. A prototype key is refused naming it, except one inside an
 * Actions mapping's data, which is taken and dropped with a warning (Segment's mapping kit drops it).
 * A config posted to `/api/config` with a key given twice is refused naming it, as a config file is
 * (load-config.ts), instead of JSON.parse keeping the last one without a word.
 */
export function readJsonBody(text: string, isConfig: boolean): BodyRead {
  if (text === '') return { ok: true, body: undefined };
  let body: unknown;
  let droppedKeys: ConfigWarning[] | undefined;
  let keys: ReturnType<typeof scanKeys> | undefined;
  try {
    body = secureJsonParse.parse(text, undefined, PARSE_OPTIONS);
  } catch {
    // The parser refuses a prototype key as "not valid JSON": named. Read as plain JSON first (a
    // "__proto__" is an own key there): not JSON, or too deep, is said so before the key scan, which
    // recurses once per level (its stack differs in a worker: both paths must answer alike).
    try {
      body = JSON.parse(text);
    } catch {
      return { ok: false, invalidJson: true };
    }
    const tooDeep = inputTooDeep(body);
    if (tooDeep) return { ok: false, fields: tooDeep.fields };
    keys = scanKeys(text);
    if (keys.prototypes.length > 0) return { ok: false, fields: capFields(keys.prototypes) };
    if (keys.dropped.length === 0) return { ok: false, invalidJson: true };
    droppedKeys = droppedWarnings(keys.dropped);
  }
  if (isConfig) {
    // Too deep is refused by the operation's own input check; the key scan recurses once per level.
    const problems = inputTooDeep(body) ? [] : (keys ?? scanKeys(text)).duplicates;
    if (problems.length > 0) return { ok: false, fields: capFields(problems) };
  }
  return droppedKeys ? { ok: true, body, droppedKeys } : { ok: true, body };
}

export type InputChecked = { ok: true; data: unknown } | { ok: false; fields: FieldError[] };

/** An operation's input (its query, body and path parameters together) through its schema, depth first: the schemas recurse (input-depth.ts). */
export function checkOpInput(name: OpName, query: unknown, body: unknown, params: unknown): InputChecked {
  const tooDeep = inputTooDeep(body);
  if (tooDeep) return { ok: false, fields: tooDeep.fields };
  // Every operation's input is an object: null, an array, a string or a number as the body is not one
  // (spread into the input, it read as no body at all, and a config import of `null` applied nothing).
  if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) {
    return { ok: false, fields: [{ path: '', message: `the body must be a JSON object, not ${body === null ? 'null' : Array.isArray(body) ? 'an array' : `a ${typeof body}`}` }] };
  }
  const input = { ...(query as object), ...(body && typeof body === 'object' ? (body as object) : {}), ...(params as object) };
  const parsed = api[name].input.safeParse(input);
  return parsed.success ? { ok: true, data: parsed.data } : { ok: false, fields: fieldErrors(parsed.error) };
}

export interface BodyTask {
  op: OpName;
  text: string;
  isConfig: boolean;
  query: unknown;
  params: unknown;
}

export type BodyTaskResult = { ok: false; invalidJson: true } | { ok: false; fields: FieldError[] } | { ok: true; data: unknown; droppedKeys?: ConfigWarning[] };

/** Both steps, as a worker runs them for a large body. */
export function readOpBody(task: BodyTask): BodyTaskResult {
  const read = readJsonBody(task.text, task.isConfig);
  if (!read.ok) return read;
  const checked = checkOpInput(task.op, task.query, read.body, task.params);
  if (!checked.ok) return checked;
  return read.droppedKeys ? { ok: true, data: checked.data, droppedKeys: read.droppedKeys } : { ok: true, data: checked.data };
}
