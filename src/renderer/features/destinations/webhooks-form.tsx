import { useEffect, useState } from 'react';
import type { Source, WebhookSettings } from '../../../shared/types';
import { Field } from '../../components/field';
import { useApp, useAppStore } from '../../store-context';
import { HeaderEditor, type HeaderRow } from './header-editor';
import { FormErrors } from '../../components/form-errors';

const MAX_URLS = 5;

interface UrlDraft {
  url: string;
  headers: HeaderRow[];
}

function toDraft(w: WebhookSettings): { enabled: boolean; urls: UrlDraft[]; secret: string } {
  return {
    enabled: w.enabled,
    urls: w.urls.map((u) => ({ url: u.url, headers: Object.entries(u.headers).map(([name, value]) => ({ name, value })) })),
    secret: w.sharedSecret ?? '',
  };
}

function fromDraft(d: ReturnType<typeof toDraft>): WebhookSettings {
  return {
    enabled: d.enabled,
    urls: d.urls.map((u) => ({
      url: u.url.trim(),
      // A row left completely blank is ignored; a value without a name reaches the engine and is refused there.
      headers: Object.fromEntries(u.headers.filter((h) => h.name !== '' || h.value !== '').map((h) => [h.name.trim(), h.value])),
    })),
    ...(d.secret ? { sharedSecret: d.secret } : {}),
  };
}

function generateSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Webhooks settings of one source; mount it with `key={source.id}` so switching sources resets it. */
export function WebhooksForm({ source }: { source: Source }) {
  const store = useAppStore();
  const formError = useApp((s) => s.sourceFormError);
  const [draft, setDraft] = useState(() => toDraft(source.webhooks));
  const [showSecret, setShowSecret] = useState(false);
  const [saving, setSaving] = useState(false);
  const err = (path: string) => formError?.fieldMessage(`webhooks.${path}`);
  const setUrl = (i: number, patch: Partial<UrlDraft>) => setDraft({ ...draft, urls: draft.urls.map((u, j) => (j === i ? { ...u, ...patch } : u)) });
  const dirty = JSON.stringify(fromDraft(draft)) !== JSON.stringify(fromDraft(toDraft(source.webhooks)));
  useEffect(() => {
    store.getState().setWebhooksDirty(dirty);
  }, [store, dirty]);
  useEffect(() => () => store.getState().setWebhooksDirty(false), [store]);
  const off = draft.urls.length > 0 && !draft.enabled;
  const otherErrors = (formError?.fields ?? []).filter((f) => !/^webhooks\.(enabled|sharedSecret|urls\[\d+\](\.url|\.headers.*)?)$/.test(f.path));

  const save = async () => {
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
      <Field label="Enabled" name="webhooks.enabled" error={err('enabled')}>
        <input type="checkbox" data-testid="wh-enabled" checked={draft.enabled} onChange={(e) => setDraft({ ...draft, enabled: e.target.checked })} />
      </Field>
      <div className="url-rows">
        <div className="field-label">Receiver URLs (up to {MAX_URLS}); every call is POSTed to each, in parallel</div>
        {draft.urls.length === 0 ? <div className="muted">No URL yet. Add the address of your receiver, e.g. http://127.0.0.1:3000/webhook.</div> : null}
        {draft.urls.map((u, i) => (
          <div key={i} className="url-row" data-testid={`wh-url-row-${i}`}>
            <Field label={`URL ${i + 1}`} name={`webhooks.urls[${i}].url`} error={err(`urls[${i}].url`) ?? err(`urls[${i}]`)} wide>
              <div className="row">
                <input
                  className="grow"
                  data-testid={`wh-url-${i}`}
                  placeholder="https://example.com/webhook"
                  value={u.url}
                  spellCheck={false}
                  onChange={(e) => setUrl(i, { url: e.target.value })}
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
      <Field label="Shared secret" name="webhooks.sharedSecret" error={err('sharedSecret')} hint="Signs every request: X-Signature = hex HMAC-SHA1(secret, body). Leave empty to send unsigned.">
        <div className="row">
          <input
            className="grow mono"
            type={showSecret ? 'text' : 'password'}
            data-testid="wh-secret"
            value={draft.secret}
            autoComplete="off"
            spellCheck={false}
            onChange={(e) => setDraft({ ...draft, secret: e.target.value })}
          />
          <button type="button" className="small" data-testid="wh-secret-toggle" onClick={() => setShowSecret(!showSecret)}>
            {showSecret ? 'Hide' : 'Show'}
          </button>
          <button
            type="button"
            className="small"
            data-testid="wh-secret-generate"
            onClick={() => {
              setDraft({ ...draft, secret: generateSecret() });
              setShowSecret(true);
            }}
          >
            Generate
          </button>
        </div>
      </Field>
      {off ? (
        <div className="notice warn" role="status" data-testid="wh-off-warning">
          Webhooks is off: calls to this source are stored but not forwarded to these URLs.
        </div>
      ) : null}
      <FormErrors fields={otherErrors} error={formError} />
      <div className="actions">
        <button type="submit" className="primary" data-testid="wh-save" disabled={saving}>
          {saving ? 'Saving…' : 'Save'}
        </button>
        {dirty ? <span className="muted small-text">unsaved changes</span> : null}
      </div>
    </form>
  );
}
