import { useEffect, useState } from 'react';
import type { DeletionRequest } from '../../../shared/simulation.contract';
import { EmptyState, Field } from '../../components/field';
import { countOf, formatDateTime } from '../../components/format';
import { StatusChip } from '../../components/status-chip';
import { useApp, useAppShallow, useAppStore } from '../../store-context';
import { FormErrors } from '../../components/form-errors';
import { CallLink } from '../../components/call-link';

// Deletion requests (SPEC §6): one `delete` notification per source with Webhooks enabled.

const STATUS_CLASS: Record<DeletionRequest['status'], string> = {
  pending: 'chip-pending',
  done: 'chip-delivered',
  failed: 'chip-failed',
  no_sources: 'chip-none',
};

function DeletionForm() {
  const store = useAppStore();
  const { formError, creating } = useAppShallow((s) => ({ formError: s.deletionFormError, creating: s.creatingDeletion }));
  const [userId, setUserId] = useState('');
  const [purge, setPurge] = useState(false);
  // A purge cannot be undone: the form asks once more, in place, before it is sent.
  const [confirming, setConfirming] = useState(false);
  const other = (formError?.fields ?? []).filter((f) => f.path !== 'userId' && f.path !== 'purge');
  return (
    <form
      className="deletion-form"
      data-testid="deletion-form"
      noValidate
      onSubmit={async (e) => {
        e.preventDefault();
        if (purge && !confirming && userId.trim()) return setConfirming(true);
        setConfirming(false);
        if (await store.getState().createDeletion({ userId, purge })) {
          setUserId('');
          setPurge(false);
        }
      }}
    >
      <div className="row wrap">
        <Field label="userId to delete" name="userId" error={formError?.fieldMessage('userId')}>
          <input
            data-testid="deletion-user"
            className="mono"
            value={userId}
            spellCheck={false}
            placeholder="user_1234"
            onChange={(e) => {
              setUserId(e.target.value);
              setConfirming(false);
            }}
          />
        </Field>
        <Field label="Also purge this user's calls from local history" name="purge" error={formError?.fieldMessage('purge')}>
          <input
            type="checkbox"
            data-testid="deletion-purge"
            checked={purge}
            onChange={(e) => {
              setPurge(e.target.checked);
              setConfirming(false);
            }}
          />
        </Field>
        {confirming ? null : (
          <button type="submit" className="primary" data-testid="deletion-submit" disabled={creating}>
            {creating ? 'Requesting…' : 'Request deletion'}
          </button>
        )}
      </div>
      {confirming ? (
        <div className="notice warn row wrap" role="alertdialog" aria-label="Confirm the purge" data-testid="deletion-purge-ask">
          <span>
            Purging removes every call of <code>{userId.trim()}</code> from this lab's history, with their deliveries and attempts. It cannot be undone.
          </span>
          <button type="submit" className="small danger" data-testid="deletion-purge-confirm" disabled={creating} autoFocus>
            Purge and request deletion
          </button>
          <button type="button" className="small" data-testid="deletion-purge-cancel" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </div>
      ) : null}
      <FormErrors fields={other} error={formError} />
    </form>
  );
}

function DeletionRow({ d }: { d: DeletionRequest }) {
  return (
    <tr data-testid="deletion-row" data-user={d.userId} data-status={d.status}>
      <td className="mono">{d.userId}</td>
      <td className="small-text">{formatDateTime(d.createdAt)}</td>
      <td>
        <span className={`chip ${STATUS_CLASS[d.status]}`} data-testid="deletion-status">
          {d.status.replace('_', ' ')}
        </span>
      </td>
      <td className="small-text">{d.purge ? `${countOf(d.purgedCalls, 'call')} purged` : 'kept'}</td>
      <td>
        {d.notifications.length === 0 ? (
          <span className="muted small-text">
            {d.skipped?.length ? 'no notice sent' : 'no source with Webhooks enabled had calls of this user'}
          </span>
        ) : (
          <ul className="plain-list">
            {d.notifications.map((n) => (
              <li key={`${n.sourceId}:${n.callId}`} className="row" data-testid="deletion-notification">
                <span>{n.sourceName}</span>
                <StatusChip call={{ status: 'accepted', dropReason: null, deliveryState: n.deliveryState, nextAttemptAt: null }} />
                <CallLink id={n.callId} testId="deletion-open-call">
                  delete call #{n.callId}
                </CallLink>
              </li>
            ))}
          </ul>
        )}
        {d.skipped?.length ? (
          <ul className="plain-list small-text" data-testid="deletion-skipped">
            {d.skipped.map((k) => (
              <li key={k.sourceId} className="muted">
                <b>{k.sourceName}</b>: no notice, it {k.reason}
              </li>
            ))}
          </ul>
        ) : null}
      </td>
    </tr>
  );
}

export function DeletionsScreen() {
  const store = useAppStore();
  const { deletions, loaded, error } = useAppShallow((s) => ({ deletions: s.deletions, loaded: s.deletionsLoaded, error: s.deletionsError }));
  const hasWebhooks = useApp((s) => s.sources.some((x) => x.webhooks.enabled));
  useEffect(() => {
    void store.getState().loadDeletions();
  }, [store]);
  return (
    <div className="screen deletions-screen" data-testid="screen-deletions">
      <header className="screen-header">
        <h1>Deletion requests</h1>
      </header>
      <p className="muted">
        Asks every source that received calls for a user, and has Webhooks enabled, to delete that user: each gets one signed{' '}
        <code>delete</code> call, delivered and retried like any other call and visible in the Inspector.
      </p>
      {!hasWebhooks ? (
        <div className="notice warn">
          No source has Webhooks enabled yet, so a request would notify no one. Enable Webhooks in <a href="#/destinations">Destinations</a> first.
        </div>
      ) : null}
      <DeletionForm />
      {error ? <div className="notice error">Could not load deletion requests: {error}</div> : null}
      {deletions.length ? (
        <table className="table" data-testid="deletion-list">
          <thead>
            <tr>
              <th>userId</th>
              <th>requested</th>
              <th>status</th>
              <th>local history</th>
              <th>notifications</th>
            </tr>
          </thead>
          <tbody>
            {deletions.map((d) => (
              <DeletionRow key={d.id} d={d} />
            ))}
          </tbody>
        </table>
      ) : loaded && !error ? (
        <EmptyState title="No deletion requests yet" testId="deletions-empty">
          Enter a <code>userId</code> above and press <b>Request deletion</b>. Tick <i>purge</i> to also remove that user's calls from this
          app's history.
        </EmptyState>
      ) : null}
    </div>
  );
}
