import { useEffect, useState } from 'react';
import type { ProbeCheck, ProbeEvidence } from '../../../shared/probe.contract';
import { EmptyState, Field } from '../../components/field';
import { FormErrors } from '../../components/form-errors';
import { CopyButton } from '../../components/copy-button';
import { useAppShallow, useAppStore } from '../../store-context';
import { ciCommand, reportSummary, VERDICT_CHIP } from './probe-model';
import { CallLink } from '../../components/call-link';

// Check a receiver (issue 25): the probe's form, its live checklist (pushed by probe.changed), each
// check expandable to its requests, which open in the Inspector (source "probe").

const FIELDS = new Set(['url', 'secret', 'standardWebhooksSecret', 'mode', 'source', 'mapping']);

function EvidenceRow({ e }: { e: ProbeEvidence }) {
  return (
    <tr data-testid="probe-evidence" data-ok={e.ok}>
      <td>{e.label}</td>
      <td className="mono small-text">{e.expected}</td>
      <td className="mono">
        <span className={`chip ${e.ok ? 'chip-outcome-success' : 'chip-outcome-failed'}`}>{e.error === null && e.status !== null ? e.status : (e.error ?? 'no answer')}</span>
      </td>
      <td className="mono small-text">
        {e.durationMs} ms
        {e.waitedMs ? <span className="muted" title="It waited for a slot in the receiver's lane: the lab's sources had as many requests out to this receiver as a lane allows. Its time starts when it was sent."> (waited {e.waitedMs} ms)</span> : null}
      </td>
      <td className="small-text">{e.treatment}</td>
      <td>
        {/* Opened listed among the probe's calls, which the inspector hides unless asked. */}
        {e.callId !== null ? (
          <CallLink id={e.callId} testId="probe-open-call" filters={{ probe: true }}>
            call #{e.callId}
          </CallLink>
        ) : null}
      </td>
    </tr>
  );
}

function CheckRow({ c }: { c: ProbeCheck }) {
  return (
    <details className="probe-check" data-testid="probe-check" data-check={c.name} data-verdict={c.verdict}>
      <summary className="row wrap">
        <span className={`chip ${VERDICT_CHIP[c.verdict]}`} data-testid="probe-verdict">
          {c.verdict}
        </span>
        <b>{c.title}</b>
        <span className="mono small-text muted">{c.name}</span>
        <span className="small-text">{c.detail}</span>
      </summary>
      <p className="small-text muted">{c.why}</p>
      {c.evidence.length ? (
        <table className="table">
          <thead>
            <tr>
              <th>request</th>
              <th>expected</th>
              <th>answer</th>
              <th>time</th>
              <th>as Segment treats it</th>
              <th>inspector</th>
            </tr>
          </thead>
          <tbody>
            {c.evidence.map((e, i) => (
              <EvidenceRow key={i} e={e} />
            ))}
          </tbody>
        </table>
      ) : null}
    </details>
  );
}

export function ProbeScreen() {
  const store = useAppStore();
  const { draft, report, formError, starting } = useAppShallow((s) => ({ draft: s.probeDraft, report: s.probeReport, formError: s.probeFormError, starting: s.probeStarting }));
  const [mode, setMode] = useState<'classic' | 'actions'>('classic');
  const [source, setSource] = useState('');
  const [mapping, setMapping] = useState('');
  useEffect(() => store.getState().watchProbe(), [store]);
  const set = store.getState().setProbeDraft;
  const running = report?.state === 'running';
  return (
    <div className="screen probe-screen" data-testid="screen-probe">
      <header className="screen-header">
        <h1>Check a receiver</h1>
      </header>
      <p className="muted">
        Sends your receiver what Segment&apos;s Webhooks destination sends (every call type, signed), the requests it must refuse, duplicates,
        calls out of order, large and unusual bodies and 20 at once, and says for each check whether your receiver is ready and how to fix it.
        Every request is one attempt, recorded in the Inspector under the source <b>probe</b>.
      </p>
      <form
        className="probe-form"
        data-testid="probe-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void store.getState().startProbe({
            url: draft.url.trim(),
            secret: draft.secret || undefined,
            standardWebhooksSecret: draft.standardWebhooksSecret || undefined,
            mode,
            ...(mode === 'actions' ? { source: source.trim(), mapping: mapping.trim() } : {}),
          });
        }}
      >
        <div className="row wrap">
          <Field label="Receiver URL" name="url" wide error={formError?.fieldMessage('url')}>
            <input data-testid="probe-url" className="mono" value={draft.url} spellCheck={false} placeholder="https://api.example.com/webhooks/segment" onChange={(e) => set({ url: e.target.value })} />
          </Field>
          <Field label="Shared secret (X-Signature)" name="secret" error={formError?.fieldMessage('secret')}>
            <input data-testid="probe-secret" className="mono" type="password" autoComplete="off" value={draft.secret} onChange={(e) => set({ secret: e.target.value })} />
          </Field>
          <Field label="Standard Webhooks secret (optional)" name="standardWebhooksSecret" error={formError?.fieldMessage('standardWebhooksSecret')}>
            <input
              data-testid="probe-sw-secret"
              className="mono"
              type="password"
              autoComplete="off"
              placeholder="whsec_…"
              value={draft.standardWebhooksSecret}
              onChange={(e) => set({ standardWebhooksSecret: e.target.value })}
            />
          </Field>
          <Field label="Mode" name="mode" hint={mode === 'actions' ? "The mapping's request goes to the URL; the Classic body checks are skipped." : undefined}>
            <select data-testid="probe-mode" value={mode} onChange={(e) => setMode(e.target.value as 'classic' | 'actions')}>
              <option value="classic">Classic</option>
              <option value="actions">Actions mapping</option>
            </select>
          </Field>
        </div>
        {mode === 'actions' ? (
          <div className="row wrap">
            <Field label="Source" name="source" error={formError?.fieldMessage('source')}>
              <input data-testid="probe-source" value={source} placeholder="its name" spellCheck={false} onChange={(e) => setSource(e.target.value)} />
            </Field>
            <Field label="Mapping" name="mapping" error={formError?.fieldMessage('mapping')}>
              <input data-testid="probe-mapping" value={mapping} placeholder="its name" spellCheck={false} onChange={(e) => setMapping(e.target.value)} />
            </Field>
          </div>
        ) : null}
        <div className="row wrap">
          <button type="submit" className="primary" data-testid="probe-run" disabled={starting || running}>
            {starting || running ? 'Checking…' : 'Run checks'}
          </button>
          <CopyButton
            label="Copy as CI command"
            testId="probe-copy-ci"
            text={() => ciCommand({ url: draft.url, secret: !!draft.secret, standardWebhooksSecret: !!draft.standardWebhooksSecret, mode, source, mapping })}
          />
        </div>
        <FormErrors fields={(formError?.fields ?? []).filter((f) => !FIELDS.has(f.path))} error={formError} />
      </form>
      {report ? (
        <section data-testid="probe-report" data-state={report.state} data-ok={report.ok}>
          <h2 className="row wrap">
            <span data-testid="probe-summary">{reportSummary(report)}</span>
          </h2>
          <p className="small-text muted mono">{report.url}</p>
          <div className="probe-checklist">
            {report.checks.map((c) => (
              <CheckRow key={c.name} c={c} />
            ))}
          </div>
        </section>
      ) : (
        <EmptyState title="No check run yet" testId="probe-empty">
          Enter your receiver&apos;s URL and the source&apos;s shared secret, then press <b>Run checks</b>. A healthy local receiver is checked in
          about a second; <code>webhook-lab probe</code> runs the same checks in CI.
        </EmptyState>
      )}
    </div>
  );
}
