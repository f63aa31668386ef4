import { lazy, Suspense, type ReactNode } from 'react';
import { prettyJson } from './format';

const JsonView = lazy(() => import('./json-view'));

/**
 * A body shown pretty-printed, highlighted and foldable once CodeMirror has loaded; until then (and
 * for text that is not JSON) the same text in a plain <pre>. `raw` shows the exact bytes instead.
 * `highlight`: a search term marked wherever it occurs (case-insensitive), as the inspector's search found it.
 */
export function BodyView(props: { text: string; label: string; testId: string; raw?: boolean; maxHeight?: string; highlight?: string }) {
  const term = props.highlight?.trim() || undefined;
  if (props.raw) {
    return (
      <pre className="body" data-testid={props.testId} data-mode="raw">
        <Marked text={props.text} term={term} />
      </pre>
    );
  }
  const pretty = prettyJson(props.text);
  const isJson = pretty !== props.text || isJsonText(props.text);
  if (!isJson) {
    return (
      <pre className="body" data-testid={props.testId} data-mode="text">
        <Marked text={props.text} term={term} />
      </pre>
    );
  }
  return (
    <div className="body body-view" data-testid={props.testId} data-mode="pretty">
      <Suspense
        fallback={
          <pre className="body-fallback">
            <Marked text={pretty} term={term} />
          </pre>
        }
      >
        <JsonView text={pretty} label={props.label} maxHeight={props.maxHeight} highlight={term} />
      </Suspense>
    </div>
  );
}

/** `text` with each case-insensitive occurrence of `term` in a <mark>. */
function Marked({ text, term }: { text: string; term?: string }) {
  if (!term) return <>{text}</>;
  const parts: ReactNode[] = [];
  const lower = text.toLowerCase();
  const needle = term.toLowerCase();
  let from = 0;
  for (let at = lower.indexOf(needle); at !== -1; at = lower.indexOf(needle, at + needle.length)) {
    parts.push(text.slice(from, at), <mark key={at} className="search-hit" data-testid="search-hit">{text.slice(at, at + needle.length)}</mark>);
    from = at + needle.length;
  }
  parts.push(text.slice(from));
  return <>{parts}</>;
}

function isJsonText(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
