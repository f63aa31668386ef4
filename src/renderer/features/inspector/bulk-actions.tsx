import { useState } from 'react';
import { useApp, useAppStore } from '../../store-context';

type Asking = { kind: 'retry'; count: number } | { kind: 'clear' } | { kind: 'draft' } | null;

/**
 * Acting on many calls: retry the failed and expired calls the filters match (counted first, then
 * confirmed), clear every call (confirmed), or draft a tracking plan from the picked calls (named
 * first). They sit under the call list, where the question shows as a bar too, so the rows never move.
 */
export function BulkActions() {
  const store = useAppStore();
  const [asking, setAsking] = useState<Asking>(null);
  const [busy, setBusy] = useState(false);
  const total = useApp((s) => s.callsTotal);
  const picked = useApp((s) => s.pickedCallIds.length);
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
        {picked ? (
          <>
            {' · '}
            <b data-testid="picked-count">{picked} picked</b>{' '}
            <button type="button" className="link small-text" data-testid="picks-clear" onClick={() => store.getState().clearPicks()} title="Unpick every call">
              unpick
            </button>
          </>
        ) : null}
      </span>
      <span className="bulk-actions">
        {picked ? (
          <button
            type="button"
            className="small"
            data-testid="picks-recheck"
            disabled={busy}
            onClick={() => void store.getState().recheckPicks()}
            title="Check the picked calls against their source's tracking plan as it is now (their stored verdicts stay)"
          >
            Check again
          </button>
        ) : null}
        <button
          type="button"
          className="small"
          data-testid="picks-draft"
          disabled={busy || asking !== null}
          onClick={() => setAsking({ kind: 'draft' })}
          title="A tracking plan listing the events and properties of the picked calls, typed as seen"
        >
          Draft plan…
        </button>
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
      {asking?.kind === 'draft' ? (
        <DraftPlanBar picked={picked} onDone={() => setAsking(null)} />
      ) : asking ? (
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

/** Names the plan drafted from the picked calls, or says how to pick them. */
function DraftPlanBar({ picked, onDone }: { picked: number; onDone(): void }) {
  const store = useAppStore();
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const make = async () => {
    setBusy(true);
    const failed = await store.getState().draftPlanFromPicks(name);
    setBusy(false);
    if (failed === null) onDone();
    else setError(failed);
  };
  if (picked === 0) {
    return (
      <div className="notice confirm-bar" role="alertdialog" aria-label="Draft a plan" data-testid="picks-draft-bar">
        <span className="grow" data-testid="picks-draft-text">
          Pick the calls to draft a plan from: Ctrl-click (⌘-click) a row, Shift-click for a range, or press <kbd>x</kbd> on a row. All of a source&apos;s calls: <a href="#/tracking-plans">Tracking plans</a>.
        </span>
        <button type="button" className="small" data-testid="picks-draft-cancel" onClick={onDone}>
          Close
        </button>
      </div>
    );
  }
  return (
    <form
      className="notice confirm-bar"
      role="alertdialog"
      aria-label="Draft a plan"
      data-testid="picks-draft-bar"
      onSubmit={(e) => {
        e.preventDefault();
        void make();
      }}
    >
      <span data-testid="picks-draft-text">
        Draft a tracking plan from {picked} picked call{picked === 1 ? '' : 's'}, named
      </span>
      <input
        aria-label="Plan name"
        data-testid="picks-draft-name"
        className="grow"
        value={name}
        placeholder="blank: the source's name + (draft)"
        maxLength={100}
        onChange={(e) => {
          setName(e.target.value);
          setError(null);
        }}
      />
      <button type="submit" className="small primary" data-testid="picks-draft-confirm" disabled={busy}>
        Make plan
      </button>
      <button type="button" className="small" data-testid="picks-draft-cancel" onClick={onDone}>
        Cancel
      </button>
      {error ? (
        <span className="field-error" role="alert" data-testid="picks-draft-error">
          {error}
        </span>
      ) : null}
    </form>
  );
}
