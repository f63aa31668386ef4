import { lazy, Suspense } from 'react';
import { prettyJson } from './format';

const JsonView = lazy(() => import('./json-view'));

/**
 * A body shown pretty-printed, highlighted and foldable once CodeMirror has loaded; until then (and
 * for text that is not JSON) the same text in a plain <pre>. `raw` shows the exact bytes instead.
 */
export function BodyView(props: { text: string; label: string; testId: string; raw?: boolean; maxHeight?: string }) {
  if (props.raw) {
    return (
      <pre className="body" data-testid={props.testId} data-mode="raw">
        {props.text}
      </pre>
    );
  }
  const pretty = prettyJson(props.text);
  const isJson = pretty !== props.text || isJsonText(props.text);
  if (!isJson) {
    return (
      <pre className="body" data-testid={props.testId} data-mode="text">
        {props.text}
      </pre>
    );
  }
  return (
    <div className="body body-view" data-testid={props.testId} data-mode="pretty">
      <Suspense fallback={<pre className="body-fallback">{pretty}</pre>}>
        <JsonView text={pretty} label={props.label} maxHeight={props.maxHeight} />
      </Suspense>
    </div>
  );
}

function isJsonText(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
