import { useRef } from 'react';
import { useApp, useAppStore } from '../store-context';
import { downloadBlob } from './download';

/** Export of the deliveries matching the Inspector's current filters (SPEC §7). */
export function ExportMenu() {
  const store = useAppStore();
  const exporting = useApp((s) => s.exporting);
  const opening = useApp((s) => s.openingExport);
  const ref = useRef<HTMLDetailsElement>(null);
  const fileRef = useRef<HTMLInputElement>(null);
  const run = async (format: 'jsonl' | 'har') => {
    ref.current?.removeAttribute('open');
    const file = await store.getState().exportDeliveries(format);
    if (file) downloadBlob(file.filename, file.blob);
  };
  return (
    <>
      <details className="menu" ref={ref} data-testid="export-menu">
        <summary className="button-like" data-testid="export-menu-toggle" title="Deliveries and attempts matching the current filters">
          {exporting ? 'Exporting…' : 'Export ▾'}
        </summary>
        <div className="menu-items">
          <button type="button" data-testid="export-jsonl" disabled={exporting} onClick={() => void run('jsonl')}>
            JSON Lines (one call per line, with its attempts)
          </button>
          <button type="button" data-testid="export-har" disabled={exporting} onClick={() => void run('har')}>
            HAR 1.2 (one entry per attempt)
          </button>
          <button
            type="button"
            data-testid="open-export"
            disabled={opening}
            title="Show the calls of a JSON Lines export file in place of the live calls, read-only"
            onClick={() => {
              ref.current?.removeAttribute('open');
              fileRef.current?.click();
            }}
          >
            {opening ? 'Opening…' : 'Open an export… (a .jsonl file, read-only)'}
          </button>
        </div>
      </details>
      <input
        ref={fileRef}
        type="file"
        hidden
        accept=".jsonl,.ndjson,.json,application/x-ndjson"
        aria-label="Export file to open"
        data-testid="open-export-file"
        onChange={(e) => {
          const file = e.target.files?.[0];
          // The same file can be opened again after Back to live calls.
          e.target.value = '';
          if (file) void store.getState().openExport(file);
        }}
      />
    </>
  );
}
