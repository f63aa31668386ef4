import { CopyButton } from '../../components/copy-button';
import { useState } from 'react';
import { secretProblem, shortKeyWarning } from '../../../shared/standard-webhooks';
import type { DestinationMode, Source } from '../../../shared/types';
import { Field } from '../../components/field';
import { UrlInput } from '../../components/url-input';
import { useApp, useAppStore } from '../../store-context';
import { useUnsaved } from '../../components/leave-dialog';
import { HeaderEditor } from '../../components/header-editor';
import { FormErrors } from '../../components/form-errors';
import { ActionsMappings } from './actions-mappings';
import {
  MAX_URLS,
  MODE_LABELS,
  draftProblems,
  fromDraft,
  generateSharedSecret,
  generateSwSecret,
  shownOnForm,
  toDraft,
  type UrlDraft,
} from './webhooks-model';

/** Webhooks settings of one source; mount it with `key={source.id}` so switching sources resets it. */
export function WebhooksForm({ source }: { source: Source }) {
  const store = useAppStore();
  const formError = useApp((s) => s.sourceFormError);
  const [draft, setDraft] = useState(() => toDraft(source.webhooks));
  const [saving, setSaving] = useState(false);
  // Problems the engine cannot see (a data text that is not JSON) hold the save back.
  const [local, setLocal] = useState<Record<string, string>>({});
  const err = (path: string) => formError?.fieldMessage(`webhooks.${path}`);
  const setUrl = (i: number, patch: Partial<UrlDraft>) => setDraft({ ...draft, urls: draft.urls.map((u, j) => (j === i ? { ...u, ...patch } : u)) });
  const dirty = JSON.stringify(fromDraft(draft)) !== JSON.stringify(fromDraft(toDraft(source.webhooks)));
  useUnsaved('webhooks', dirty ? `the Webhooks settings of ${source.name}` : null);
  const classic = draft.mode !== 'actions';
  const actions = draft.mode !== 'classic';
  const off = (draft.urls.length > 0 || draft.mappings.length > 0) && !draft.enabled;
  const otherErrors = (formError?.fields ?? []).filter((f) => !shownOnForm(f.path));
  const swProblem = draft.swSecret.trim() === '' ? null : secretProblem(draft.swSecret.trim());

  const save = async () => {
    const problems = draftProblems(draft);
    setLocal(problems);
    if (Object.keys(problems).length > 0) return;
    setSaving(true);
    const saved = await store.getState().saveWebhooks(source.id, fromDraft(draft));
    setSaving(false);
    if (saved && off) store.getState().notify('Webhooks is off: calls to this source are stored but not forwarded. Tick Enabled to send them.', 'error');
  };

  return (
    <form
      className="webhooks-form"
      data-testid="webhooks-form"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <h3>Webhooks destination</h3>
      <div className="row wrap">
        <Field label="Enabled" name="webhooks.enabled" error={err('enabled')}>
          <input type="checkbox" data-testid="wh-enabled" checked={draft.enabled} onChange={(e) => setDraft({ ...draft, enabled: e.target.checked })} />
        </Field>
        <Field
          label="Mode"
          name="webhooks.mode"
          error={err('mode')}
          hint="Classic: Segment's Webhooks destination (POST to each URL). Actions: its successor, one request per matching mapping. Both: each call makes both."
        >
          <select className="mode-select" data-testid="wh-mode" value={draft.mode} onChange={(e) => setDraft({ ...draft, mode: e.target.value as DestinationMode })}>
            {(Object.keys(MODE_LABELS) as DestinationMode[]).map((m) => (
              <option key={m} value={m}>
                {MODE_LABELS[m]}
              </option>
            ))}
          </select>
        </Field>
      </div>
      {classic ? (
        <div className="url-rows">
          <h4 className="section-head">{actions ? 'Classic · receiver URLs' : 'Receiver URLs'}</h4>
          <div className="muted small-text">Up to {MAX_URLS}; every call is POSTed to each, in parallel.</div>
          {draft.urls.length === 0 ? <div className="muted">No URL yet. Add the address of your receiver, e.g. http://127.0.0.1:3000/webhook.</div> : null}
          {draft.urls.map((u, i) => (
            <div key={i} className="url-row" data-testid={`wh-url-row-${i}`}>
              <Field label={`URL ${i + 1}`} name={`webhooks.urls[${i}].url`} error={err(`urls[${i}].url`) ?? err(`urls[${i}]`)} wide>
                <div className="row">
                  <UrlInput
                    className="grow"
                    data-testid={`wh-url-${i}`}
                    placeholder="https://example.com/webhook"
                    value={u.url}
                    spellCheck={false}
                    onChange={(url) => setUrl(i, { url })}
                  />
                  <button type="button" className="small" aria-label={`Remove URL ${i + 1}`} data-testid={`wh-url-remove-${i}`} onClick={() => setDraft({ ...draft, urls: draft.urls.filter((_, j) => j !== i) })}>
                    Remove
                  </button>
                </div>
              </Field>
              <HeaderEditor
                testId={`wh-headers-${i}`}
                label={`URL ${i + 1} header`}
                rows={u.headers}
                onChange={(headers) => setUrl(i, { headers })}
                errorFor={(name) => err(`urls[${i}].headers.${name}`) ?? (name === '' ? err(`urls[${i}].headers.`) : undefined)}
              />
              {err(`urls[${i}].headers`) ? <div className="field-error">{err(`urls[${i}].headers`)}</div> : null}
            </div>
          ))}
          <button
            type="button"
            data-testid="wh-add-url"
            disabled={draft.urls.length >= MAX_URLS}
            // The first URL turns Webhooks on: a URL that is never called is not what anyone adds one for.
            onClick={() => setDraft({ ...draft, enabled: draft.urls.length === 0 ? true : draft.enabled, urls: [...draft.urls, { url: '', headers: [] }] })}
          >
            + Add URL
          </button>
        </div>
      ) : null}
      {actions ? (
        <>
          {err('mappings') ? <div className="field-error" role="alert" data-testid="error-webhooks.mappings">{err('mappings')}</div> : null}
          <ActionsMappings
            mappings={draft.mappings}
            errors={formError?.fields ?? []}
            local={local}
            onChange={(mappings) => {
              // The first mapping turns Webhooks on, as the first URL does.
              const first = draft.urls.length === 0 && draft.mappings.length === 0 && mappings.length > 0;
              setDraft({ ...draft, enabled: first ? true : draft.enabled, mappings });
              setLocal({});
            }}
          />
        </>
      ) : null}
      <Field label="Shared secret" name="webhooks.sharedSecret" error={err('sharedSecret')} hint="Signs every request: X-Signature = hex HMAC-SHA1(secret, …): Classic over the body bytes, Actions over JSON.stringify(data) (for a batch, the first event's only). Leave empty to send unsigned.">
        <SecretInput
          value={draft.secret}
          onChange={(secret) => setDraft({ ...draft, secret })}
          generate={generateSharedSecret}
          ids={{ input: 'wh-secret', toggle: 'wh-secret-toggle', generate: 'wh-secret-generate', copy: 'wh-secret-copy' }}
        />
      </Field>
      <Field
        label="Standard Webhooks secret"
        name="webhooks.standardWebhooksSecret"
        error={(swProblem ? `secret ${swProblem}` : undefined) ?? err('standardWebhooksSecret')}
        hint="Optional, whsec_…: adds webhook-id, webhook-timestamp and webhook-signature (v1, base64 HMAC-SHA256 over id.timestamp.body) to Classic and Actions requests."
      >
        <SecretInput
          value={draft.swSecret}
          onChange={(swSecret) => setDraft({ ...draft, swSecret })}
          generate={generateSwSecret}
          ids={{ input: 'wh-sw-secret', toggle: 'wh-sw-toggle', generate: 'wh-sw-generate', copy: 'wh-sw-copy' }}
          placeholder="whsec_…"
          toggleLabel="Show or hide the Standard Webhooks secret"
        />
      </Field>
      {swProblem === null && shortKeyWarning(draft.swSecret.trim()) ? (
        <div className="notice warn small-text" role="status" data-testid="wh-sw-short">
          Standard Webhooks secret: {shortKeyWarning(draft.swSecret.trim())}. A key already saved keeps signing.
        </div>
      ) : null}
      {off ? (
        <div className="notice warn" role="status" data-testid="wh-off-warning">
          Webhooks is off: calls to this source are stored but not forwarded{classic ? ' to these URLs' : ''}.
        </div>
      ) : null}
      <FormErrors fields={otherErrors} error={formError} />
      <div className="actions">
        <button type="submit" className="primary" data-testid="wh-save" disabled={saving || swProblem !== null}>
          {saving ? 'Saving…' : 'Save'}
        </button>
        {dirty ? <span className="muted small-text">unsaved changes</span> : null}
      </div>
    </form>
  );
}

/** A secret typed or generated: hidden unless shown, and shown once generated so it can be copied. */
function SecretInput(p: {
  value: string;
  onChange(value: string): void;
  generate(): string;
  ids: { input: string; toggle: string; generate: string; copy: string };
  placeholder?: string;
  toggleLabel?: string;
}) {
  const [shown, setShown] = useState(false);
  return (
    <div className="row">
      <input
        className="grow mono"
        type={shown ? 'text' : 'password'}
        data-testid={p.ids.input}
        value={p.value}
        placeholder={p.placeholder}
        autoComplete="off"
        spellCheck={false}
        onChange={(e) => p.onChange(e.target.value)}
      />
      <button type="button" className="small" data-testid={p.ids.toggle} aria-label={p.toggleLabel} onClick={() => setShown(!shown)}>
        {shown ? 'Hide' : 'Show'}
      </button>
      {/* Copies without showing it (a screen being shared keeps it hidden). */}
      {p.value ? <CopyButton text={p.value} testId={p.ids.copy} /> : null}
      <button
        type="button"
        className="small"
        data-testid={p.ids.generate}
        onClick={() => {
          p.onChange(p.generate());
          setShown(true);
        }}
      >
        Generate
      </button>
    </div>
  );
}
