import { useMemo } from 'react';
import CodeMirror from '@uiw/react-codemirror';
import { json } from '@codemirror/lang-json';
import { EditorView } from '@codemirror/view';
import { useColorScheme } from './use-now';

/**
 * A read-only body, JSON-highlighted, with a fold gutter: each object and array folds at its line.
 * Loaded lazily (lazy-json-view.tsx): CodeMirror stays out of the inspector's first bundle.
 */
export default function JsonView(props: { text: string; label: string; maxHeight?: string }) {
  const scheme = useColorScheme();
  const extensions = useMemo(
    () => [json(), EditorView.lineWrapping, EditorView.editable.of(false), EditorView.contentAttributes.of({ 'aria-label': props.label })],
    [props.label],
  );
  return (
    <CodeMirror
      value={props.text}
      extensions={extensions}
      theme={scheme}
      readOnly
      maxHeight={props.maxHeight ?? '360px'}
      basicSetup={{
        foldGutter: true,
        lineNumbers: false,
        highlightActiveLine: false,
        highlightActiveLineGutter: false,
        autocompletion: false,
        searchKeymap: false,
        drawSelection: false,
      }}
    />
  );
}
