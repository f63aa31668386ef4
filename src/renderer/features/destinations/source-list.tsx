import { useState } from 'react';
import { Field } from '../../components/field';
import { useApp, useAppShallow, useAppStore } from '../../store-context';

function CreateSourceForm() {
  const store = useAppStore();
  const formError = useApp((s) => s.sourceFormError);
  const [name, setName] = useState('');
  const [writeKey, setWriteKey] = useState('');
  return (
    <form
      className="create-source"
      data-testid="create-source-form"
      onSubmit={(e) => {
        e.preventDefault();
        // The new source opens in place of the selected one: its unsaved edits ask first.
        store.getState().guardLeave(async () => {
          const created = await store.getState().createSource({ name, ...(writeKey.trim() ? { writeKey: writeKey.trim() } : {}) });
          if (created) {
            setName('');
            setWriteKey('');
          }
        });
      }}
    >
      <Field label="New source name" name="name" error={formError?.fieldMessage('name')}>
        <input data-testid="new-source-name" value={name} placeholder="checkout" onChange={(e) => setName(e.target.value)} />
      </Field>
      <Field label="Write key (optional)" name="writeKey" error={formError?.fieldMessage('writeKey')} hint="random when empty">
        <input data-testid="new-source-key" value={writeKey} spellCheck={false} onChange={(e) => setWriteKey(e.target.value)} />
      </Field>
      <button type="submit" className="primary" data-testid="create-source">
        Create source
      </button>
    </form>
  );
}

export function SourceList() {
  const store = useAppStore();
  const { sources, selected } = useAppShallow((s) => ({ sources: s.sources, selected: s.selectedSourceId }));
  return (
    <div className="source-list">
      <ul data-testid="source-list">
        {sources.map((s) => (
          <li key={s.id}>
            <button
              type="button"
              className={`source-item${s.id === selected ? ' active' : ''}`}
              data-testid="source-item"
              data-name={s.name}
              onClick={() => {
                const st = store.getState();
                if (s.id === selected) return;
                // Another source's forms: unsaved edits of this one ask first (LeaveDialog).
                st.guardLeave(() => st.selectSource(s.id));
              }}
            >
              <span className="grow ellipsis">{s.name}</span>
              <span className={`dot ${s.webhooks.enabled ? 'on' : 'off'}`} title={s.webhooks.enabled ? 'Webhooks on' : 'Webhooks off'} />
            </button>
          </li>
        ))}
      </ul>
      <CreateSourceForm />
    </div>
  );
}
