import type { ReactNode } from 'react';

/** A labelled control with its error underneath; `name` becomes data-field for tests and focus. */
export function Field(props: { label: string; name: string; error?: string; hint?: ReactNode; children: ReactNode; wide?: boolean }) {
  return (
    <div className={`field${props.error ? ' has-error' : ''}${props.wide ? ' wide' : ''}`} data-field={props.name}>
      <label>
        <span className="field-label">{props.label}</span>
        {props.children}
      </label>
      {props.error ? (
        <div className="field-error" role="alert" data-testid={`error-${props.name}`}>
          {props.error}
        </div>
      ) : props.hint ? (
        <div className="field-hint">{props.hint}</div>
      ) : null}
    </div>
  );
}

export function EmptyState(props: { title: string; children: ReactNode; testId?: string }) {
  return (
    <div className="empty-state" data-testid={props.testId}>
      <h3>{props.title}</h3>
      <div>{props.children}</div>
    </div>
  );
}
