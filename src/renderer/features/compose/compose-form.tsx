import { CALL_TYPES } from '../../../shared/types';
import { SAMPLE_CALLS } from '../../../shared/sample-calls';
import { Field } from '../../components/field';
import { JsonEditor } from '../../components/json-editor';
import { useApp, useAppStore } from '../../store-context';
import { errorFor, FIELDS_BY_TYPE, type JsonField, type TextField } from '../../stores/compose-model';

const TEXT_LABELS: Record<TextField, { label: string; placeholder: string }> = {
  userId: { label: 'userId', placeholder: 'user_1234' },
  anonymousId: { label: 'anonymousId', placeholder: 'device or cookie id' },
  event: { label: 'event', placeholder: 'Order Completed' },
  name: { label: 'name', placeholder: 'Pricing' },
  category: { label: 'category', placeholder: 'Docs' },
  groupId: { label: 'groupId', placeholder: 'group_acme' },
  previousId: { label: 'previousId', placeholder: 'the old id' },
};

const JSON_HINTS: Record<JsonField, string> = {
  properties: 'JSON object, e.g. {"revenue": 39.95}',
  traits: 'JSON object, e.g. {"email": "peter@example.com"}',
  context: 'JSON object; the client adds context.library',
  integrations: 'JSON object of booleans, e.g. {"All": false, "Webhooks": true}',
};

export function TemplatePicker() {
  const store = useAppStore();
  return (
    <select
      aria-label="Template"
      data-testid="template-select"
      value=""
      onChange={(e) => e.target.value && store.getState().applyTemplate(e.target.value)}
    >
      <option value="">Templates…</option>
      {SAMPLE_CALLS.map((c) => (
        <option key={c.id} value={c.id}>
          {c.label}
        </option>
      ))}
    </select>
  );
}

export function ComposeForm({ errors }: { errors: Record<string, string> }) {
  const store = useAppStore();
  const draft = useApp((s) => s.draft);
  const spec = FIELDS_BY_TYPE[draft.type];
  const s = store.getState();
  return (
    <div className="compose-form">
      <div className="row type-row">
        <div className="segmented" role="tablist" aria-label="Call type" data-testid="type-picker">
          {CALL_TYPES.map((t) => (
            <button
              key={t}
              type="button"
              role="tab"
              aria-selected={draft.type === t}
              className={draft.type === t ? 'active' : ''}
              data-testid={`type-${t}`}
              onClick={() => s.setComposeType(t)}
            >
              {t}
            </button>
          ))}
        </div>
      </div>
      <div className="grid-2">
        {spec.text.map((f) => (
          <Field key={f} label={TEXT_LABELS[f].label} name={f} error={errors[f]}>
            <input
              data-testid={`field-${f}`}
              value={draft.fields[f]}
              placeholder={TEXT_LABELS[f].placeholder}
              onChange={(e) => s.setField(f, e.target.value)}
              spellCheck={false}
            />
          </Field>
        ))}
      </div>
      {errors.message ? <div className="field-error">{errors.message}</div> : null}
      {spec.json.map((f) => (
        <Field key={f} label={f} name={f} error={errorFor(errors, f)} hint={JSON_HINTS[f]} wide>
          <JsonEditor testId={`json-${f}`} value={draft.json[f]} onChange={(v) => s.setJson(f, v)} placeholder="{}" />
        </Field>
      ))}
      <Field label="timestamp" name="timestamp" error={errors.timestamp} hint="Historical import: ISO 8601 with an offset, e.g. 2015-12-28T23:40:25-0800">
        <div className="row">
          <label className="inline">
            <input
              type="radio"
              name="ts-mode"
              data-testid="ts-now"
              checked={draft.timestampMode === 'now'}
              onChange={() => s.setTimestampMode('now')}
            />
            now (set by the client)
          </label>
          <label className="inline">
            <input
              type="radio"
              name="ts-mode"
              data-testid="ts-historical"
              checked={draft.timestampMode === 'historical'}
              onChange={() => s.setTimestampMode('historical')}
            />
            historical
          </label>
          {draft.timestampMode === 'historical' ? (
            <input
              data-testid="field-timestamp"
              className="grow"
              value={draft.historicalTimestamp}
              onChange={(e) => s.setHistoricalTimestamp(e.target.value)}
              spellCheck={false}
            />
          ) : null}
        </div>
      </Field>
    </div>
  );
}
