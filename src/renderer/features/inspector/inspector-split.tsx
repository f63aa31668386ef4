import { lazy, Suspense, useEffect, useMemo, useState, type ReactNode } from 'react';
import { ErrorBoundary } from '../../components/error-boundary';
import { useApp, useAppStore } from '../../store-context';
import type { CallDetail } from '../../../shared/types';
import { useInspectorKeys } from './keyboard';
import { SplitHandle, useDetailWidth } from './split-handle';

// The open call's detail is a chunk of its own (issue 40: a tenth of the first screen's script, which
// its rows need none of); fetched as soon as the list is up, so a first click seldom waits for it.
const loadDetail = () => import('./call-detail');
// React.lazy keeps a failed load for good. A failed one is replaced by the next try the user makes
// (another call opened), never by a render of its own: React renders a rejected lazy again before
// its error boundary shows, and a fresh one there would fetch in a loop. Chromium keeps a failed
// import too, so there the boundary's Try again reloads the page (components/module-load-error.ts).
let failed = false;
const lazyDetail = () =>
  lazy(() =>
    loadDetail().then(
      (m) => ({ default: m.CallDetailView }),
      (err: unknown) => {
        failed = true;
        throw err;
      },
    ),
  );
let CallDetailView = lazyDetail();
function retryDetailIfFailed(): void {
  if (!failed) return;
  failed = false;
  CallDetailView = lazyDetail();
}
/** Reads the current lazy component at each render: the error boundary's Try again re-renders only this. */
function Detail(props: { detail: CallDetail }) {
  const View = CallDetailView;
  return <View {...props} />;
}
const loading = <div className="muted">Loading…</div>;

/**
 * The inspector's body: the list beside the open call's detail, split by a handle, with the keys.
 * Both the live calls and an opened export (its own store, store-context) show their calls in it.
 * `list` is given the keyboard cursor the keys move.
 */
export function InspectorSplit({ list }: { list(cursor: number | null, setCursor: (id: number) => void): ReactNode }) {
  const store = useAppStore();
  const selected = useApp((s) => s.selectedCallId);
  const detail = useApp((s) => s.detail);
  const detailError = useApp((s) => s.detailError);
  const [cursor, setCursor] = useState<number | null>(null);
  useInspectorKeys(store, cursor, setCursor);
  const [detailWidth, setDetailWidth] = useDetailWidth();
  const withDetail = selected !== null;
  // Another call opened after a failed load tries it again.
  useMemo(retryDetailIfFailed, [selected]);
  useEffect(() => {
    // A failed fetch here is tried again, and shown by the error boundary, when a call is opened.
    loadDetail().catch(() => undefined);
  }, []);
  return (
    <div
      className={`inspector-split${withDetail ? ' with-detail' : ''}`}
      data-testid="inspector-split"
      style={withDetail ? { gridTemplateColumns: `minmax(0, ${1 - detailWidth}fr) 10px minmax(0, ${detailWidth}fr)` } : undefined}
    >
      {list(cursor, setCursor)}
      {withDetail ? <SplitHandle fraction={detailWidth} onChange={setDetailWidth} /> : null}
      {selected !== null ? (
        <aside className="detail-pane" data-testid="detail-pane">
          <button type="button" className="small close" onClick={() => store.getState().selectCall(null)} aria-label="Close detail">
            ✕
          </button>
          <ErrorBoundary area="the call detail" key={selected} onReset={retryDetailIfFailed}>
            {detailError ? (
              <div className="notice error" role="alert" data-testid="detail-error">
                {detailError}
              </div>
            ) : null}
            {detail ? (
              <Suspense fallback={loading}>
                <Detail detail={detail} />
              </Suspense>
            ) : detailError ? null : (
              loading
            )}
          </ErrorBoundary>
        </aside>
      ) : null}
    </div>
  );
}
