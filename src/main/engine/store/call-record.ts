import type { NormalizedCall, RequestMeta, StoredCall } from '../../../shared/types';
import { formatTimestamp } from '../../../shared/timestamp';
import { MAX_CALL_DEPTH, nestsDeeperThan, stringifyJson } from '../../../shared/nesting';
import { NORMALIZE_VERSION, knowsNormalizeVersion } from '../../../shared/normalize';
import type { RequestsRepo } from './requests.repo';
import type { CallRowColumns } from './call-summary';

// One call read back whole, as the inspector's detail shows it: its row, its item as received from
// the request it arrived in, and its normalized form as it was when it arrived.

export interface CallRow extends CallRowColumns {
  request_id: number;
  batch_index: number | null;
  timestamp: number | null;
  normalized: string | null;
  /** The normalize rules it arrived under (migration 10). */
  normalize_version: number;
  /** Its request's meta, joined in. */
  meta: string;
}

export function storedCall(row: CallRow, sourceId: string | null, sourceName: string | null, requests: RequestsRepo): StoredCall {
  const raw = requests.item(row.request_id, row.batch_index);
  // A call stored although nested too deep (dropped, or accepted before the rule) goes out as text:
  // as a value, serializing it (HTTP, IPC, export) or showing it would overflow the stack.
  const tooDeep = nestsDeeperThan(raw, MAX_CALL_DEPTH);
  const normalized = normalizedOf(row, requests);
  return {
    id: row.id,
    sourceId,
    sourceName,
    receivedAt: formatTimestamp(row.received_at),
    type: row.type,
    userId: row.user_id,
    anonymousId: row.anonymous_id,
    label: row.label,
    messageId: row.message_id,
    status: row.status,
    dropReason: row.drop_reason,
    raw: tooDeep ? null : raw,
    ...(tooDeep ? { rawText: stringifyJson(raw) } : {}),
    request: requestMeta(row),
    normalized: normalized.call,
    ...(normalized.note ? { normalizedNote: normalized.note } : {}),
  };
}

/**
 * Stored for calls the app made itself; otherwise rebuilt by the rules of the call's own version.
 * Null when the item cannot be normalized (dropped as invalid), and, with a note, when the call was
 * stored by a build with rules this one does not have: never silently normalized by today's rules.
 */
function normalizedOf(row: CallRow, requests: RequestsRepo): { call: NormalizedCall | null; note?: string } {
  if (row.normalized) return { call: JSON.parse(row.normalized) as NormalizedCall };
  const version = row.normalize_version;
  if (!knowsNormalizeVersion(version)) {
    return {
      call: null,
      note: `stored by a newer Webhook Lab, with normalization rules version ${version}; this one has rules up to version ${NORMALIZE_VERSION} and shows the call as received only`,
    };
  }
  return { call: requests.normalized(row.request_id, row.batch_index, row.type, row.received_at, row.message_id, version) };
}

function requestMeta(row: CallRow): RequestMeta {
  const meta = JSON.parse(row.meta) as RequestMeta;
  // Calls stored before schema v4 have their batch position in the meta, not on the row.
  return { ...meta, batchIndex: row.batch_index ?? meta.batchIndex ?? null, batchSize: meta.batchSize ?? null };
}
