import { useRef, useState } from 'react';
import { useApp, useAppStore } from '../store-context';
import { downloadText } from './download';

/** Export the current config as a file, or import one (sources, settings, mock receivers, audiences). */
export function ConfigIo() {
  const store = useAppStore();
  const error = useApp((s) => s.configImportError);
  const warnings = useApp((s) => s.configImportWarnings);
  const notes = warnings.filter((w) => w.code === 'mock_receiver_resolved');
  const doubts = warnings.filter((w) => w.code !== 'mock_receiver_resolved');
  const input = useRef<HTMLInputElement>(null);
  const [busy, setBusy] = useState(false);
  return (
    <section className="config-io" data-testid="config-io">
      <h3>Config file</h3>
      <p className="muted small-text">
        The same JSON as <code>--config</code>: sources with their Webhooks settings, settings, mock receivers and audiences. Importing adds
        or updates by name; nothing is deleted. A source's URL that is one of this lab's mock receivers is written as its name (
        <code>{'{"mockReceiver": "flaky"}'}</code>), so the lab that imports the file sends to its own receiver of that name.
      </p>
      <div className="row">
        <button
          type="button"
          data-testid="config-export"
          onClick={async () => {
            const text = await store.getState().exportConfig();
            if (text) downloadText('webhook-lab.config.json', text, 'application/json');
          }}
        >
          Export config
        </button>
        <button type="button" data-testid="config-import" disabled={busy} onClick={() => input.current?.click()}>
          {busy ? 'Importing…' : 'Import config…'}
        </button>
        <input
          ref={input}
          type="file"
          accept=".json,application/json"
          hidden
          data-testid="config-file"
          onChange={async (e) => {
            const file = e.target.files?.[0];
            e.target.value = '';
            if (!file) return;
            setBusy(true);
            await store.getState().importConfig(await file.text());
            setBusy(false);
          }}
        />
      </div>
      {doubts.length ? (
        <div className="notice warn" role="status" data-testid="config-import-warnings">
          Imported, but check {doubts.length === 1 ? 'this URL' : 'these URLs'}:
          <ul>
            {doubts.map((w) => (
              <li key={`${w.path}:${w.message}`}>
                <code>{w.path}</code>: {w.message}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {notes.length ? (
        <div className="notice" data-testid="config-import-notes">
          Mock receivers named in the file now send to this lab's:
          <ul>
            {notes.map((w) => (
              <li key={`${w.path}:${w.message}`}>
                <code>{w.path}</code>: {w.message}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {error ? (
        <div className="notice error" role="alert" data-testid="config-import-error">
          {error.fields.length ? (
            <>
              The file was not imported:
              <ul>
                {error.fields.map((f) => (
                  <li key={`${f.path}:${f.message}`}>
                    <code>{f.path || '(file)'}</code>: {f.message}
                  </li>
                ))}
              </ul>
            </>
          ) : (
            error.message
          )}
        </div>
      ) : null}
    </section>
  );
}
