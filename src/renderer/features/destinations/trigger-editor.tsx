import { useEffect, useMemo, useState } from 'react';
import type { TriggerCheck } from '../../../shared/actions.contract';
import { triggerFql } from '../../../shared/actions/trigger';
import { normalizeForPreview } from '../../../shared/preview/webhook-preview';
import { SAMPLE_CALLS } from '../../../shared/sample-calls';
import type { NormalizedCall } from '../../../shared/types';
import { Field } from '../../components/field';
import { useApp } from '../../store-context';
import { conditionOf, type MappingDraft } from './webhooks-model';

// A mapping's trigger as FQL, the language Segment's trigger editor writes. Segment's parser runs in
// the engine only, so the field asks it (checkTrigger) as you type: the parser's error, or whether
// the chosen sample call matches, and the lab's warning where Segment reads it otherwise than it looks. A trigger still in the older conditions form is shown as its FQL
// and can be turned into FQL text to edit.

function sampleCall(id: string): NormalizedCall {
  const s = SAMPLE_CALLS.find((c) => c.id === id) ?? SAMPLE_CALLS[0];
  return normalizeForPreview({ ...s.message, type: s.type }, {}, Date.now());
}

/** The conditions' FQL (null: every call). */
export function conditionsFql(m: MappingDraft): string | null {
  const type = conditionOf(m.type);
  const event = conditionOf(m.event);
  return triggerFql({ ...(type === undefined ? {} : { type }), ...(event === undefined ? {} : { event }) });
}

export function FqlTrigger(props: { m: MappingDraft; i: number; name: string; error?: string; onChange(fql: string): void }) {
  const { m, i } = props;
  const checkTrigger = useApp((s) => s.checkTrigger);
  const [sampleId, setSampleId] = useState(SAMPLE_CALLS[0].id);
  const [check, setCheck] = useState<{ fql: string; sampleId: string; result: TriggerCheck | null } | null>(null);
  const call = useMemo(() => sampleCall(sampleId), [sampleId]);
  const fql = m.fql ?? '';

  useEffect(() => {
    let live = true;
    // Asked once typing pauses, and only the answer for what is shown now is kept.
    const timer = setTimeout(() => {
      // An empty field is every call (saved as {}): asked as that, not as empty FQL, which is refused.
      void checkTrigger(fql.trim() === '' ? {} : fql, call).then((result) => live && setCheck({ fql, sampleId, result }));
    }, 150);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [fql, call, sampleId, checkTrigger]);

  const current = check && check.fql === fql && check.sampleId === sampleId ? check.result : null;
  const sample = SAMPLE_CALLS.find((c) => c.id === sampleId) ?? SAMPLE_CALLS[0];
  return (
    <Field
      label="Trigger (FQL)"
      name={props.name}
      error={props.error ?? (current?.error ? `Segment's parser: ${current.error}` : undefined)}
      hint={<>As Segment writes it: <code>type = &quot;track&quot; and properties.plan = &quot;pro&quot;</code>; empty = every call.</>}
      wide
    >
      <input data-testid={`am-fql-${i}`} aria-label={`Mapping ${i + 1} trigger`} value={fql} spellCheck={false} placeholder='type = "track"' onChange={(e) => props.onChange(e.target.value)} />
      <div className="row small-text">
        <select aria-label={`Mapping ${i + 1} sample call`} data-testid={`am-fql-sample-${i}`} value={sampleId} onChange={(e) => setSampleId(e.target.value)}>
          {SAMPLE_CALLS.map((c) => (
            <option key={c.id} value={c.id}>
              {c.label}
            </option>
          ))}
        </select>
        <span data-testid={`am-fql-match-${i}`} className={current?.matches ? 'ok' : 'muted'}>
          {current === null || current.error !== null
            ? ''
            : current.matches
              ? `matches this sample call (${sample.label})`
              : `does not match this sample call (${sample.label})`}
        </span>
      </div>
      {current?.warning ? (
        <div className="notice warn small-text" data-testid={`am-fql-warning-${i}`}>
          {current.warning}
        </div>
      ) : null}
    </Field>
  );
}
