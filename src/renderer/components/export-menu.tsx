import { useRef } from 'react';
import { useApp, useAppStore } from '../store-context';
import { downloadBlob } from './download';

/** Export of the deliveries matching the Inspector's current filters (SPEC §7). */
export function ExportMenu() {
  const store = useAppStore();
  const exporting = useApp((s) => s.exporting);
  const ref = useRef<HTMLDetailsElement>(null);
  const run = async (format: 'jsonl' | 'har') => {
    ref.current?.removeAttribute('open');
    const file = await store.getState().exportDeliveries(format);
    if (file) downloadBlob(file.filename, file.blob);
  };
  return (
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
      </div>
    </details>
  );
}
