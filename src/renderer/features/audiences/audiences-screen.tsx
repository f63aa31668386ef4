import { useEffect, useState } from 'react';
import type { Audience } from '../../../shared/simulation.contract';
import { EmptyState } from '../../components/field';
import { formatDateTime, formatDuration } from '../../components/format';
import { useApp, useAppShallow, useAppStore } from '../../store-context';
import { syncText } from '../../stores/audiences.slice';
import { ConfirmButton } from '../../components/confirm-button';
import { AudienceForm } from './audience-form';
import { describeCompute, describeRule } from './audience-model';

function MembersRow({ a }: { a: Audience }) {
  const list = useApp((s) => s.audienceMembers[a.id]);
  return (
    <tr className="audience-members-row">
      <td colSpan={6}>
        {!list ? (
          <div className="muted">Loading members…</div>
        ) : list.total === 0 ? (
          <div className="muted small-text" data-testid="audience-members-empty">
            No {a.type === 'audience' ? 'member' : 'user with a value'} at the last sync.
          </div>
        ) : (
          <div data-testid="audience-members-list">
            <table className="table">
              <thead>
                <tr>
                  <th>userId</th>
                  <th>{a.key}</th>
                </tr>
              </thead>
              <tbody>
                {list.members.map((m) => (
                  <tr key={m.userId} data-testid="audience-member">
                    <td className="mono">{m.userId}</td>
                    <td className="mono">{JSON.stringify(m.value)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {list.members.length < list.total ? <div className="muted small-text">showing {list.members.length} of {list.total}</div> : null}
          </div>
        )}
      </td>
    </tr>
  );
}

function AudienceRow({ a, onEdit }: { a: Audience; onEdit(): void }) {
  const store = useAppStore();
  const [showMembers, setShowMembers] = useState(false);
  const sources = useApp((s) => s.sources);
  const last = useApp((s) => s.syncResults[a.id]);
  const syncing = useApp((s) => s.syncingIds.includes(a.id));
  const names = a.sourceIds.map((id) => sources.find((s) => s.id === id)?.name ?? id).join(', ');
  return (
    <>
      <tr data-testid="audience-row" data-name={a.name}>
        <td>
          <div>{a.name}</div>
          <code className="small-text">{a.key}</code>
        </td>
        <td className="small-text">
          {a.type === 'audience' ? 'audience' : 'computed trait'}: {a.rule ? describeRule(a.rule) : a.compute ? describeCompute(a.compute) : ''}
        </td>
        <td className="num">
          <button
            type="button"
            className="link"
            data-testid="audience-members-toggle"
            aria-expanded={showMembers}
            title={showMembers ? 'Hide the members' : 'Show the members'}
            onClick={() => {
              if (!showMembers) void store.getState().loadAudienceMembers(a.id);
              setShowMembers(!showMembers);
            }}
          >
            <span data-testid="audience-members">{a.memberCount}</span> {showMembers ? '▾' : '▸'}
          </button>
        </td>
        <td className="small-text">{names}</td>
        <td className="small-text">
          {a.lastSyncAt ? formatDateTime(a.lastSyncAt) : 'never'}
          {a.syncIntervalMs ? <div className="muted">every {formatDuration(a.syncIntervalMs)}</div> : null}
          {last ? (
            <div data-testid="audience-sync-result">
              {syncText(last)}{' '}
              {last.callIds.length ? (
                <a href="#/inspector" onClick={() => store.getState().setFilters({ type: 'identify', q: '' })}>
                  see in Inspector
                </a>
              ) : null}
            </div>
          ) : null}
        </td>
        <td>
          <span className="row">
            <button type="button" className="small" data-testid="audience-sync" disabled={syncing} onClick={() => void store.getState().syncAudience(a.id)}>
              {syncing ? 'Syncing…' : 'Sync now'}
            </button>
            <button type="button" className="small" data-testid="audience-edit" onClick={onEdit}>
              Edit
            </button>
            <ConfirmButton label="Delete" confirm="Delete (members are not told)" testId="audience-delete" onConfirm={() => void store.getState().deleteAudience(a.id)} />
          </span>
        </td>
      </tr>
      {showMembers ? <MembersRow a={a} /> : null}
    </>
  );
}

export function AudiencesScreen() {
  const store = useAppStore();
  const { audiences, loaded, error } = useAppShallow((s) => ({ audiences: s.audiences, loaded: s.audiencesLoaded, error: s.audiencesError }));
  const [creating, setCreating] = useState(false);
  const [editingId, setEditingId] = useState<string | null>(null);
  const editing = audiences.find((a) => a.id === editingId);
  useEffect(() => {
    void store.getState().loadAudiences();
  }, [store]);
  return (
    <div className="screen audiences-screen" data-testid="screen-audiences">
      <header className="screen-header">
        <h1 className="grow">Audiences and computed traits</h1>
        {!creating && !editing ? (
          <button type="button" className="primary" data-testid="new-audience" onClick={() => setCreating(true)}>
            + New audience
          </button>
        ) : null}
      </header>
      {creating ? <AudienceForm onDone={() => setCreating(false)} /> : null}
      {editing && !creating ? <AudienceForm key={editing.id} editing={editing} onDone={() => setEditingId(null)} /> : null}
      {error ? <div className="notice error">Could not load audiences: {error}</div> : null}
      {audiences.length ? (
        <table className="table" data-testid="audience-list">
          <thead>
            <tr>
              <th>name / key</th>
              <th>definition</th>
              <th className="num">members</th>
              <th>sources</th>
              <th>last sync</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {audiences.map((a) => (
              <AudienceRow
                key={a.id}
                a={a}
                onEdit={() => {
                  store.getState().clearAudiencePreview();
                  setEditingId(a.id);
                }}
              />
            ))}
          </tbody>
        </table>
      ) : loaded && !creating && !error ? (
        <EmptyState title="No audiences yet" testId="audiences-empty">
          <p>
            An audience is a rule over user profiles built from the calls received: traits from <code>identify</code> calls and counts of{' '}
            <code>track</code> events. A computed trait is a value per user (an event count, or the last value of a property).
          </p>
          <ol>
            <li>
              Send some identify and track calls (from <a href="#/compose">Compose</a> or the <a href="#/load">Load</a> generator).
            </li>
            <li>
              Press <b>+ New audience</b>, build the rule and <b>Preview members</b>.
            </li>
            <li>
              <b>Create and sync</b>: each member gets an <code>identify</code> call with the snake_cased trait, delivered through the chosen
              sources' Webhooks destination.
            </li>
          </ol>
        </EmptyState>
      ) : null}
    </div>
  );
}
