export interface HeaderRow {
  name: string;
  value: string;
}

/** Static headers for one receiver URL; errors are keyed by header name (the engine's paths). */
export function HeaderEditor(props: {
  rows: HeaderRow[];
  onChange(rows: HeaderRow[]): void;
  errorFor(name: string): string | undefined;
  testId: string;
  /** Names the inputs for assistive tech: "<label> 1 name", "<label> 1 value". */
  label?: string;
}) {
  const label = props.label ?? 'Header';
  const { rows, onChange } = props;
  const update = (i: number, patch: Partial<HeaderRow>) => onChange(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  return (
    <div className="header-editor" data-testid={props.testId}>
      {rows.map((r, i) => {
        const err = props.errorFor(r.name);
        return (
          <div key={i} className={`header-row${err ? ' has-error' : ''}`}>
            <input placeholder="Header-Name" aria-label={`${label} ${i + 1} name`} value={r.name} spellCheck={false} data-testid={`${props.testId}-name-${i}`} onChange={(e) => update(i, { name: e.target.value })} />
            <input placeholder="value" aria-label={`${label} ${i + 1} value`} value={r.value} spellCheck={false} data-testid={`${props.testId}-value-${i}`} onChange={(e) => update(i, { value: e.target.value })} />
            <button type="button" className="small" aria-label={`Remove ${label.toLowerCase()} ${i + 1}`} data-testid={`${props.testId}-remove-${i}`} onClick={() => onChange(rows.filter((_, j) => j !== i))}>
              ✕
            </button>
            {err ? (
              <div className="field-error" role="alert" data-testid={`${props.testId}-error-${i}`}>
                {err}
              </div>
            ) : null}
          </div>
        );
      })}
      <button type="button" className="small link" data-testid={`${props.testId}-add`} onClick={() => onChange([...rows, { name: '', value: '' }])}>
        + header
      </button>
    </div>
  );
}
