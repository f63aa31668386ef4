import type { OpenedExport } from '../../stores/opened-export.slice';

/**
 * Says the calls below are an opened export file, not the lab's, and leads back; then the lines of
 * the file that were left out, each with its line number and why.
 */
export function ExportBanner({ opened, onBack }: { opened: OpenedExport; onBack(): void }) {
  const n = opened.calls.length;
  const skipped = opened.problems.length + opened.moreProblems;
  return (
    <>
      <div className="notice export-banner row" role="status" data-testid="export-banner">
        <span className="grow" data-testid="export-banner-text">
          Viewing <b className="mono">{opened.fileName}</b>: {n} call{n === 1 ? '' : 's'}, read-only
        </span>
        <button type="button" className="small primary" data-testid="export-view-back" onClick={onBack}>
          Back to live calls
        </button>
      </div>
      {skipped ? (
        <div className="notice warn small-text export-problems" role="alert" data-testid="export-problems" style={{ maxHeight: '9em', overflow: 'auto', flexShrink: 0 }}>
          {skipped} line{skipped === 1 ? '' : 's'} of the file left out:
          <ul>
            {opened.problems.map((p) => (
              <li key={p.line} data-testid="export-problem" data-line={p.line}>
                line {p.line}: {p.message}
              </li>
            ))}
            {opened.moreProblems ? <li>and {opened.moreProblems} more</li> : null}
          </ul>
        </div>
      ) : null}
    </>
  );
}
