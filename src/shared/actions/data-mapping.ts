import type { Json } from '../types';
import { MAPPED_BODY_RATIO, MAX_MAPPED_BODY_BYTES, MIN_MAPPED_BODY_BYTES } from '../limits';

// A mapping's `data`: the body of a Webhooks (Actions) request. It is made by Segment's own mapping
// kit, in the engine only (main/engine/actions/mapping-kit.ts; shared/actions/rules.ts says why).
// What is left here is what both sides need: the default, the limit's reason, the field count.

/** The default data: the whole call, as Segment's Webhooks (Actions) sends it. */
export const WHOLE_EVENT: Json = { '@path': '$.' };

const size = (n: number) => (n < 1024 ? `${n} B` : `${Number((n / 1024).toFixed(1))} KB`);

/** A mapped body passed its limit (limits.ts mappedBodyLimit); evaluation stopped there. The message is the reason a delivery shows. */
export class MappedDataTooLarge extends Error {
  constructor(
    readonly limitBytes: number,
    /** How far the output had got when evaluation stopped (a lower bound of the whole). */
    readonly reachedBytes: number,
    /** The call's own JSON size, which the limit is relative to; null when the limit was given. */
    readonly callBytes: number | null,
  ) {
    super(
      `the mapped body passed its limit of ${size(limitBytes)} (evaluation stopped at ${reachedBytes.toLocaleString('en-US')} bytes)` +
        (callBytes === null
          ? ''
          : `: a call's mapped data may be ${MAPPED_BODY_RATIO} times the call (here ${size(callBytes)}), at least ${size(MIN_MAPPED_BODY_BYTES)}, at most ${size(MAX_MAPPED_BODY_BYTES)}`),
    );
    this.name = 'MappedDataTooLarge';
  }
}

/** The directive an object is, if it is one: a single `@`-key. */
function isDirective(v: { [key: string]: Json }): boolean {
  const keys = Object.keys(v);
  return keys.length === 1 && keys[0].startsWith('@');
}

/**
 * Whether `data` has more than `max` fields: object members and array items, a directive (`@path`,
 * `@template`) being one field's value. Stops counting past `max`. Expects data the depth check passed.
 */
export function dataFieldsOver(data: Json, max: number): boolean {
  let n = 0;
  const walk = (v: Json): boolean => {
    if (v === null || typeof v !== 'object' || (!Array.isArray(v) && isDirective(v))) return false;
    const children = Array.isArray(v) ? v : Object.values(v);
    if ((n += children.length) > max) return true;
    return children.some(walk);
  };
  return walk(data);
}
