import { useEffect, useMemo, useRef } from 'react';
import type { ApiClient } from '../../../shared/api.contract';
import { ApiError } from '../../../shared/api-error';
import { StoreContext, useApp, useAppStore } from '../../store-context';
import { createAppStore, type AppStore } from '../../stores/app.store';
import { summaryOfDetail } from '../../stores/opened-export-model';
import { READ_ONLY_REASON, type OpenedExport } from '../../stores/opened-export.slice';
import { CallList } from './call-list';
import { InspectorSplit } from './inspector-split';
import { ExportBanner } from './export-banner';
import { InspectorScreen } from './inspector-screen';

/** The Inspector: the live calls, or an opened export in their place (read-only) until Back to live calls. */
export function InspectorOrExport() {
  const app = useAppStore();
  const opened = useApp((s) => s.openedExport);
  // A link to one of the lab's calls (a permalink, another screen's "see in Inspector") shows it: the
  // file's view gives way to the live calls.
  const liveSelected = useApp((s) => s.selectedCallId);
  const seen = useRef(liveSelected);
  useEffect(() => {
    if (liveSelected !== seen.current && liveSelected !== null && app.getState().openedExport) app.getState().closeExport();
    seen.current = liveSelected;
  }, [liveSelected, app]);
  return opened ? <OpenedExportView opened={opened} /> : <InspectorScreen />;
}

/** Whatever would reach the engine from the read-only view is refused, with the reason. */
const readOnlyApi: ApiClient = {
  call: (name) => Promise.reject(new ApiError(409, `${READ_ONLY_REASON} (${name})`)),
  subscribe: () => () => undefined,
};

/**
 * A store of its own for the file's calls, so the live list's components (call-list.tsx,
 * call-detail.tsx) show them unchanged: the list is the file's, a call's detail is its line, nothing
 * is loaded, picked or sent, and no live event reaches it (only the app's own store subscribes).
 */
function exportStore(app: AppStore, opened: OpenedExport): AppStore {
  const store = createAppStore(readOnlyApi);
  const byId = new Map(opened.calls.map((d) => [d.call.id, d]));
  const calls = opened.calls.map(summaryOfDetail);
  const notify = app.getState().notify;
  const noPicks = () => notify('Picking calls (to draft a plan or check them again) needs the live calls: this export is read-only', 'info');
  store.setState({
    calls,
    callsTotal: calls.length,
    callsNext: null,
    readOnly: READ_ONLY_REASON,
    // The lab's sources, for the signature check's "use the source's secret".
    sources: app.getState().sources,
    notify,
    async loadCalls() {},
    async loadMoreCalls() {},
    async refreshDetail() {},
    togglePick: noPicks,
    pickRange: noPicks,
    // No address change: #/inspector/<id> names a live call.
    selectCall(id) {
      const detail = id === null ? null : (byId.get(id) ?? null);
      store.setState({
        selectedCallId: id,
        detail,
        detailError: id !== null && !detail ? `Call #${id} is not in ${opened.fileName} (an export holds the calls its filters matched).` : null,
      });
    },
  });
  return store;
}

function OpenedExportView({ opened }: { opened: OpenedExport }) {
  const app = useAppStore();
  const store = useMemo(() => exportStore(app, opened), [app, opened]);
  return (
    <div className="screen inspector-screen" data-testid="screen-inspector" data-read-only="export">
      <ExportBanner opened={opened} onBack={() => app.getState().closeExport()} />
      <StoreContext.Provider value={store}>
        <ExportCalls fileName={opened.fileName} />
      </StoreContext.Provider>
    </div>
  );
}

/** The same split as the live inspector's, over the view's own store. */
function ExportCalls({ fileName }: { fileName: string }) {
  const count = useApp((s) => s.calls.length);
  const foot = (
    <span className="muted small-text grow" data-testid="export-view-total" title={READ_ONLY_REASON}>
      {count} call{count === 1 ? '' : 's'} from {fileName} · read-only: replay, retry, clear and drafting need the live calls
    </span>
  );
  return (
    <InspectorSplit
      list={(cursor, setCursor) =>
        count === 0 ? (
          <div className="notice" data-testid="export-view-empty">
            No line of {fileName} is a call: see the lines left out above.
          </div>
        ) : (
          <CallList cursor={cursor} onCursor={setCursor} footer={foot} />
        )
      }
    />
  );
}
