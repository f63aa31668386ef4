import { randomUUID } from 'node:crypto';
import type { CallType, JsonObject, NormalizedCall } from '../../../shared/types';
import { SAMPLE_CALLS } from '../../../shared/sample-calls';
import { normalizeCall } from '../../../shared/normalize';
import { formatTimestamp } from '../../../shared/timestamp';

// The calls the probe sends: the seed's sample bodies (shared/sample-calls.ts), normalized as the
// collector normalizes a received call, each with its own messageId unless a check repeats one.

export const PROBE_USER = 'probe_user_1';

/** A sample call of this type, normalized at `now`, with `extra` fields merged over the sample's. */
export function probeCall(type: CallType, now: number, extra: JsonObject = {}): NormalizedCall {
  const sample = SAMPLE_CALLS.find((s) => s.type === type)!;
  const item = { ...structuredClone(sample.message), type, messageId: `probe-${randomUUID()}`, ...extra };
  const r = normalizeCall(item, { receivedAt: now });
  if (!r.ok) throw new Error(`probe: the ${type} sample does not normalize: ${r.reason}`);
  return r.call;
}

/** A deletion notice (SPEC §6): only type, userId and timestamp; its body has no version. */
export function deleteCall(now: number): NormalizedCall {
  const at = formatTimestamp(now);
  return { type: 'delete', messageId: `probe-${randomUUID()}`, userId: PROBE_USER, timestamp: at, receivedAt: at };
}
