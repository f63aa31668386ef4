import { EVENT_OPS, TRAIT_OPS, newEvent, newGroup, newTrait, type ConditionDraft, type GroupDraft } from './audience-model';

// Conditions combined with and/or; a condition can be a nested group. `path` is the engine's error
// path of this group (`rule`, `rule.conditions[2]`), `err` looks a path's message up.

type Err = (path: string) => string | undefined;

function FieldError({ text, testId }: { text?: string; testId: string }) {
  return text ? (
    <div className="field-error" role="alert" data-testid={testId}>
      {text}
    </div>
  ) : null;
}

function Condition({ c, path, err, onChange, onRemove, depth }: { c: ConditionDraft; path: string; err: Err; onChange(c: ConditionDraft): void; onRemove(): void; depth: number }) {
  if (c.kind === 'group') {
    return (
      <div className="rule-nested">
        <RuleGroup group={c} path={path} err={err} onChange={onChange} depth={depth + 1} onRemove={onRemove} />
      </div>
    );
  }
  const remove = (
    <button type="button" className="small" aria-label="Remove condition" onClick={onRemove}>
      ✕
    </button>
  );
  const tid = `cond-${path}`;
  if (c.kind === 'trait') {
    const needsValue = TRAIT_OPS.find((o) => o.op === c.op)?.needsValue ?? true;
    return (
      <div className="rule-condition" data-testid="rule-condition" data-kind="trait">
        <div className="row wrap">
          <span className="muted small-text">trait</span>
          <input aria-label="Trait" placeholder="plan" data-testid={`${tid}-trait`} value={c.trait} spellCheck={false} onChange={(e) => onChange({ ...c, trait: e.target.value })} />
          <select aria-label="Operator" data-testid={`${tid}-op`} value={c.op} onChange={(e) => onChange({ ...c, op: e.target.value as typeof c.op })}>
            {TRAIT_OPS.map((o) => (
              <option key={o.op} value={o.op}>
                {o.label}
              </option>
            ))}
          </select>
          {needsValue ? (
            <input
              aria-label="Value"
              placeholder='true, 42 or text'
              title='true/false/null and numbers are JSON values; quote them ("42") for text'
              data-testid={`${tid}-value`}
              value={c.value}
              spellCheck={false}
              onChange={(e) => onChange({ ...c, value: e.target.value })}
            />
          ) : null}
          {remove}
        </div>
        <FieldError text={err(`${path}.trait`) ?? err(`${path}.op`) ?? err(`${path}.value`) ?? err(path)} testId={`error-${path}`} />
      </div>
    );
  }
  return (
    <div className="rule-condition" data-testid="rule-condition" data-kind="event">
      <div className="row wrap">
        <span className="muted small-text">did event</span>
        <input aria-label="Event" placeholder="Order Completed" data-testid={`${tid}-event`} value={c.event} onChange={(e) => onChange({ ...c, event: e.target.value })} />
        <select aria-label="Count operator" data-testid={`${tid}-op`} value={c.op} onChange={(e) => onChange({ ...c, op: e.target.value as typeof c.op })}>
          {EVENT_OPS.map((o) => (
            <option key={o.op} value={o.op}>
              {o.label}
            </option>
          ))}
        </select>
        <input aria-label="Count" type="number" min={0} className="narrow" data-testid={`${tid}-count`} value={c.count} onChange={(e) => onChange({ ...c, count: e.target.value })} />
        <span className="muted small-text">times within</span>
        <input
          aria-label="Within days"
          type="number"
          min={0}
          className="narrow"
          placeholder="all"
          data-testid={`${tid}-days`}
          value={c.withinDays}
          onChange={(e) => onChange({ ...c, withinDays: e.target.value })}
        />
        <span className="muted small-text">days</span>
        {remove}
      </div>
      <FieldError text={err(`${path}.event`) ?? err(`${path}.count`) ?? err(`${path}.withinDays`) ?? err(`${path}.op`) ?? err(path)} testId={`error-${path}`} />
    </div>
  );
}

export function RuleGroup(props: { group: GroupDraft; path: string; err: Err; onChange(g: GroupDraft): void; depth?: number; onRemove?(): void }) {
  const { group, path, err, onChange } = props;
  const depth = props.depth ?? 0;
  const setAt = (i: number, c: ConditionDraft) => onChange({ ...group, conditions: group.conditions.map((x, j) => (j === i ? c : x)) });
  const add = (c: ConditionDraft) => onChange({ ...group, conditions: [...group.conditions, c] });
  return (
    <div className="rule-group" data-testid={depth === 0 ? 'rule-builder' : 'rule-group'}>
      <div className="row">
        <span className="muted small-text">Match</span>
        <span className="segmented" role="group" aria-label="Combine conditions">
          {(['and', 'or'] as const).map((k) => (
            <button key={k} type="button" className={group.combine === k ? 'active' : ''} data-testid={`combine-${path}-${k}`} onClick={() => onChange({ ...group, combine: k })}>
              {k === 'and' ? 'all (and)' : 'any (or)'}
            </button>
          ))}
        </span>
        <span className="spacer" />
        {props.onRemove ? (
          <button type="button" className="small" data-testid={`remove-group-${path}`} onClick={props.onRemove}>
            Remove group
          </button>
        ) : null}
      </div>
      {group.conditions.map((c, i) => (
        <Condition
          key={i}
          c={c}
          path={`${path}.conditions[${i}]`}
          err={err}
          depth={depth}
          onChange={(next) => setAt(i, next)}
          onRemove={() => onChange({ ...group, conditions: group.conditions.filter((_, j) => j !== i) })}
        />
      ))}
      <FieldError text={err(`${path}.conditions`)} testId={`error-${path}.conditions`} />
      <div className="row">
        <button type="button" className="small link" data-testid={`add-trait-${path}`} onClick={() => add(newTrait())}>
          + trait condition
        </button>
        <button type="button" className="small link" data-testid={`add-event-${path}`} onClick={() => add(newEvent())}>
          + event count
        </button>
        {depth < 3 ? (
          <button type="button" className="small link" data-testid={`add-group-${path}`} onClick={() => add(newGroup())}>
            + group
          </button>
        ) : null}
      </div>
    </div>
  );
}
