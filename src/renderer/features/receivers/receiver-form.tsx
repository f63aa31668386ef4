import { useState } from 'react';
import type { MockReceiverView } from '../../../shared/simulation.contract';
import { Field } from '../../components/field';
import { useApp, useAppStore } from '../../store-context';
import { HeaderEditor } from '../../components/header-editor';
import { draftFromReceiver, draftToInput, emptyDraft, type ReceiverDraft } from './receiver-model';
import { FormErrors } from '../../components/form-errors';
import { useUnsaved } from '../../components/leave-dialog';

// Create or edit one mock receiver: every behavior of the engine's schema, with the engine's
// messages shown on the field they are about.

const KNOWN = /^(name|path|secret|standardWebhooksSecret|tls|behavior\.(status|delayMs|delay(\.minMs|\.maxMs)?|hang|reset|failFirst|failPercent|seed|body|headers.*|itemStatuses(\[\d+\])?|itemFailPercent|itemFailStatus|batchStatus|enforceSignature|rejectDuplicates|knownTypes(\[\d+\])?))$/;

export function ReceiverForm({ receiver, onDone }: { receiver?: MockReceiverView; onDone(saved: MockReceiverView | null): void }) {
  const store = useAppStore();
  const count = useApp((s) => s.receivers.length);
  const apiError = useApp((s) => s.receiverFormError);
  const [initial] = useState<ReceiverDraft>(() => (receiver ? draftFromReceiver(receiver) : emptyDraft(count)));
  const [draft, setDraft] = useState<ReceiverDraft>(initial);
  useUnsaved(`receiver:${receiver?.id ?? 'new'}`, JSON.stringify(draft) !== JSON.stringify(initial) ? (receiver ? `the mock receiver ${receiver.name}` : 'a new mock receiver') : null);
  const [localErrors, setLocalErrors] = useState<Record<string, string>>({});
  const [saving, setSaving] = useState(false);
  const set = (patch: Partial<ReceiverDraft>) => setDraft({ ...draft, ...patch });
  const err = (path: string) => localErrors[path] ?? apiError?.fieldMessage(path);
  const other = (apiError?.fields ?? []).filter((f) => !KNOWN.test(f.path));
  const gated = draft.failFirst.trim() !== '' || draft.failPercent.trim() !== '';
  const t = (name: string) => `rf-${name}`;

  return (
    <form
      className="receiver-form"
      data-testid="receiver-form"
      noValidate
      onSubmit={async (e) => {
        e.preventDefault();
        const { input, errors } = draftToInput(draft);
        setLocalErrors(errors);
        if (Object.keys(errors).length) return;
        setSaving(true);
        const saved = await store.getState().saveReceiver(input, receiver?.id);
        setSaving(false);
        if (saved) onDone(saved);
      }}
    >
      <h3>{receiver ? `Edit "${receiver.name}"` : 'New mock receiver'}</h3>
      <div className="grid-2">
        <Field label="Name" name="name" error={err('name')}>
          <input data-testid={t('name')} value={draft.name} onChange={(e) => set({ name: e.target.value })} />
        </Field>
        <Field label="Path" name="path" error={err('path')} hint="answered on exactly this path, e.g. /flaky">
          <input data-testid={t('path')} className="mono" value={draft.path} spellCheck={false} onChange={(e) => set({ path: e.target.value })} />
        </Field>
        <Field label="Serve over HTTPS (self-signed certificate)" name="tls" error={err('tls')} hint="the dispatcher refuses it: a bad-certificate receiver">
          <input type="checkbox" data-testid={t('tls')} checked={draft.tls} onChange={(e) => set({ tls: e.target.checked })} />
        </Field>
        <Field
          label="Secret (checks X-Signature)"
          name="secret"
          error={err('secret')}
          hint={receiver?.secret ? 'clear it to stop checking signatures' : 'empty: signatures are not checked'}
        >
          <input data-testid={t('secret')} className="mono" value={draft.secret} autoComplete="off" spellCheck={false} onChange={(e) => set({ secret: e.target.value })} />
        </Field>
      </div>

      <h4>Behavior</h4>
      <div className="grid-2">
        <Field label="Answer" name="behavior.ending" error={err('behavior.hang') ?? err('behavior.reset')}>
          <select data-testid={t('ending')} value={draft.ending} onChange={(e) => set({ ending: e.target.value as ReceiverDraft['ending'] })}>
            <option value="answer">with a status code</option>
            <option value="hang">hang: accept and never answer (timeout)</option>
            <option value="reset">reset the connection</option>
          </select>
        </Field>
        <Field
          label={gated ? 'Failure status' : 'Status'}
          name="behavior.status"
          error={err('behavior.status')}
          hint={gated ? 'the status of the failing answers (default 500); the others get 200' : 'default 200'}
        >
          <input type="number" data-testid={t('status')} value={draft.status} placeholder={gated ? '500' : '200'} disabled={draft.ending !== 'answer' && !gated} onChange={(e) => set({ status: e.target.value })} />
        </Field>
        <Field label="Delay" name="behavior.delayMode" error={draft.delayMode === 'fixed' ? err('behavior.delayMs') : err('behavior.delay')} hint="over 5 s the dispatcher times out">
          <div className="row">
            <select className="auto" data-testid={t('delay-mode')} value={draft.delayMode} onChange={(e) => set({ delayMode: e.target.value as ReceiverDraft['delayMode'] })}>
              <option value="none">none</option>
              <option value="fixed">fixed</option>
              <option value="random">random range</option>
            </select>
            {draft.delayMode === 'fixed' ? (
              <input type="number" min={0} className="grow" aria-label="Delay (ms)" placeholder="ms" data-testid={t('delay-ms')} value={draft.delayMs} onChange={(e) => set({ delayMs: e.target.value })} />
            ) : null}
            {draft.delayMode === 'random' ? (
              <>
                <input type="number" min={0} className="grow" aria-label="Minimum delay (ms)" placeholder="min ms" data-testid={t('delay-min')} value={draft.delayMinMs} onChange={(e) => set({ delayMinMs: e.target.value })} />
                <input type="number" min={0} className="grow" aria-label="Maximum delay (ms)" placeholder="max ms" data-testid={t('delay-max')} value={draft.delayMaxMs} onChange={(e) => set({ delayMaxMs: e.target.value })} />
              </>
            ) : null}
          </div>
          {draft.delayMode === 'random' && (err('behavior.delay.minMs') || err('behavior.delay.maxMs')) ? (
            <div className="field-error" data-testid="error-behavior.delay.range">
              {[err('behavior.delay.minMs') && `min: ${err('behavior.delay.minMs')}`, err('behavior.delay.maxMs') && `max: ${err('behavior.delay.maxMs')}`].filter(Boolean).join('; ')}
            </div>
          ) : null}
        </Field>
        <Field label="Fail the first N requests" name="behavior.failFirst" error={err('behavior.failFirst')} hint="then 200 (a flaky endpoint that recovers)">
          <input type="number" min={0} data-testid={t('fail-first')} value={draft.failFirst} placeholder="0" onChange={(e) => set({ failFirst: e.target.value })} />
        </Field>
        <Field label="Fail this % of requests" name="behavior.failPercent" error={err('behavior.failPercent')} hint="after the first N; decided by a seeded generator">
          <input type="number" min={0} max={100} step="any" data-testid={t('fail-percent')} value={draft.failPercent} onChange={(e) => set({ failPercent: e.target.value })} />
        </Field>
        <Field label="Seed" name="behavior.seed" error={err('behavior.seed')} hint="same seed, same pass/fail sequence and random delays">
          <input type="number" min={0} data-testid={t('seed')} value={draft.seed} onChange={(e) => set({ seed: e.target.value })} />
        </Field>
      </div>
      <div className="grid-2">
        <Field
          label="Per-item statuses (a batch)"
          name="behavior.itemStatuses"
          error={err('behavior.itemStatuses') ?? apiError?.fields.find((f) => f.path.startsWith('behavior.itemStatuses['))?.message}
          hint="e.g. 200, 422: cycled over a JSON array's items; answers [{&quot;status&quot;: n}, …] (200 if all 2xx, else 207)"
        >
          <input data-testid={t('item-statuses')} value={draft.itemStatuses} placeholder="200, 422" spellCheck={false} onChange={(e) => set({ itemStatuses: e.target.value })} />
        </Field>
        <Field label="Or fail this % of items" name="behavior.itemFailPercent" error={err('behavior.itemFailPercent')} hint="seeded; with the item failure status (default 500)">
          <div className="row">
            <input type="number" min={0} max={100} step="any" className="grow" data-testid={t('item-fail-percent')} value={draft.itemFailPercent} onChange={(e) => set({ itemFailPercent: e.target.value })} />
            <input
              type="number"
              className="grow"
              aria-label="Item failure status"
              placeholder="500"
              data-testid={t('item-fail-status')}
              value={draft.itemFailStatus}
              onChange={(e) => set({ itemFailStatus: e.target.value })}
            />
          </div>
          {err('behavior.itemFailStatus') ? <div className="field-error">{err('behavior.itemFailStatus')}</div> : null}
        </Field>
        <Field label="Batch answer status" name="behavior.batchStatus" error={err('behavior.batchStatus')} hint="of a per-item answer; blank: 200 or 207">
          <input type="number" data-testid={t('batch-status')} value={draft.batchStatus} onChange={(e) => set({ batchStatus: e.target.value })} />
        </Field>
        <Field label="Standard Webhooks secret" name="standardWebhooksSecret" error={err('standardWebhooksSecret')} hint="whsec_…: webhook-signature is checked; blank: not checked">
          <input data-testid={t('sw-secret')} className="mono" value={draft.swSecret} autoComplete="off" spellCheck={false} onChange={(e) => set({ swSecret: e.target.value })} />
        </Field>
      </div>
      <h4>As a receiver under test</h4>
      <div className="grid-2">
        <Field label="Refuse a bad signature (401)" name="behavior.enforceSignature" error={err('behavior.enforceSignature')} hint="unchecked: the check is only recorded, any signature is accepted">
          <input type="checkbox" data-testid={t('enforce-signature')} checked={draft.enforceSignature} onChange={(e) => set({ enforceSignature: e.target.checked })} />
        </Field>
        <Field label="Refuse a duplicate messageId (409)" name="behavior.rejectDuplicates" error={err('behavior.rejectDuplicates')} hint="a flaw: Segment delivers at least once">
          <input type="checkbox" data-testid={t('reject-duplicates')} checked={draft.rejectDuplicates} onChange={(e) => set({ rejectDuplicates: e.target.checked })} />
        </Field>
        <Field
          label="Known call types"
          name="behavior.knownTypes"
          error={err('behavior.knownTypes') ?? apiError?.fields.find((f) => f.path.startsWith('behavior.knownTypes['))?.message}
          hint="others get 400, e.g. identify, track (a flaw); blank: every type"
        >
          <input data-testid={t('known-types')} value={draft.knownTypes} placeholder="every type" spellCheck={false} onChange={(e) => set({ knownTypes: e.target.value })} />
        </Field>
      </div>
      <Field label="Response body" name="behavior.body" error={err('behavior.body')} hint="JSON text is sent as application/json unless a header says otherwise" wide>
        <textarea className="mono" rows={3} data-testid={t('body')} value={draft.body} spellCheck={false} onChange={(e) => set({ body: e.target.value })} />
      </Field>
      <div className="field" data-field="behavior.headers">
        <span className="field-label">Response headers</span>
        <HeaderEditor
          testId={t('headers')}
          rows={draft.headers}
          onChange={(headers) => set({ headers })}
          errorFor={(name) => err(`behavior.headers.${name}`) ?? (name === '' ? err('behavior.headers.') : undefined)}
        />
      </div>
      <FormErrors fields={other} error={apiError} />
      <div className="actions">
        <button type="submit" className="primary" data-testid="receiver-save" disabled={saving}>
          {saving ? 'Saving…' : receiver ? 'Save' : 'Create receiver'}
        </button>
        <button
          type="button"
          data-testid="receiver-cancel"
          onClick={() => {
            store.getState().clearReceiverFormError();
            onDone(null);
          }}
        >
          Cancel
        </button>
      </div>
    </form>
  );
}
