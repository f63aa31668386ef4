/**
 * A list that could not be read, in place of its empty state (which would claim there is nothing):
 * what failed, why, and how to recover (the error's own sentence: a wrong token names the address
 * to reopen, an unreachable lab asks whether it still runs), with Retry.
 */
export function LoadError({ what, error, onRetry, testId }: { what: string; error: string; onRetry?: () => void; testId: string }) {
  return (
    <div className="notice error load-error" role="alert" data-testid={testId}>
      <b>Could not load {what}.</b> {error}{' '}
      {onRetry ? (
        <button type="button" className="small" data-testid={`${testId}-retry`} onClick={onRetry}>
          Retry
        </button>
      ) : null}
    </div>
  );
}
