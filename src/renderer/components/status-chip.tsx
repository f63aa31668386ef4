import type { CallSummary, DeliveryState } from '../../shared/types';
import { formatDuration } from './format';
import { useNow } from './use-now';

const LABELS: Record<DeliveryState, string> = {
  pending: 'pending',
  in_flight: 'sending',
  delivered: 'delivered',
  retrying: 'retrying',
  failed: 'failed',
  expired: 'expired',
  dropped: 'dropped',
};

function Countdown({ at }: { at: string }) {
  const now = useNow();
  const left = new Date(at).getTime() - now;
  return <span className="countdown">{left > 0 ? ` in ${formatDuration(left)}` : ' now'}</span>;
}

/** Status of a call's Webhooks delivery (or why it was never forwarded). */
export function StatusChip({ call }: { call: Pick<CallSummary, 'status' | 'dropReason' | 'deliveryState' | 'nextAttemptAt'> }) {
  if (call.status === 'dropped') {
    return (
      <span className="chip chip-dropped" title={call.dropReason ?? undefined} data-status="dropped">
        dropped{call.dropReason ? `: ${call.dropReason}` : ''}
      </span>
    );
  }
  const state = call.deliveryState;
  if (!state) {
    return (
      <span className="chip chip-none" title="Webhooks is disabled for this source or by the call's integrations" data-status="not_forwarded">
        not forwarded
      </span>
    );
  }
  return (
    <span className={`chip chip-${state}`} data-status={state}>
      {LABELS[state]}
      {state === 'retrying' && call.nextAttemptAt ? <Countdown at={call.nextAttemptAt} /> : null}
    </span>
  );
}

export function NextRetry({ at }: { at: string }) {
  return (
    <span data-testid="next-retry">
      next retry {new Date(at).toLocaleTimeString(undefined, { hour12: false })}
      <Countdown at={at} />
    </span>
  );
}
