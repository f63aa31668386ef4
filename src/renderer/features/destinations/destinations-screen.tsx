import { useState } from 'react';
import type { Source } from '../../../shared/types';
import { ConfirmButton } from '../../components/confirm-button';
import { CopyButton } from '../../components/copy-button';
import { EmptyState } from '../../components/field';
import { StatusChip } from '../../components/status-chip';
import { useApp, useAppStore } from '../../store-context';
import { SourceList } from './source-list';
import { WebhooksForm } from './webhooks-form';
import { SecretRotation } from './secret-rotation';
import { CollectorFaultsForm } from './collector-faults-form';
import { CallLink } from '../../components/call-link';
import { LoadError } from '../../components/load-error';

function SourcePanel({ source }: { source: Source }) {
  const store = useAppStore();
  const collector = useApp((s) => s.health?.collectorUrl ?? null);
  const lastTest = useApp((s) => s.lastTestCall);
  const [testing, setTesting] = useState(false);
  const s = store.getState();
  const summary = lastTest?.call.sourceId === source.id ? lastTest : null;
  return (
    <div className="source-panel" data-testid="source-panel" data-source-id={source.id}>
      <header className="row">
        <h2 className="grow">{source.name}</h2>
        <ConfirmButton label="Delete source" confirm="Delete it and its settings" testId="delete-source" onConfirm={() => void s.deleteSource(source.id)} />
      </header>
      <div className="write-key row">
        <span className="field-label">Write key</span>
        <code data-testid="write-key">{source.writeKey}</code>
        <CopyButton text={source.writeKey} testId="copy-write-key" />
        <ConfirmButton label="Regenerate" confirm="Replace the key (the old one stops working)" testId="regenerate-key" onConfirm={() => void s.regenerateWriteKey(source.id)} />
      </div>
      {collector ? (
        <div className="muted small-text">
          SDKs send to <code>{collector}</code> with this write key (HTTP Basic user name, or <code>writeKey</code> in the body).
        </div>
      ) : null}
      <WebhooksForm key={`${source.id}:${JSON.stringify(source.webhooks)}`} source={source} />
      <SecretRotation source={source} />
      <div className="actions">
        <button
          type="button"
          data-testid="send-test-call"
          disabled={testing}
          title="Sends a sample track call through the collector for this source"
          onClick={async () => {
            setTesting(true);
            await s.sendTestCall(source.id);
            setTesting(false);
          }}
        >
          {testing ? 'Sending…' : 'Send a test call'}
        </button>
        {source.webhooks.urls.length > 0 ? (
          <button
            type="button"
            data-testid="check-receiver"
            title={`Opens Check a receiver for ${source.webhooks.urls[0].url} with this source's secrets`}
            onClick={() =>
              s.checkReceiver({
                url: source.webhooks.urls[0].url,
                secret: source.webhooks.sharedSecret ?? '',
                standardWebhooksSecret: source.webhooks.standardWebhooksSecret ?? '',
              })
            }
          >
            Check the receiver
          </button>
        ) : null}
        {summary ? (
          <span className="row" data-testid="test-call-result">
            test call #{summary.call.id}
            <StatusChip
              call={{
                status: summary.call.status,
                dropReason: summary.call.dropReason,
                deliveryState: summary.deliveries[0]?.state ?? null,
                nextAttemptAt: summary.deliveries[0]?.nextAttemptAt ?? null,
              }}
            />
            <CallLink id={summary.call.id} testId="test-call-open">
              open in Inspector
            </CallLink>
          </span>
        ) : null}
      </div>
      <CollectorFaultsForm key={`${source.id}:${JSON.stringify(source.collectorFaults)}`} source={source} />
    </div>
  );
}

export function DestinationsScreen() {
  const store = useAppStore();
  const sources = useApp((s) => s.sources);
  const loaded = useApp((s) => s.sourcesLoaded);
  const error = useApp((s) => s.sourcesError);
  const selectedId = useApp((s) => s.selectedSourceId);
  const selected = sources.find((s) => s.id === selectedId) ?? null;
  return (
    <div className="screen destinations-screen" data-testid="screen-destinations">
      <aside className="destinations-side">
        <h1>Sources</h1>
        <SourceList />
      </aside>
      <section className="destinations-main">
        {error ? <LoadError what="sources" error={error} onRetry={() => void store.getState().loadSources()} testId="sources-error" /> : null}
        {selected ? (
          <SourcePanel source={selected} />
        ) : loaded && !error ? (
          <EmptyState title="Create your first source" testId="destinations-empty">
            A source is where calls come from (an app, a website, a server). Give it a name on the left; it gets a
            write key for your SDKs. Then add up to five receiver URLs: every call is signed and POSTed to each of them.
          </EmptyState>
        ) : null}
      </section>
    </div>
  );
}
