import { useEffect, useState } from 'react';
import type { ClientState } from '../../../shared/api.contract';
import { Field } from '../../components/field';
import { formatBytes, formatDuration, formatMs, formatTime } from '../../components/format';
import { useNow } from '../../components/use-now';
import { useApp, useAppStore } from '../../store-context';
import { BrowserSdk } from './browser-sdk';

function NextFlush({ at }: { at: string | null }) {
  const now = useNow();
  if (!at) return <span className="muted">no flush scheduled (queue empty)</span>;
  const left = new Date(at).getTime() - now;
  return <span data-testid="next-flush">{left > 0 ? `in ${formatDuration(left)}` : 'now'}</span>;
}

function FlushSettings({ state }: { state: ClientState }) {
  const store = useAppStore();
  const formError = useApp((s) => s.clientFormError);
  const [flushAt, setFlushAt] = useState(String(state.settings.flushAt));
  const [flushAfter, setFlushAfter] = useState(String(state.settings.flushAfter));
  return (
    <form
      className="row wrap"
      noValidate
      data-testid="client-settings"
      onSubmit={(e) => {
        e.preventDefault();
        void store.getState().updateClientSettings({ flushAt: Number(flushAt), flushAfter: Number(flushAfter) }).then((ok) => ok && store.getState().notify('Client settings saved'));
      }}
    >
      <Field label="flushAt (messages)" name="flushAt" error={formError?.fieldMessage('flushAt')} hint="1 sends each message at once">
        <input type="number" min={1} data-testid="client-flush-at" value={flushAt} onChange={(e) => setFlushAt(e.target.value)} />
      </Field>
      <Field label="flushAfter (ms)" name="flushAfter" error={formError?.fieldMessage('flushAfter')} hint="since the last flush">
        <input type="number" min={10} data-testid="client-flush-after" value={flushAfter} onChange={(e) => setFlushAfter(e.target.value)} />
      </Field>
      <button type="submit" data-testid="client-apply">
        Apply
      </button>
    </form>
  );
}

export function ClientScreen() {
  const store = useAppStore();
  const state = useApp((s) => s.clientState);
  const error = useApp((s) => s.clientError);
  const flushing = useApp((s) => s.flushing);
  useEffect(() => {
    void store.getState().loadClient();
  }, [store]);
  if (error && !state) return <div className="screen notice error">Could not load the client's state: {error}</div>;
  if (!state) return <div className="screen muted">Loading…</div>;
  return (
    <div className="screen client-screen" data-testid="screen-client">
      <header className="screen-header">
        <h1>Batching client</h1>
        <span className="spacer" />
        <button type="button" className="primary" data-testid="client-flush" disabled={flushing} onClick={() => void store.getState().flushClient()}>
          {flushing ? 'Flushing…' : 'Flush now'}
        </button>
      </header>
      <div className="stats">
        <div>
          <b data-testid="client-queued">{state.queued}</b> queued ({formatBytes(state.queuedBytes)})
        </div>
        <div>
          next flush <NextFlush at={state.nextFlushAt} />
        </div>
        <div>
          <b>{state.batchesSent}</b> batches sent · <b>{state.retries}</b> retries · <b>{state.drops}</b> dropped
        </div>
        <div className="muted">
          last flush {formatTime(state.lastFlushAt)}
          {state.lastFlushResult ? ` · ${state.lastFlushResult}` : ''}
        </div>
      </div>
      <div className="muted small-text">
        Sends to <code>{state.settings.endpoint}</code> with write key <code>{state.settings.writeKey}</code>. Choose the source on the
        Compose screen.
      </div>
      <FlushSettings key={`${state.settings.flushAt}:${state.settings.flushAfter}`} state={state} />
      <h3>Recent batches</h3>
      {state.recentBatches.length === 0 ? (
        <div className="muted">No batch sent yet. Queue a call from Compose; it is sent when {state.settings.flushAt} are queued, after {formatMs(state.settings.flushAfter)}, or on Flush now.</div>
      ) : (
        <table className="table" data-testid="client-batches">
          <thead>
            <tr>
              <th>time</th>
              <th className="num">messages</th>
              <th className="num">bytes</th>
              <th>status</th>
              <th className="num">duration</th>
              <th className="num">retries</th>
              <th>error</th>
            </tr>
          </thead>
          <tbody>
            {state.recentBatches.map((b, i) => (
              <tr key={`${b.at}-${i}`}>
                <td className="mono">{formatTime(b.at)}</td>
                <td className="num">{b.count}</td>
                <td className="num">{formatBytes(b.bytes)}</td>
                <td>{b.status ?? '—'}</td>
                <td className="num">{formatMs(b.durationMs)}</td>
                <td className="num">{b.retries}</td>
                <td className="ellipsis">{b.error ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h3>DEBUG log</h3>
      <pre className="log" data-testid="client-log">
        {state.log.length ? state.log.map((l) => `${formatTime(l.at)}  ${l.line}`).join('\n') : '(empty)'}
      </pre>
      <BrowserSdk />
    </div>
  );
}
