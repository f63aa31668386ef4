import { ACTIONS_MAX_BATCH_SIZE, actionsHeaderTwins, actionsHeaderWarning } from '../../../shared/actions/request';
import { CALL_TYPES, type ActionsMethod } from '../../../shared/types';
import { Field } from '../../components/field';
import { UrlInput } from '../../components/url-input';
import { JsonEditor } from '../../components/json-editor';
import { HeaderEditor } from '../../components/header-editor';
import { conditionsFql, FqlTrigger } from './trigger-editor';
import { MAX_MAPPINGS, METHODS, dataKeyWarning, errorUnder, mappingHeadersOf, mappingUrlWarning, newMapping, type ConditionDraft, type ConditionOp, type MappingDraft } from './webhooks-model';

const OPS: Record<ConditionOp, string> = { any: 'any', equals: 'equals', contains: 'contains', oneOf: 'is one of' };

type FieldErrors = readonly { path: string; message: string }[];

function ConditionInput(props: {
  label: string;
  name: string;
  cond: ConditionDraft;
  onChange(c: ConditionDraft): void;
  error?: string;
  testId: string;
  list?: string;
  placeholder: string;
}) {
  const { cond } = props;
  return (
    <Field label={props.label} name={props.name} error={props.error} hint={cond.op === 'oneOf' ? 'comma-separated' : undefined}>
      <div className="row">
        <select aria-label={`${props.label} condition`} data-testid={`${props.testId}-op`} value={cond.op} onChange={(e) => props.onChange({ ...cond, op: e.target.value as ConditionOp })}>
          {(Object.keys(OPS) as ConditionOp[]).map((op) => (
            <option key={op} value={op}>
              {OPS[op]}
            </option>
          ))}
        </select>
        {cond.op !== 'any' ? (
          <input
            data-testid={props.testId}
            aria-label={`${props.label} value`}
            value={cond.value}
            list={props.list}
            placeholder={props.placeholder}
            spellCheck={false}
            onChange={(e) => props.onChange({ ...cond, value: e.target.value })}
          />
        ) : null}
      </div>
    </Field>
  );
}

function MappingEditor(props: { m: MappingDraft; i: number; onChange(m: MappingDraft): void; onRemove(): void; errors: FieldErrors; local: Record<string, string> }) {
  const { m, i } = props;
  const at = `webhooks.mappings[${i}]`;
  const err = (field: string) => props.local[`${at}.${field}`] ?? errorUnder(props.errors, `${at}.${field}`);
  const set = (patch: Partial<MappingDraft>) => props.onChange({ ...m, ...patch });
  const warning = mappingUrlWarning(m.url);
  const dataWarning = dataKeyWarning(m.data);
  const own = props.errors.find((f) => f.path === at)?.message;
  return (
    <fieldset className="mapping" data-testid={`am-${i}`}>
      <legend>
        {/* The default name is "mapping N": said once ("Mapping 1: mapping 1" read as a stutter). */}
        {m.name.trim().toLowerCase() === `mapping ${i + 1}` ? `Mapping ${i + 1}` : `Mapping ${i + 1}: ${m.name || '(unnamed)'}`}
      </legend>
      {own ? <div className="field-error" role="alert">{own}</div> : null}
      <div className="row wrap">
        <Field label="Name" name={`${at}.name`} error={err('name')}>
          <input data-testid={`am-name-${i}`} value={m.name} onChange={(e) => set({ name: e.target.value })} />
        </Field>
        {m.fql === null ? (
          <>
            <ConditionInput label="Call type" name={`${at}.trigger.type`} cond={m.type} onChange={(type) => set({ type })} error={err('trigger.type')} testId={`am-type-${i}`} list="am-call-types" placeholder="track" />
            <ConditionInput label="Event name" name={`${at}.trigger.event`} cond={m.event} onChange={(event) => set({ event })} error={err('trigger.event')} testId={`am-event-${i}`} placeholder="Order Completed" />
          </>
        ) : null}
      </div>
      {m.fql === null ? (
        <div className="row small-text">
          <span className="muted" data-testid={`am-trigger-fql-${i}`}>
            FQL: <code>{conditionsFql(m) ?? 'every call'}</code>
          </span>
          <button type="button" className="small" data-testid={`am-fql-edit-${i}`} onClick={() => set({ fql: conditionsFql(m) ?? '' })}>
            Write as FQL
          </button>
        </div>
      ) : (
        <FqlTrigger m={m} i={i} name={`${at}.trigger`} error={err('trigger')} onChange={(fql) => set({ fql })} />
      )}
      <Field
        label="Method and URL"
        name={`${at}.url`}
        error={err('url')}
        hint={
          <>
            <code>{'{{userId}}'}</code> inserts a field of the call, as in Segment&apos;s editor; any directive as JSON (<code>{'{"@path": "$.properties.url"}'}</code>). Header values too.
          </>
        }
        wide
      >
        <div className="row">
          <select aria-label={`Mapping ${i + 1} method`} data-testid={`am-method-${i}`} value={m.method} onChange={(e) => set({ method: e.target.value as ActionsMethod })}>
            {METHODS.map((x) => (
              <option key={x}>{x}</option>
            ))}
          </select>
          <UrlInput className="grow" data-testid={`am-url-${i}`} placeholder="https://example.com/actions" value={m.url} spellCheck={false} onChange={(url) => set({ url })} />
        </div>
      </Field>
      {warning ? (
        <div className="notice warn small-text" data-testid={`am-url-warning-${i}`}>
          {warning}. The lab still delivers to it.
        </div>
      ) : null}
      {err('method') ? <div className="field-error" data-testid={`error-${at}.method`}>{err('method')}</div> : null}
      <div className="field-label">Headers</div>
      <HeaderEditor
        testId={`am-headers-${i}`}
        label={`Mapping ${i + 1} header`}
        rows={m.headers}
        onChange={(headers) => set({ headers })}
        errorFor={(name) => props.errors.find((f) => f.path === `${at}.headers.${name}`)?.message}
      />
      {props.errors.find((f) => f.path === `${at}.headers`) ? <div className="field-error">{props.errors.find((f) => f.path === `${at}.headers`)!.message}</div> : null}
      {[...m.headers.map((h) => actionsHeaderWarning(h.name.trim())).filter((w) => w !== null), ...actionsHeaderTwins(mappingHeadersOf(m.headers))].map((w) => (
        <div key={w} className="notice warn small-text" data-testid={`am-header-warning-${i}`}>
          {w}
        </div>
      ))}
      <Field
        label="Data (the body)"
        name={`${at}.data`}
        error={err('data')}
        hint={
          <>
            Leave empty for the whole event (<code>{'{"@path": "$."}'}</code>). Map fields with <code>{'{"@path": "$.properties.total"}'}</code>,{' '}
            <code>{'{"@template": "Hi {{traits.name}}"}'}</code> or literals.
          </>
        }
        wide
      >
        <JsonEditor testId={`am-data-${i}`} value={m.data} onChange={(data) => set({ data })} placeholder='omit = whole event  {"@path": "$."}' minHeight="40px" />
        {dataWarning ? (
          <div className="notice warn small-text" data-testid={`am-data-warning-${i}`}>
            {dataWarning}
          </div>
        ) : null}
      </Field>
      <div className="row wrap">
        <Field label="Batch" name={`${at}.batch`}>
          <input type="checkbox" data-testid={`am-batch-${i}`} checked={m.batch} onChange={(e) => set({ batch: e.target.checked })} />
        </Field>
        {m.batch ? (
          <Field label="Batch size" name={`${at}.batchSize`} error={err('batchSize')} hint={`default 1,000, at most ${ACTIONS_MAX_BATCH_SIZE.toLocaleString('en-US')}; the body is a JSON array`}>
            <input data-testid={`am-batch-size-${i}`} inputMode="numeric" value={m.batchSize} onChange={(e) => set({ batchSize: e.target.value })} />
          </Field>
        ) : null}
        <span className="spacer" />
        <button type="button" className="small" data-testid={`am-remove-${i}`} aria-label={`Remove mapping ${i + 1}`} onClick={props.onRemove}>
          Remove mapping
        </button>
      </div>
    </fieldset>
  );
}

/** The Webhooks (Actions) mappings of one source (up to 5). */
export function ActionsMappings(props: { mappings: MappingDraft[]; onChange(m: MappingDraft[]): void; errors: FieldErrors; local: Record<string, string> }) {
  const { mappings, onChange } = props;
  return (
    <div className="mappings" data-testid="am-list">
      <h4 className="section-head">Actions · mappings</h4>
      <div className="muted small-text">
        Up to {MAX_MAPPINGS}; each call matching a mapping&apos;s trigger is sent to its URL, with its method, headers and data.
      </div>
      {mappings.length === 0 ? <div className="muted">No mapping yet: Actions sends nothing until one matches.</div> : null}
      <datalist id="am-call-types">
        {CALL_TYPES.map((t) => (
          <option key={t} value={t} />
        ))}
      </datalist>
      {mappings.map((m, i) => (
        <MappingEditor
          key={i}
          m={m}
          i={i}
          errors={props.errors}
          local={props.local}
          onChange={(next) => onChange(mappings.map((x, j) => (j === i ? next : x)))}
          onRemove={() => onChange(mappings.filter((_, j) => j !== i))}
        />
      ))}
      <button type="button" data-testid="wh-add-mapping" disabled={mappings.length >= MAX_MAPPINGS} onClick={() => onChange([...mappings, newMapping(mappings)])}>
        + Add mapping
      </button>
    </div>
  );
}
