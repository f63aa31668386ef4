import { useMemo } from 'react';
import CodeMirror from '@uiw/react-codemirror';
import { json } from '@codemirror/lang-json';
import { linter, lintGutter, type Diagnostic } from '@codemirror/lint';
import { EditorView } from '@codemirror/view';
import { parseJsonText } from './json-text';
import { useColorScheme } from './use-now';

// A JSON editor with highlighting and the parse error marked where it is. The same parser as the
// message builder reports the error, so the editor and the field's message always agree.
const jsonLinter = linter(
  (view) => {
    const text = view.state.doc.toString();
    if (text.trim() === '') return [];
    const r = parseJsonText(text);
    if (r.ok) return [];
    const from = Math.min(r.problem.pos, text.length);
    const d: Diagnostic = { from, to: Math.min(from + 1, text.length), severity: 'error', message: r.problem.message };
    return [d];
  },
  { delay: 200 },
);

export function JsonEditor(props: {
  value: string;
  onChange(value: string): void;
  placeholder?: string;
  minHeight?: string;
  testId?: string;
  readOnly?: boolean;
}) {
  const scheme = useColorScheme();
  const extensions = useMemo(
    () => [json(), jsonLinter, lintGutter(), EditorView.lineWrapping, EditorView.contentAttributes.of({ 'aria-label': props.testId ?? 'JSON' })],
    [props.testId],
  );
  return (
    <div className="json-editor" data-testid={props.testId}>
      <CodeMirror
        value={props.value}
        onChange={props.onChange}
        extensions={extensions}
        theme={scheme}
        placeholder={props.placeholder}
        minHeight={props.minHeight ?? '60px'}
        maxHeight="320px"
        readOnly={props.readOnly}
        basicSetup={{ foldGutter: false, highlightActiveLine: false, autocompletion: false, searchKeymap: false }}
      />
    </div>
  );
}
