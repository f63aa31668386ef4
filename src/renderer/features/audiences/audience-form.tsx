import { useState } from 'react';
import { Field } from '../../components/field';
import { useApp, useAppShallow, useAppStore } from '../../store-context';
import { previewKey } from '../../stores/audiences.slice';
import type { Audience } from '../../../shared/simulation.contract';
import { audienceInputOf, definitionOf, draftOfAudience, emptyAudienceDraft, type AudienceDraft, type ComputeDraft } from './audience-model';
import { RuleGroup } from './rule-builder';
import { FormErrors } from '../../components/form-errors';
import { useUnsaved } from '../../components/leave-dialog';

const KNOWN = /^(name|type|sourceIds.*|syncIntervalMs|rule.*|compute.*)$/;

function Preview({ draftKey }: { draftKey: string }) {
  const { preview, error, previewing } = useAppShallow((s) => ({ preview: s.audiencePreview, error: s.audiencePreviewError, previewing: s.previewing }));
  if (previewing) return <div className="muted">Evaluating over the profiles…</div>;
  if (error && !error.fields.length) return <div className="notice error">{error.message}</div>;
  if (!preview) return null;
  const stale = preview.key !== draftKey;
  return (
    <div className={`audience-preview${stale ? ' stale' : ''}`} data-testid="audience-preview" data-total={preview.total}>
      <div className="row">
        <b data-testid="preview-total">
          {preview.total} member{preview.total === 1 ? '' : 's'}
        </b>
        {stale ? <span className="muted small-text">(the rule changed since: preview again)</span> : null}
      </div>
      {preview.members.length ? (
        <table className="table">
          <thead>
            <tr>
              <th>userId</th>
              <th>value</th>
            </tr>
          </thead>
          <tbody>
            {preview.members.map((m) => (
              <tr key={m.userId} data-testid="preview-member">
                <td className="mono">{m.userId}</td>
                <td className="mono">{JSON.stringify(m.value)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <div className="muted small-text">No profile matches. Profiles are built from the identify and track calls received so far.</div>
      )}
      {preview.members.length < preview.total ? <div className="muted small-text">showing {preview.members.length} of {preview.total}</div> : null}
    </div>
  );
}

/** Creates an audience, or edits `editing` (saved with updateAudience, which re-syncs at once). */
export function AudienceForm({ onDone, editing }: { onDone(): void; editing?: Audience }) {
  const store = useAppStore();
  const sources = useApp((s) => s.sources);
  const apiError = useApp((s) => s.audienceFormError);
  const previewError = useApp((s) => s.audiencePreviewError);
  // With one source sending webhooks the choice is obvious; with several, the user picks.
  const [initial] = useState<AudienceDraft>(() => {
    if (editing) return draftOfAudience(editing);
    const enabled = sources.filter((s) => s.webhooks.enabled);
    return emptyAudienceDraft(enabled.length === 1 ? [enabled[0].id] : []);
  });
  const [draft, setDraft] = useState<AudienceDraft>(initial);
  useUnsaved(`audience:${editing?.id ?? 'new'}`, JSON.stringify(draft) !== JSON.stringify(initial) ? (editing ? `the audience ${editing.name}` : 'a new audience') : null);
  const [local, setLocal] = useState<Record<string, string>>({});
  const [saving, setSaving] = useState(false);
  const set = (patch: Partial<AudienceDraft>) => setDraft({ ...draft, ...patch });
  const setCompute = (patch: Partial<ComputeDraft>) => set({ compute: { ...draft.compute, ...patch } });
  const err = (p: string) => local[p] ?? apiError?.fieldMessage(p) ?? previewError?.fieldMessage(p);
  const other = (apiError?.fields ?? []).filter((f) => !KNOWN.test(f.path));
  const def = definitionOf(draft);
  const draftKey = previewKey(def.def);

  return (
    <form
      className="audience-form"
      data-testid="audience-form"
      data-mode={editing ? 'edit' : 'create'}
      noValidate
      onSubmit={async (e) => {
        e.preventDefault();
        const { input, errors } = audienceInputOf(draft);
        setLocal(errors);
        if (Object.keys(errors).length) return;
        setSaving(true);
        const saved = editing ? await store.getState().updateAudience(editing.id, input) : await store.getState().createAudience(input);
        setSaving(false);
        if (saved) {
          store.getState().clearAudiencePreview();
          onDone();
        }
      }}
    >
      <h3>{editing ? `Edit "${editing.name}"` : 'New audience or computed trait'}</h3>
      {editing ? (
        <div className="muted small-text">
          Saving syncs at once: only users whose membership (or value) changes get an identify call. The trait key stays <code>{editing.key}</code>.
        </div>
      ) : null}
      <div className="grid-2">
        <Field label="Name" name="name" error={err('name')} hint="the trait key sent is its snake_cased form: High Value → high_value">
          <input data-testid="aud-name" value={draft.name} placeholder="Pro users" onChange={(e) => set({ name: e.target.value })} />
        </Field>
        <Field label="Kind" name="type" error={err('type')}>
          <select data-testid="aud-type" value={draft.type} onChange={(e) => set({ type: e.target.value as AudienceDraft['type'] })}>
            <option value="audience">audience (true/false membership)</option>
            <option value="computed_trait">computed trait (a value per user)</option>
          </select>
        </Field>
      </div>
      {draft.type === 'audience' ? (
        <div className="rule-field" data-field="rule">
          <span className="field-label">Rule over profiles (traits from identify calls, counts of track events)</span>
          <RuleGroup group={draft.rule} path="rule" err={err} onChange={(rule) => set({ rule })} />
          {err('rule') ? <div className="field-error" data-testid="error-rule">{err('rule')}</div> : null}
        </div>
      ) : (
        <div className="grid-2">
          <Field label="Computation" name="compute.kind" error={err('compute.kind') ?? err('compute')}>
            <select data-testid="aud-compute-kind" value={draft.compute.kind} onChange={(e) => setCompute({ kind: e.target.value as ComputeDraft['kind'] })}>
              <option value="event_count">count of an event</option>
              <option value="last_property">last value of an event property</option>
            </select>
          </Field>
          <Field label="Event" name="compute.event" error={err('compute.event')}>
            <input data-testid="aud-compute-event" value={draft.compute.event} placeholder="Order Completed" onChange={(e) => setCompute({ event: e.target.value })} />
          </Field>
          {draft.compute.kind === 'event_count' ? (
            <Field label="Within days" name="compute.withinDays" error={err('compute.withinDays')} hint="empty: all time">
              <input type="number" min={0} data-testid="aud-compute-days" value={draft.compute.withinDays} onChange={(e) => setCompute({ withinDays: e.target.value })} />
            </Field>
          ) : (
            <Field label="Property" name="compute.property" error={err('compute.property')}>
              <input data-testid="aud-compute-property" value={draft.compute.property} placeholder="revenue" onChange={(e) => setCompute({ property: e.target.value })} />
            </Field>
          )}
        </div>
      )}
      <div className="rule-field" data-field="sourceIds">
        <span className="field-label">Send the identify calls through the Webhooks destination of</span>
        {sources.length === 0 ? (
          <div className="muted">
            No source yet: create one in <a href="#/destinations">Destinations</a>.
          </div>
        ) : (
          <div className="row wrap">
            {sources.map((s) => (
              <label key={s.id} className="inline">
                <input
                  type="checkbox"
                  data-testid={`aud-source-${s.name}`}
                  checked={draft.sourceIds.includes(s.id)}
                  onChange={(e) => set({ sourceIds: e.target.checked ? [...draft.sourceIds, s.id] : draft.sourceIds.filter((x) => x !== s.id) })}
                />
                {s.name}
                {s.webhooks.enabled ? '' : <span className="muted small-text">(Webhooks off)</span>}
              </label>
            ))}
          </div>
        )}
        {err('sourceIds') ? (
          <div className="field-error" role="alert" data-testid="error-sourceIds">
            {err('sourceIds')}
          </div>
        ) : null}
      </div>
      <Field label="Sync every (minutes)" name="syncIntervalMs" error={err('syncIntervalMs')} hint="empty: only on creation and when you press Sync now">
        <input type="number" min={0} step="any" data-testid="aud-interval" value={draft.syncMinutes} onChange={(e) => set({ syncMinutes: e.target.value })} />
      </Field>
      <FormErrors fields={other} error={apiError} />
      <div className="actions">
        <button
          type="button"
          data-testid="aud-preview"
          onClick={() => {
            setLocal(def.errors);
            if (Object.keys(def.errors).length === 0) void store.getState().previewAudience(def.def);
          }}
        >
          Preview members
        </button>
        <button type="submit" className="primary" data-testid="aud-save" disabled={saving}>
          {saving ? (editing ? 'Saving…' : 'Creating…') : editing ? 'Save and sync' : 'Create and sync'}
        </button>
        <button
          type="button"
          data-testid="aud-cancel"
          onClick={() => {
            store.getState().clearAudiencePreview();
            onDone();
          }}
        >
          Cancel
        </button>
      </div>
      <Preview draftKey={draftKey} />
    </form>
  );
}
