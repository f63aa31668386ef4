import type { ReactNode } from 'react';
import { CopyButton } from './copy-button';

/** Read-only text with a copy button; `pre` keeps the bytes exactly as given. */
export function CodeBlock(props: { title: ReactNode; text: string; testId?: string; extra?: ReactNode; copyLabel?: string }) {
  return (
    <section className="code-block" data-testid={props.testId}>
      <header>
        <span className="code-title">{props.title}</span>
        <span className="spacer" />
        {props.extra}
        <CopyButton text={props.text} label={props.copyLabel} testId={props.testId ? `${props.testId}-copy` : undefined} />
      </header>
      <pre>{props.text}</pre>
    </section>
  );
}
