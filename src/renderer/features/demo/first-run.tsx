import { useEffect } from 'react';
import { useApp, useAppShallow, useAppStore } from '../../store-context';

/**
 * Above every screen: on an empty lab, the one-click demo (a source with a mock receiver attached
 * and a signed sample call, opened in the inspector); once made, what it is and how to remove it.
 */
export function FirstRun() {
  const store = useAppStore();
  const { sources, loaded } = useAppShallow((s) => ({ sources: s.sources, loaded: s.sourcesLoaded }));
  const demo = useApp((s) => s.demo);
  const busy = useApp((s) => s.demoBusy);
  // The demo's parts may be deleted by hand (or made by another window): read it again with the sources.
  useEffect(() => {
    if (loaded) void store.getState().loadDemo();
  }, [store, sources, loaded]);

  if (demo) {
    const callId = demo.callIds[0];
    return (
      <div className="first-run demo-bar" data-testid="demo-bar" role="status">
        <span className="grow">
          <b>Demo</b>: source <b>{demo.source?.name ?? '(deleted)'}</b> sends signed calls to the mock receiver <b>{demo.receiver?.name ?? '(deleted)'}</b>
          {demo.receiver ? <code className="small-text"> {demo.receiver.path}</code> : null}.
        </span>
        {callId !== undefined ? (
          <button type="button" className="small" data-testid="demo-open-call" onClick={() => store.getState().openCallInInspector(callId)}>
            Open the demo call
          </button>
        ) : null}
        <button type="button" className="small" data-testid="demo-remove" disabled={busy} onClick={() => void store.getState().removeDemo()}>
          {busy ? 'Removing…' : 'Remove demo'}
        </button>
      </div>
    );
  }
  if (!loaded || sources.length > 0) return null;
  return (
    <div className="first-run" data-testid="first-run">
      <span className="grow">
        <b>New here?</b> Try it: one click makes a demo source with a mock receiver attached, sends it a signed sample call and opens that call in the
        Inspector. <b>Remove demo</b> takes it all away.
      </span>
      <button type="button" className="primary" data-testid="demo-try" disabled={busy} onClick={() => void store.getState().tryDemo()}>
        {busy ? 'Making the demo…' : 'Try it'}
      </button>
    </div>
  );
}
