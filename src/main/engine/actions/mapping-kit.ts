import { transform } from '@segment/actions-core/mapping-kit';
import type { Json, NormalizedCall } from '../../../shared/types';
import { MAX_MAPPED_BODY_BYTES, MIN_MAPPED_BODY_BYTES, mappedBodyLimit } from '../../../shared/limits';
import { MappedDataTooLarge, WHOLE_EVENT } from '../../../shared/actions/data-mapping';
import { isDirective, jsonBytesCapped, simpleBound, templatesOver } from './output-bound';

// A mapping's `data` resolved by Segment's own mapping kit (@segment/actions-core, mapping-kit
// `transform`: every directive, raw templates, its `@path` rules), then read as Segment's webhook
// action reads the field (packages/core/src/destination-kit/action.ts execute: removeEmptyValues,
// then Ajv against the field's schema `{ type: 'object' }`):
//   - undefined (a path to nothing), null or "" -> the field is dropped: no body, no X-Signature;
//   - any other non-object (a string, number, boolean or array) fails validation: a 400 there,
//     nothing sent;
//   - an object goes out as JSON.stringify writes it.
//
// transform cannot be stopped while it runs, so what it may build is bounded before and while it runs
// (output-bound.ts: templates bounded before, other directives evaluated and measured one at a time),
// and the whole measured before it is sent.

/**
 * A mapped body that a template in the mapping could take past its limit: refused before the kit
 * ran (output-bound.ts templateBound), so the message says what could be made, not what was.
 */
export class TemplateTooLarge extends MappedDataTooLarge {
  constructor(limitBytes: number, boundBytes: number, callBytes: number | null) {
    super(limitBytes, boundBytes, callBytes);
    this.message = this.message.replace(/\(evaluation stopped at ([\d,]+) bytes\)/, '(a template in it could make $1 bytes of this call; not evaluated)');
  }
}

/** The mapped data of one call: the JSON text sent, or null for no body (and no signature). */
export type MappedData = { text: string } | { text: null };

/** `data` resolved to a value Segment's webhook action refuses (not an object): nothing is sent. */
export class DataNotAnObject extends Error {
  constructor(readonly got: string) {
    super(
      `the mapped data is ${got}, not an object: Segment's Webhooks (Actions) refuses it ` +
        `(the data field must be an object: a 400 "data must be object", nothing sent)`,
    );
    this.name = 'DataNotAnObject';
  }
}

/** The mapping kit threw (a directive's arguments were wrong for this call, e.g. @json on bad text). */
export class MappingFailed extends Error {
  constructor(message: string) {
    super(`the mapping kit failed on this call: ${message}`);
    this.name = 'MappingFailed';
  }
}

/** A reason of Segment's for not sending a mapping's request, beyond the data's (url-field.ts). */
export class NotSentError extends Error {}

/** Why a mapping's request for a call is not sent; every one of these is recorded as the reason. */
export type NotSentReason = MappedDataTooLarge | DataNotAnObject | MappingFailed | NotSentError;

export function isNotSentReason(err: unknown): err is NotSentReason {
  return err instanceof MappedDataTooLarge || err instanceof DataNotAnObject || err instanceof MappingFailed || err instanceof NotSentError;
}

function kindOf(v: unknown): string {
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `a string (${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)})`;
  if (typeof v === 'number') return `a number (${v})`;
  if (typeof v === 'boolean') return `a boolean (${v})`;
  return typeof v;
}

/**
 * The limit of one call's mapped data (shared/limits.ts mappedBodyLimit: 16 times the
 * call, at least 8 KB, at most 512 KB), or a fixed one. The call's own size is measured only once
 * the output passes 8 KB, so the usual small mapping never serializes the call to learn it.
 */
class Limit {
  callBytes: number | null = null;
  constructor(
    private readonly call: object,
    public bytes: number,
    private readonly relative: boolean,
  ) {}

  /** Whether `n` bytes pass the limit, raising it to the call's own first when that is still unknown. */
  passedBy(n: number): boolean {
    if (n <= this.bytes) return false;
    if (this.relative && this.callBytes === null) {
      this.callBytes = Buffer.byteLength(JSON.stringify(this.call));
      this.bytes = mappedBodyLimit(this.callBytes);
    }
    return n > this.bytes;
  }
}

/**
 * `data` (omitted = the whole call) resolved against the call by the mapping kit. Throws
 * MappedDataTooLarge (the output passes its limit: by default 16 times the call, at least 8 KB, at
 * most 512 KB; TemplateTooLarge when a template could), DataNotAnObject or MappingFailed.
 */
export function mapData(data: Json | undefined, call: NormalizedCall, limitBytes?: number): MappedData {
  const mapping = data ?? WHOLE_EVENT;
  const limit = new Limit(call, limitBytes ?? MIN_MAPPED_BODY_BYTES, limitBytes === undefined);
  let out: unknown;
  if (isDirective(mapping) && typeof mapping['@path'] === 'string') {
    // One @path (the default: the whole event): a value inside the call, so never more than the call.
    out = runKit(mapping, call);
  } else {
    const templates = templatesOver(mapping, call, limit);
    if (templates !== null) throw new TemplateTooLarge(limit.bytes, templates, limit.callBytes);
    const bound = simpleBound(mapping, call, MAX_MAPPED_BODY_BYTES + 1);
    if (bound !== null && !limit.passedBy(bound)) {
      // Only @path and @template, and at most the limit whatever they find: the kit runs once.
      out = runKit(mapping, call);
    } else {
      const measured = evaluateMeasured(mapping, call, limit);
      // A mapping that is one directive was evaluated whole.
      out = 'whole' in measured ? measured.whole : runKit(mapping, call);
    }
  }
  if (out === undefined || out === null || out === '') return { text: null };
  if (typeof out !== 'object' || Array.isArray(out)) throw new DataNotAnObject(kindOf(out));
  const text = JSON.stringify(out);
  const bytes = Buffer.byteLength(text);
  if (limit.passedBy(bytes)) throw new MappedDataTooLarge(limit.bytes, bytes, limit.callBytes);
  return { text };
}

/**
 * The kit's `transform` of `data` as Segment's action runs it: `data` is one field of the action's
 * mapping, so a top-level `@path` to nothing drops the field instead of failing. On a copy: the kit
 * writes defaults into a directive's options (@replace), and the mapping is the source's settings.
 */
function runKit(data: unknown, payload: object): unknown {
  try {
    return (transform({ data: writesIntoOptions(data) ? structuredClone(data) : data } as never, payload as never) as { data?: unknown }).data;
  } catch (err) {
    throw new MappingFailed(err instanceof Error ? err.message : String(err));
  }
}

const REPLACES = new WeakMap<object, boolean>();

/** Whether the mapping holds a @replace, the one directive that writes into its options. */
function writesIntoOptions(data: unknown): boolean {
  if (data === null || typeof data !== 'object') return false;
  let known = REPLACES.get(data);
  if (known === undefined) REPLACES.set(data, (known = JSON.stringify(data).includes('"@replace"')));
  return known;
}

/**
 * Each directive in `mapping` evaluated on its own, as the whole transform evaluates it, and its
 * output measured before the next one runs: their sum is at most the whole output, so passing the
 * limit here is passing it there, and evaluation stops at once. A mapping that is one directive
 * comes back whole.
 */
function evaluateMeasured(mapping: Json, call: object, limit: Limit): { whole: unknown } | Record<string, never> {
  let total = 0;
  const measure = (v: unknown): void => {
    // Capped at the most the limit can become, so a huge value is never measured whole.
    total += jsonBytesCapped(v, MAX_MAPPED_BODY_BYTES + 1 - total);
    if (limit.passedBy(total)) throw new MappedDataTooLarge(limit.bytes, total, limit.callBytes);
  };
  if (isDirective(mapping)) {
    const whole = runKit(mapping, call);
    measure(whole);
    return { whole };
  }
  const walk = (v: unknown): void => {
    if (v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) return v.forEach(walk);
    if (isDirective(v)) return measure(runKit(v, call));
    for (const k of Object.keys(v)) walk((v as Record<string, unknown>)[k]);
  };
  walk(mapping);
  return {};
}
