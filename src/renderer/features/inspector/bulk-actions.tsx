import { useState } from 'react';
import { useApp, useAppStore } from '../../store-context';

type Asking = { kind: 'retry'; count: number } | { kind: 'clear' } | null;

/**
 * Acting on many calls: retry the failed and expired calls the filters match (counted first, then
 * confirmed), or clear every call (confirmed). They sit under the call list, where the question
 * shows as a bar too, so the rows never move.
 */
export function BulkActions() {
  const store = useAppStore();
  const [asking, setAsking] = useState<Asking>(null);
  const [busy, setBusy] = useState(false);
  const total = useApp((s) => s.callsTotal);
  const askRetry = async () => {
    setBusy(true);
    const count = await store.getState().countRetryable();
    setBusy(false);
    if (count === null) return;
    if (count === 0) store.getState().notify('No failed or expired call matches the filters');
    else setAsking({ kind: 'retry', count });
  };
  const confirm = async () => {
    const what = asking;
    setAsking(null);
    setBusy(true);
    if (what?.kind === 'retry') await store.getState().retryMatching();
    else if (what?.kind === 'clear') await store.getState().clearCalls();
    setBusy(false);
  };
  return (
    <>
      <span className="muted small-text grow" data-testid="calls-total">
        {total} call{total === 1 ? '' : 's'}
      </span>
      <span className="bulk-actions">
        <button
          type="button"
          className="small"
          data-testid="retry-matching"
          disabled={busy || asking !== null}
          onClick={() => void askRetry()}
          title="Send every failed or expired call the current filters match again, to all its URLs"
        >
          Retry failed…
        </button>
        <button type="button" className="small" data-testid="clear-calls" disabled={busy || asking !== null} onClick={() => setAsking({ kind: 'clear' })} title="Delete every call">
          Clear all…
        </button>
      </span>
      {asking ? (
        <div className="notice confirm-bar" role="alertdialog" aria-label="Confirm" data-testid="bulk-confirm">
          <span className="grow" data-testid="bulk-confirm-text">
            {asking.kind === 'retry'
              ? `Send ${asking.count} failed or expired call${asking.count === 1 ? '' : 's'} matching the filters again, to all their URLs?`
              : 'Delete every call, with its request body, deliveries and attempts? Unfinished deliveries are canceled. This cannot be undone.'}
          </span>
          <button
            type="button"
            className="small danger"
            data-testid={asking.kind === 'retry' ? 'retry-matching-confirm' : 'clear-calls-confirm'}
            onClick={() => void confirm()}
          >
            {asking.kind === 'retry' ? `Retry ${asking.count}` : 'Delete all calls'}
          </button>
          <button type="button" className="small" data-testid={asking.kind === 'retry' ? 'retry-matching-cancel' : 'clear-calls-cancel'} onClick={() => setAsking(null)}>
            Cancel
          </button>
        </div>
      ) : null}
    </>
  );
}
