import { useEffect, useState } from 'react';
import type { MockReceiverView } from '../../../shared/simulation.contract';
import { receiverUses } from '../../../shared/receiver-uses';
import { CopyButton } from '../../components/copy-button';
import { EmptyState } from '../../components/field';
import { formatTime } from '../../components/format';
import { useApp, useAppShallow, useAppStore } from '../../store-context';
import { ConfirmButton } from '../../components/confirm-button';
import { ReceiverForm } from './receiver-form';
import { ReceiverRequests } from './receiver-requests';
import { behaviorSummary } from './receiver-model';
import { TimeWarpControl } from '../../components/time-warp';
import { LoadError } from '../../components/load-error';

function AttachToSource({ receiver }: { receiver: MockReceiverView }) {
  const store = useAppStore();
  const sources = useApp((s) => s.sources);
  const [sourceId, setSourceId] = useState('');
  const attachedTo = sources.filter((s) => s.webhooks.urls.some((u) => u.url === receiver.url));
  if (sources.length === 0) {
    return (
      <span className="muted small-text">
        Create a source in <a href="#/destinations">Destinations</a> to send to this receiver.
      </span>
    );
  }
  return (
    <span className="row wrap">
      <select aria-label="Source" data-testid="attach-source" value={sourceId} onChange={(e) => setSourceId(e.target.value)}>
        <option value="">Use for source…</option>
        {sources.map((s) => (
          <option key={s.id} value={s.id}>
            {s.name}
            {attachedTo.includes(s) ? ' (attached)' : ''}
          </option>
        ))}
      </select>
      <button
        type="button"
        className="small"
        data-testid="attach-button"
        disabled={!sourceId}
        title="Adds this receiver's URL to the source's Webhooks URLs and enables Webhooks"
        onClick={async () => {
          if (await store.getState().attachReceiver(receiver.id, sourceId)) setSourceId('');
        }}
      >
        Attach
      </button>
      {attachedTo.length ? <span className="muted small-text">used by {attachedTo.map((s) => s.name).join(', ')}</span> : null}
    </span>
  );
}

/**
 * Delete, confirmed. A receiver sources send to is not deleted behind their back (their calls would
 * then fail with 404): the confirm names them and says what removing its URL does to each; one that
 * is an Actions mapping's URL cannot be deleted until the mapping has another URL (receiver-uses.ts).
 */
function DeleteReceiver({ receiver }: { receiver: MockReceiverView }) {
  const store = useAppStore();
  const sources = useApp((s) => s.sources);
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" className="small" data-testid="delete-receiver" onClick={() => setAsking(true)}>
        Delete
      </button>
    );
  }
  const uses = receiverUses(receiver.url, sources);
  const inMappings = uses.filter((u) => u.mappings.length > 0);
  const cancel = (
    <button type="button" className="small" data-testid="delete-receiver-cancel" onClick={() => setAsking(false)}>
      Cancel
    </button>
  );
  const remove = (detach: boolean) => {
    setAsking(false);
    void store.getState().deleteReceiver(receiver.id, detach);
  };
  if (inMappings.length) {
    return (
      <span className="row wrap delete-receiver-ask">
        <span className="small-text" role="alert" data-testid="delete-receiver-uses">
          It is the URL of {inMappings.map((u) => `mapping ${u.mappings.map((m) => `"${m}"`).join(', ')} of ${u.sourceName}`).join('; ')}: give that
          mapping another URL in <a href="#/destinations">Destinations</a> first.
        </span>
        {cancel}
      </span>
    );
  }
  return (
    <span className="row wrap delete-receiver-ask">
      {uses.length ? (
        <span className="small-text" data-testid="delete-receiver-uses">
          Used by{' '}
          {uses.map((u, i) => (
            <span key={u.sourceId}>
              {i > 0 ? ', ' : ''}
              <b>{u.sourceName}</b>
              {u.effect === 'webhooks_off' ? ' (its only URL: its Webhooks will be turned off)' : u.effect === 'actions_only' ? ' (its only URL: it will send Actions only)' : ''}
            </span>
          ))}
          . Its URL is removed from {uses.length === 1 ? 'it' : 'them'}.
        </span>
      ) : null}
      <button type="button" className="small danger" data-testid={uses.length ? 'delete-receiver-detach' : 'delete-receiver-confirm'} onClick={() => remove(uses.length > 0)}>
        {uses.length ? 'Delete and remove its URL' : 'Delete this receiver'}
      </button>
      {cancel}
    </span>
  );
}

function ReceiverPanel({ receiver }: { receiver: MockReceiverView }) {
  const store = useAppStore();
  const [editing, setEditing] = useState(false);
  const s = store.getState();
  return (
    <div className="receiver-panel" data-testid="receiver-panel" data-receiver-id={receiver.id}>
      <header className="row wrap">
        <h2 className="grow">{receiver.name}</h2>
        <AttachToSource receiver={receiver} />
        <button type="button" className="small" data-testid="edit-receiver" onClick={() => setEditing(!editing)}>
          {editing ? 'Close editor' : 'Edit'}
        </button>
        <ConfirmButton label="Reset" confirm="Clear its requests and counters" testId="reset-receiver" onConfirm={() => void s.resetReceiver(receiver.id)} />
        <DeleteReceiver receiver={receiver} />
      </header>
      <div className="row wrap small-text">
        <code data-testid="receiver-url">{receiver.url}</code>
        <CopyButton text={receiver.url} testId="copy-receiver-url" />
        <span className="muted">{behaviorSummary(receiver.behavior)}</span>
        <span className="muted">{receiver.secret ? '· checks X-Signature' : '· signature not checked'}</span>
      </div>
      {editing ? <ReceiverForm key={receiver.id} receiver={receiver} onDone={() => setEditing(false)} /> : null}
      <ReceiverRequests />
    </div>
  );
}

function ReceiverTable() {
  const store = useAppStore();
  const { receivers, selected } = useAppShallow((s) => ({ receivers: s.receivers, selected: s.selectedReceiverId }));
  return (
    <table className="table receivers-table" data-testid="receiver-list">
      <thead>
        <tr>
          <th>name</th>
          <th>URL</th>
          <th>TLS</th>
          <th>behavior</th>
          <th className="num">requests</th>
          <th>last</th>
        </tr>
      </thead>
      <tbody>
        {receivers.map((r) => (
          <tr
            key={r.id}
            className={`receiver-row${r.id === selected ? ' selected' : ''}`}
            data-testid="receiver-row"
            data-name={r.name}
            onClick={() => {
              // Another receiver's panel replaces this one's form: an edit in it asks first.
              if (r.id !== selected) store.getState().guardLeave(() => store.getState().selectReceiver(r.id));
            }}
          >
            <td>{r.name}</td>
            <td className="mono" data-testid="receiver-row-url">
              <span className="row">
                <span className="ellipsis">{r.url}</span>
                <CopyButton text={r.url} testId="receiver-row-copy" />
              </span>
            </td>
            <td>{r.tls ? 'https' : 'http'}</td>
            <td className="small-text" data-testid="receiver-behavior">
              {behaviorSummary(r.behavior)}
            </td>
            <td className="num" data-testid="receiver-count">
              {r.requestCount}
            </td>
            <td className="small-text">{r.lastRequestAt ? formatTime(r.lastRequestAt) : '—'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function ReceiversScreen() {
  const store = useAppStore();
  const { receivers, loaded, error, selectedId } = useAppShallow((s) => ({
    receivers: s.receivers,
    loaded: s.receiversLoaded,
    error: s.receiversError,
    selectedId: s.selectedReceiverId,
  }));
  const [creating, setCreating] = useState(false);
  useEffect(() => {
    const s = store.getState();
    void s.loadReceivers();
    // Requests that arrived while another screen was open were not applied to this list.
    if (s.selectedReceiverId) void s.loadReceiverRequests();
  }, [store]);
  const selected = receivers.find((r) => r.id === selectedId) ?? null;
  return (
    <div className="screen receivers-screen" data-testid="screen-receivers">
      <header className="screen-header">
        <h1 className="grow">Mock receivers</h1>
        <TimeWarpControl compact testId="receivers-time-warp" />
        <button
          type="button"
          className="primary"
          data-testid="new-receiver"
          onClick={() => {
            store.getState().clearReceiverFormError();
            setCreating(true);
          }}
        >
          + New receiver
        </button>
      </header>
      {error ? <LoadError what="mock receivers" error={error} onRetry={() => void store.getState().loadReceivers()} testId="receivers-error" /> : null}
      {creating ? (
        <ReceiverForm
          onDone={(saved) => {
            setCreating(false);
            if (saved) store.getState().selectReceiver(saved.id);
          }}
        />
      ) : null}
      {receivers.length ? (
        <ReceiverTable />
      ) : loaded && !creating && !error ? (
        <EmptyState title="No mock receivers yet" testId="receivers-empty">
          <p>
            A mock receiver is a webhook endpoint the app hosts on 127.0.0.1 that answers the way you choose: a status code, a delay or a
            timeout, a flaky first N failures, a percentage of failures, a reset connection, a self-signed certificate.
          </p>
          <ol>
            <li>
              Press <b>+ New receiver</b> and choose its behavior.
            </li>
            <li>
              Select it and <b>Use for source…</b>: its URL is added to that source's Webhooks URLs.
            </li>
            <li>Send a call; every request it gets is listed with its signature verdict, next to what the dispatcher recorded.</li>
          </ol>
        </EmptyState>
      ) : null}
      {selected ? <ReceiverPanel key={selected.id} receiver={selected} /> : null}
    </div>
  );
}
