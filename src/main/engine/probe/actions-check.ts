import { mappingBatches } from '../../../shared/actions/mode';
import type { ActionsMapping, CallType, NormalizedCall } from '../../../shared/types';
import { matchesTrigger } from '../actions/trigger';
import type { CheckResult } from './checks';
import { answerOf } from './checks';
import type { ProbeSender } from './probe-sender';
import { probeCall } from './calls';

// The actions check of issue 25: the chosen mapping's request as Segment's Webhooks (Actions)
// destination sends it (its method, its mapped body, its headers) and, for a batching mapping, a
// batch of three whose X-Signature covers the first event's data only, as Segment signs a batch.

const TYPES: CallType[] = ['track', 'identify', 'page', 'screen', 'group', 'alias'];
/** Events in the batch the check sends for a mapping that batches. */
export const PROBE_BATCH = 3;

export async function actionsCheck(probe: Pick<ProbeSender, 'sendActions'>, mapping: ActionsMapping, now: number): Promise<CheckResult> {
  const type = TYPES.find((t) => matchesTrigger(probeCall(t, now), mapping.trigger));
  if (!type) {
    return { verdict: 'skipped', detail: `mapping "${mapping.name}": its trigger matches none of the sample calls (${TYPES.join(', ')}), so there is nothing to send`, evidence: [] };
  }
  const batch = mappingBatches(mapping);
  const calls: NormalizedCall[] = Array.from({ length: batch ? PROBE_BATCH : 1 }, () => probeCall(type, now));
  const label = batch ? `batch of ${PROBE_BATCH} ${type} calls, ${mapping.method}, X-Signature over the first event` : `${type}, ${mapping.method}, mapped body`;
  const a = await probe.sendActions({ label, expected: '2xx', calls, mapping });
  const evidence = [a.evidence];
  if (a.evidence.ok) return { verdict: 'pass', detail: `mapping "${mapping.name}": ${label} answered 2xx`, evidence };
  const refused = a.result.status === 401 || a.result.status === 403;
  if (batch && refused) {
    return {
      verdict: 'fail',
      detail: `mapping "${mapping.name}": the batch was refused (${answerOf(a.evidence)}): Segment signs a batch over its first event's data only; verify X-Signature against that event, not the whole array`,
      evidence,
    };
  }
  return { verdict: 'fail', detail: `mapping "${mapping.name}": ${label}: ${answerOf(a.evidence)} (${a.evidence.treatment})`, evidence };
}
