import type { CallSummary, UrlOutcome } from '../../shared/types';
import { deliveredWithFailures, inFlightSince, STATE_LABELS, urlOutcomeNote } from '../../shared/url-outcome';
import { formatDuration } from './format';
import { useNow } from './use-now';

function Countdown({ at }: { at: string }) {
  const now = useNow();
  const left = new Date(at).getTime() - now;
  return <span className="countdown">{left > 0 ? ` in ${formatDuration(left)}` : ' now'}</span>;
}

/** How long the oldest attempt still out has been out, ticking. */
export function Elapsed({ since }: { since: number }) {
  const now = useNow();
  return <span className="elapsed"> {formatDuration(Math.max(0, now - since))}</span>;
}

/**
 * Status of a call's Webhooks delivery (or why it was never forwarded), with its URLs' outcome at a
 * glance: "delivered · 1 of 5 URLs failed" (warning colour), "in flight 3s".
 */
export function StatusChip({ call }: { call: Pick<CallSummary, 'status' | 'dropReason' | 'deliveryState' | 'nextAttemptAt'> & { urls?: UrlOutcome[] } }) {
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
  const urls = call.urls ?? [];
  const note = urlOutcomeNote(urls);
  const since = state === 'in_flight' ? inFlightSince(urls) : null;
  const warn = deliveredWithFailures({ deliveryState: state, urls });
  return (
    <span className={`chip chip-${state}${warn ? ' chip-warn' : ''}`} data-status={state}>
      {STATE_LABELS[state]}
      {since !== null ? <Elapsed since={since} /> : null}
      {state === 'retrying' && call.nextAttemptAt ? <Countdown at={call.nextAttemptAt} /> : null}
      {note ? <span className="url-note"> · {note}</span> : null}
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
