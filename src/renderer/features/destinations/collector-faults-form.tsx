import { useEffect, useState } from 'react';
import type { ApiError } from '../../../shared/api-error';
import { DEFAULT_FAULT_STATUS, FAULT_MODES, HANG_MAX_MS, describeRefusals, type CollectorFaults, type FaultMode } from '../../../shared/collector-faults';
import type { Source } from '../../../shared/types';
import { Field } from '../../components/field';
import { FormErrors } from '../../components/form-errors';
import { useApp, useAppStore } from '../../store-context';
import { useUnsaved } from '../../components/leave-dialog';

/** While a source has faults on, its counters are read again this often. */
const COUNTS_POLL_MS = 2_000;

const MODE_LABELS: Record<FaultMode, string> = {
  status: 'answer an error status',
  delay: 'answer late',
  hang: `never answer (closed after ${HANG_MAX_MS / 1000} s)`,
  reset: 'reset the connection',
};

interface Draft {
  enabled: boolean;
  rate: string;
  mode: FaultMode;
  status: string;
  retryAfterS: string;
  delayMs: string;
  seed: string;
}

function toDraft(f: CollectorFaults | null): Draft {
  return {
    enabled: f !== null,
    rate: String(f?.rate ?? 0.5),
    mode: f?.mode ?? 'status',
    status: String(f?.status ?? DEFAULT_FAULT_STATUS),
    retryAfterS: f?.retryAfterS === undefined ? '' : String(f.retryAfterS),
    delayMs: String(f?.delayMs ?? 2000),
    seed: f?.seed === undefined ? '' : String(f.seed),
  };
}

// Blank optional fields are left out; what is not a number reaches the engine, which names the field.
const num = (v: string): number | undefined => (v.trim() === '' ? undefined : Number(v));

function fromDraft(d: Draft): CollectorFaults | null {
  if (!d.enabled) return null;
  const f = { rate: num(d.rate), mode: d.mode, seed: num(d.seed) } as CollectorFaults;
  if (d.mode === 'status') Object.assign(f, { status: num(d.status), retryAfterS: num(d.retryAfterS) });
  if (d.mode === 'delay') f.delayMs = num(d.delayMs);
  return JSON.parse(JSON.stringify(f)) as CollectorFaults; // drops the undefined keys
}

/**
 * A source's collector faults (README, Decisions, "Collector faults"): mount it with a key of the
 * source's settings so a change elsewhere resets the draft.
 */
export function CollectorFaultsForm({ source }: { source: Source }) {
  const store = useAppStore();
  const counts = useApp((s) => s.faultCounts?.sources[source.id]);
  const [draft, setDraft] = useState(() => toDraft(source.collectorFaults));
  const [error, setError] = useState<ApiError | null>(null);
  const [saving, setSaving] = useState(false);
  const on = source.collectorFaults !== null;
  useEffect(() => {
    void store.getState().loadFaultCounts();
    if (!on) return undefined;
    const timer = setInterval(() => void store.getState().loadFaultCounts(), COUNTS_POLL_MS);
    return () => clearInterval(timer);
  }, [store, on]);

  const err = (path: string) => error?.fieldMessage(`collectorFaults.${path}`);
  const shown = ['rate', 'mode', 'status', 'retryAfterS', 'delayMs', 'seed'].map((k) => `collectorFaults.${k}`);
  const otherErrors = (error?.fields ?? []).filter((f) => !shown.includes(f.path));
  const dirty = JSON.stringify(fromDraft(draft)) !== JSON.stringify(source.collectorFaults);
  useUnsaved('collector-faults', dirty ? `the collector faults of ${source.name}` : null);
  const refused = describeRefusals(counts);
  const delayed = counts?.delay ?? 0;
  const set = (patch: Partial<Draft>) => setDraft({ ...draft, ...patch });

  return (
    <form
      className="collector-faults-form"
      data-testid="collector-faults-form"
      onSubmit={async (e) => {
        e.preventDefault();
        setSaving(true);
        setError(await store.getState().saveCollectorFaults(source.id, fromDraft(draft)));
        setSaving(false);
      }}
    >
      <fieldset>
        <legend>Collector faults</legend>
        <div className="muted small-text">
          For testing an SDK&apos;s retries: requests sent with this write key are refused, answered late, left unanswered or
          reset, a seeded share of them. Kept until the app quits (set <code>collectorFaults</code> in the config file to have them at every start).
        </div>
        <Field label="Inject faults" name="collectorFaults.enabled">
          <input type="checkbox" data-testid="cf-enabled" checked={draft.enabled} onChange={(e) => set({ enabled: e.target.checked })} />
        </Field>
        {draft.enabled ? (
          <div className="row wrap">
            <Field label="Share of requests (0–1)" name="collectorFaults.rate" error={err('rate')} hint="0.5: every other request, on average">
              <input data-testid="cf-rate" inputMode="decimal" value={draft.rate} onChange={(e) => set({ rate: e.target.value })} />
            </Field>
            <Field label="What happens" name="collectorFaults.mode" error={err('mode')}>
              <select data-testid="cf-mode" value={draft.mode} onChange={(e) => set({ mode: e.target.value as FaultMode })}>
                {FAULT_MODES.map((m) => (
                  <option key={m} value={m}>
                    {MODE_LABELS[m]}
                  </option>
                ))}
              </select>
            </Field>
            {draft.mode === 'status' ? (
              <>
                <Field label="Status" name="collectorFaults.status" error={err('status')}>
                  <input data-testid="cf-status" inputMode="numeric" value={draft.status} onChange={(e) => set({ status: e.target.value })} />
                </Field>
                <Field label="Retry-After (s)" name="collectorFaults.retryAfterS" error={err('retryAfterS')} hint="blank: no header">
                  <input data-testid="cf-retry-after" inputMode="numeric" value={draft.retryAfterS} onChange={(e) => set({ retryAfterS: e.target.value })} />
                </Field>
              </>
            ) : null}
            {draft.mode === 'delay' ? (
              <Field label="Delay (ms)" name="collectorFaults.delayMs" error={err('delayMs')}>
                <input data-testid="cf-delay" inputMode="numeric" value={draft.delayMs} onChange={(e) => set({ delayMs: e.target.value })} />
              </Field>
            ) : null}
            <Field label="Seed" name="collectorFaults.seed" error={err('seed')} hint="blank: derived from the source; same seed, same requests picked">
              <input data-testid="cf-seed" inputMode="numeric" value={draft.seed} onChange={(e) => set({ seed: e.target.value })} />
            </Field>
          </div>
        ) : null}
        <FormErrors fields={otherErrors} error={error} />
        <div className="actions">
          <button type="submit" data-testid="cf-save" disabled={saving || !dirty}>
            {saving ? 'Saving…' : 'Save faults'}
          </button>
          <span className="muted small-text" data-testid="cf-counts">
            {refused ?? (on ? 'nothing refused yet' : '')}
            {delayed > 0 ? `${refused ? ' · ' : ''}delayed ×${delayed}` : ''}
          </span>
        </div>
      </fieldset>
    </form>
  );
}
