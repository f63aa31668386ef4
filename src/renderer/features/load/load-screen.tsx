import { useEffect, useMemo, useState } from 'react';
import type { LoadRun } from '../../../shared/simulation.contract';
import { SAMPLE_CALLS } from '../../../shared/sample-calls';
import { Field } from '../../components/field';
import { formatDuration } from '../../components/format';
import { useApp, useAppShallow, useAppStore } from '../../store-context';
import { buildMessage } from '../../stores/compose-model';
import { LoadCharts } from './load-chart';
import { COMPOSE_TEMPLATE, defaultLoadDraft, loadInputOf, progressOf, templateOf, type LoadDraft } from '../../stores/load-model';
import { FormErrors } from '../../components/form-errors';

const KNOWN = /^(rate|durationS|total|users|sourceId|template.*)$/;

function LoadForm({ running }: { running: boolean }) {
  const store = useAppStore();
  const { sources, apiError, starting, composeDraft } = useAppShallow((s) => ({
    sources: s.sources,
    apiError: s.loadFormError,
    starting: s.loadStarting,
    composeDraft: s.draft,
  }));
  const stored = useApp((s) => s.loadDraft);
  const d = useMemo<LoadDraft>(() => stored ?? defaultLoadDraft(), [stored]);
  const [local, setLocal] = useState<Record<string, string>>({});
  const set = (patch: Partial<LoadDraft>) => store.getState().setLoadDraft({ ...d, ...patch });
  const err = (p: string) => local[p] ?? apiError?.fieldMessage(p);
  const other = (apiError?.fields ?? []).filter((f) => !KNOWN.test(f.path));
  const built = buildMessage(composeDraft);
  const template = templateOf(d, { type: composeDraft.type, message: built.message, ok: Object.keys(built.errors).length === 0 });
  const planned = Number(d.rate) > 0 ? (d.stopBy === 'duration' ? Number(d.rate) * Number(d.durationS) : Number(d.total) / Number(d.rate)) : NaN;

  return (
    <form
      className="load-form"
      data-testid="load-form"
      noValidate
      onSubmit={async (e) => {
        e.preventDefault();
        const { input, errors } = loadInputOf(d, template);
        setLocal(errors);
        if (input) await store.getState().startLoad(input);
      }}
    >
      <div className="grid-2">
        <Field label="Rate (calls per second)" name="rate" error={err('rate')}>
          <input type="number" min={0} step="any" data-testid="load-rate" value={d.rate} onChange={(e) => set({ rate: e.target.value })} />
        </Field>
        <Field
          label="Stop after"
          name={d.stopBy === 'duration' ? 'durationS' : 'total'}
          error={d.stopBy === 'duration' ? err('durationS') : err('total')}
          hint={Number.isFinite(planned) && planned > 0 ? (d.stopBy === 'duration' ? `≈ ${Math.round(planned)} calls` : `≈ ${formatDuration(planned * 1000)}`) : undefined}
        >
          <div className="row">
            <select className="auto" aria-label="Stop after" data-testid="load-stop-by" value={d.stopBy} onChange={(e) => set({ stopBy: e.target.value as LoadDraft['stopBy'] })}>
              <option value="duration">seconds</option>
              <option value="total">calls in total</option>
            </select>
            {d.stopBy === 'duration' ? (
              <input type="number" min={0} step="any" className="grow" aria-label="Duration (s)" data-testid="load-duration" value={d.durationS} onChange={(e) => set({ durationS: e.target.value })} />
            ) : (
              <input type="number" min={1} className="grow" aria-label="Total calls" data-testid="load-total" value={d.total} onChange={(e) => set({ total: e.target.value })} />
            )}
          </div>
        </Field>
        <Field label="Call template" name="template" error={err('template') ?? err('template.type')} hint="{{userId}} and {{i}} in any string are replaced per call">
          <select data-testid="load-template" value={d.template} onChange={(e) => set({ template: e.target.value })}>
            {SAMPLE_CALLS.map((s) => (
              <option key={s.id} value={s.id}>
                {s.label}
              </option>
            ))}
            <option value={COMPOSE_TEMPLATE}>The Compose draft ({composeDraft.type})</option>
          </select>
        </Field>
        <Field label="Source" name="sourceId" error={err('sourceId')} hint="whose write key the calls carry">
          <select data-testid="load-source" value={d.sourceId} onChange={(e) => set({ sourceId: e.target.value })}>
            <option value="">the client's source</option>
            {sources.map((s) => (
              <option key={s.id} value={s.id}>
                {s.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Random userId per call" name="randomUsers">
          <input type="checkbox" data-testid="load-random-users" checked={d.randomUsers} onChange={(e) => set({ randomUsers: e.target.checked })} />
        </Field>
        <Field label="Drawn from this many users" name="users" error={err('users')}>
          <input type="number" min={1} data-testid="load-users" value={d.users} disabled={!d.randomUsers} onChange={(e) => set({ users: e.target.value })} />
        </Field>
      </div>
      {template ? (
        <details className="raw-bytes">
          <summary data-testid="load-template-toggle">Template sent</summary>
          <pre>{JSON.stringify(template, null, 2)}</pre>
        </details>
      ) : null}
      <FormErrors fields={other} error={apiError} />
      <div className="actions">
        <button type="submit" className="primary" data-testid="load-start" disabled={starting || running}>
          {starting ? 'Starting…' : 'Start'}
        </button>
        {running ? <span className="muted small-text">a run is in progress: stop it first</span> : null}
      </div>
    </form>
  );
}

function Counter({ label, value, testId }: { label: string; value: number; testId: string }) {
  return (
    <div className="counter">
      <div className="muted small-text">{label}</div>
      <div className="counter-value num" data-testid={testId}>
        {value.toLocaleString()}
      </div>
    </div>
  );
}

function RunView({ run }: { run: LoadRun }) {
  const store = useAppStore();
  const stopping = useApp((s) => s.loadStopping);
  const last = run.samples.at(-1);
  const pct = Math.round(progressOf(run) * 100);
  return (
    <section className="load-run" data-testid="load-run" data-state={run.state}>
      <header className="row">
        <h3 className="grow">
          Run {run.id.slice(0, 8)} · {run.rate}/s ·{' '}
          <span className={`chip chip-${run.state === 'running' ? 'retrying' : run.state === 'done' ? 'delivered' : 'failed'}`} data-testid="load-state">
            {run.state}
          </span>
        </h3>
        {run.state === 'running' ? (
          <button type="button" className="danger" data-testid="load-stop" disabled={stopping} onClick={() => void store.getState().stopLoad()}>
            {stopping ? 'Stopping…' : 'Stop'}
          </button>
        ) : null}
      </header>
      <div className="progress" role="progressbar" aria-valuemin={0} aria-valuemax={100} aria-valuenow={pct} data-testid="load-progress">
        <div className="progress-bar" style={{ width: `${pct}%` }} />
        <span className="progress-text">
          {run.sent.toLocaleString()} / {run.target.toLocaleString()} sent ({pct}%)
        </span>
      </div>
      <div className="stats">
        <Counter label="sent" value={run.sent} testId="count-sent" />
        <Counter label="accepted" value={run.accepted} testId="count-accepted" />
        <Counter label="delivered" value={last?.delivered ?? 0} testId="count-delivered" />
        <Counter label="failed/expired" value={last?.failed ?? 0} testId="count-failed" />
        <Counter label="retrying" value={last?.retrying ?? 0} testId="count-retrying" />
        <Counter label="client errors" value={run.errors} testId="count-errors" />
      </div>
      {run.lastError ? <div className="notice error">last error: {run.lastError}</div> : null}
      <LoadCharts samples={run.samples} />
    </section>
  );
}

export function LoadScreen() {
  const store = useAppStore();
  const run = useApp((s) => s.loadRun);
  const error = useApp((s) => s.loadRunError);
  useEffect(() => {
    void store.getState().fetchLoadRun();
  }, [store]);
  return (
    <div className="screen load-screen" data-testid="screen-load">
      <header className="screen-header">
        <h1>Load generator</h1>
      </header>
      <p className="muted">
        Sends calls through the app's batching client at a steady rate, so the whole path (client → collector → dispatcher → receivers)
        carries the load. Point a source at a <a href="#/receivers">mock receiver</a> to load-test without a real endpoint.
      </p>
      <LoadForm running={run?.state === 'running'} />
      {error ? <div className="notice error">Could not read the load run: {error}</div> : null}
      {run ? (
        <RunView run={run} />
      ) : (
        <div className="empty-state" data-testid="load-empty">
          <h3>No run yet</h3>
          Choose a rate, a duration or a total and a template, then press <b>Start</b>. Progress, counters and charts update live here.
        </div>
      )}
    </div>
  );
}
