import { useEffect, useMemo } from 'react';
import { EmptyState } from '../../components/field';
import { useApp, useAppShallow, useAppStore } from '../../store-context';
import { buildMessage } from '../../stores/compose-model';
import { ComposeForm, TemplatePicker } from './compose-form';
import { PreviewPanes } from './previews';
import { usePreviews } from './use-previews';
import { ComposePlanCheck } from '../../components/compose-plan-check';
import { LoadError } from '../../components/load-error';

function ClientSource() {
  const store = useAppStore();
  const { sources, client } = useAppShallow((s) => ({ sources: s.sources, client: s.clientState?.settings ?? null }));
  if (!client) return null;
  return (
    <label className="inline" title="The app's batching client sends with this source's write key">
      Source
      <select
        data-testid="compose-source"
        value={client.sourceId ?? ''}
        onChange={(e) => void store.getState().updateClientSettings({ sourceId: e.target.value })}
      >
        {client.sourceId === null ? <option value="">write key {client.writeKey}</option> : null}
        {sources.map((s) => (
          <option key={s.id} value={s.id}>
            {s.name}
          </option>
        ))}
      </select>
    </label>
  );
}

export function ComposeScreen() {
  const store = useAppStore();
  const draft = useApp((s) => s.draft);
  const sendError = useApp((s) => s.sendError);
  const sending = useApp((s) => s.sending);
  const lastSend = useApp((s) => s.lastSend);
  const { sourcesLoaded, noSources, sourcesError } = useAppShallow((s) => ({ sourcesLoaded: s.sourcesLoaded, noSources: s.sources.length === 0, sourcesError: s.sourcesError }));
  const sources = useApp((s) => s.sources);
  const clientSourceId = useApp((s) => s.clientState?.settings.sourceId ?? null);
  // A source created (or deleted) while this screen is open: the client's source follows at once,
  // not at the next send.
  useEffect(() => store.getState().syncComposeSource(), [store, sources]);
  const built = useMemo(() => buildMessage(draft), [draft]);
  // Errors the engine returned for the last send are shown on their fields as well.
  const errors = useMemo(() => {
    const out = { ...built.errors };
    for (const f of sendError?.fields ?? []) out[f.path || 'message'] ??= f.message;
    return out;
  }, [built.errors, sendError]);
  const previews = usePreviews(draft, built.message);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        // Capture phase: before the JSON editor turns Mod-Enter into a new line.
        e.preventDefault();
        e.stopPropagation();
        void store.getState().send('now');
      }
    };
    window.addEventListener('keydown', onKey, true);
    return () => window.removeEventListener('keydown', onKey, true);
  }, [store]);

  const invalid = Object.keys(built.errors).length;
  return (
    <div className="screen compose-screen" data-testid="screen-compose">
      <div className="compose-left">
        <header className="screen-header">
          <h1>Compose</h1>
          <span className="spacer" />
          <TemplatePicker />
          <ClientSource />
        </header>
        {sourcesError ? (
          <LoadError what="sources" error={sourcesError} onRetry={() => void store.getState().loadSources()} testId="compose-sources-error" />
        ) : sourcesLoaded && noSources ? (
          <EmptyState title="No source yet" testId="compose-empty">
            Calls are sent with a source's write key. Create one in <a href="#/destinations">Destinations</a>, add
            your receiver URL, then come back here.
          </EmptyState>
        ) : null}
        <ComposeForm errors={errors} />
        <div className="actions">
          <button type="button" data-testid="queue-button" disabled={sending !== null} onClick={() => void store.getState().send('queue')}>
            {sending === 'queue' ? 'Queuing…' : 'Queue through client'}
          </button>
          <button
            type="button"
            className="primary"
            data-testid="send-button"
            disabled={sending !== null}
            onClick={() => void store.getState().send('now')}
            title="Queue and flush at once (Ctrl/Cmd+Enter)"
          >
            {sending === 'now' ? 'Sending…' : 'Send now'}
          </button>
          <span className="muted small-text">Ctrl/Cmd+Enter sends</span>
        </div>
        <ComposePlanCheck sourceId={clientSourceId} type={draft.type} message={built.message} />
        {lastSend ? (
          <div className="notice" data-testid="send-result">
            {lastSend.text} · messageId <code>{lastSend.messageId}</code> ·{' '}
            <a
              href="#/inspector"
              data-testid="open-inspector"
              onClick={(e) => {
                e.preventDefault();
                void store.getState().openSentCall();
              }}
            >
              see it in the Inspector
            </a>
          </div>
        ) : null}
        {sendError && !sendError.fields.length ? (
          <div className="notice error" role="alert" data-testid="send-error">
            {sendError.message}
          </div>
        ) : null}
      </div>
      <PreviewPanes previews={previews} invalid={invalid} />
    </div>
  );
}
