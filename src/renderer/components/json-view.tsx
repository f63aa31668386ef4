import { useMemo } from 'react';
import CodeMirror from '@uiw/react-codemirror';
import { json } from '@codemirror/lang-json';
import { Decoration, EditorView, MatchDecorator, ViewPlugin, type DecorationSet, type ViewUpdate } from '@codemirror/view';
import { useColorScheme } from './use-now';

/**
 * A read-only body, JSON-highlighted, with a fold gutter: each object and array folds at its line.
 * Loaded lazily (lazy-json-view.tsx): CodeMirror stays out of the inspector's first bundle.
 */
export default function JsonView(props: { text: string; label: string; maxHeight?: string; highlight?: string }) {
  const scheme = useColorScheme();
  const extensions = useMemo(
    () => [
      json(),
      EditorView.lineWrapping,
      EditorView.editable.of(false),
      EditorView.contentAttributes.of({ 'aria-label': props.label }),
      ...(props.highlight ? [searchHits(props.highlight)] : []),
    ],
    [props.label, props.highlight],
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

const hitMark = Decoration.mark({ class: 'search-hit', attributes: { 'data-testid': 'search-hit' } });

/** Marks every case-insensitive occurrence of `term` (the inspector's search) in the visible lines. */
function searchHits(term: string) {
  const matcher = new MatchDecorator({ regexp: new RegExp(term.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gi'), decoration: () => hitMark });
  return ViewPlugin.fromClass(
    class {
      hits: DecorationSet;
      constructor(view: EditorView) {
        this.hits = matcher.createDeco(view);
      }
      update(update: ViewUpdate) {
        this.hits = matcher.updateDeco(update, this.hits);
      }
    },
    { decorations: (v) => v.hits },
  );
}
