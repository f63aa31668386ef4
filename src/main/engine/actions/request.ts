import { mappingBatches } from '../../../shared/actions/mode';
import type { ActionsMapping, NormalizedCall } from '../../../shared/types';
import { actionsHeaders, type ActionsRequest } from '../../../shared/actions/request';
import { mapData } from './mapping-kit';
import { resolveTarget } from './target';

// The request Segment's Webhooks (Actions) destination makes for one mapping, with its data made by
// Segment's mapping kit (mapping-kit.ts). See shared/actions/request.ts for what the destination's
// code does with it (perform, performBatch, extendRequest's X-Signature over the first item's data).

/**
 * The request for `calls` under `mapping`: one call unbatched, or a batch (a mapping with a
 * batchSize always sends an array, even of one). Calls must all have matched the mapping's trigger;
 * the caller splits them into batches of at most batchSize. Throws a NotSentReason
 * (mapping-kit.ts) when a call's data is over the limit, not an object, or the kit fails on it, or
 * when its URL or headers cannot be sent (target.ts).
 */
export function buildActionsRequest(mapping: ActionsMapping, calls: readonly NormalizedCall[]): ActionsRequest {
  if (calls.length === 0) throw new Error('an Actions request carries at least one call');
  const batch = mappingBatches(mapping);
  if (!batch && calls.length > 1) throw new Error(`mapping "${mapping.name}" does not batch: one call per request`);
  // A batch goes where its first call's payload says, as Segment's performBatch takes payload[0]'s url and headers.
  const target = resolveTarget(mapping, calls[0]);
  const data = calls.map((c) => mapData(mapping.data, c).text);
  // An item that resolved to nothing is null in the array, as JSON.stringify writes it in the real body.
  const body = batch ? `[${data.map((d) => d ?? 'null').join(',')}]` : (data[0] ?? '');
  return {
    url: target.url,
    method: mapping.method,
    headers: actionsHeaders(target.headers),
    body,
    signedText: data[0] ?? null,
    callCount: calls.length,
    batch,
  };
}
