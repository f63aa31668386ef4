import { lazy, Suspense, useState } from 'react';
import { prettyJson } from '../../components/format';
import { useApp, useAppStore } from '../../store-context';
import { useUnsaved } from '../../components/leave-dialog';
import { byteLength } from './attempt-view';

const JsonEditor = lazy(() => import('../../components/json-editor').then((m) => ({ default: m.JsonEditor })));

/**
 * Replay with an edited body: the delivery's body to edit (indented), sent as typed — exactly these
 * bytes, signed with the source's current secret — to every URL of the Classic delivery, or as the
 * one request of an Actions delivery (deliveryId). Earlier attempts stay.
 */
export function EditReplay({ callId, deliveryId, body, onClose }: { callId: number; deliveryId?: number; body: string; onClose(): void }) {
  const store = useAppStore();
  const replaying = useApp((s) => s.replaying);
  const [original] = useState(() => prettyJson(body));
  const [text, setText] = useState(original);
  const problem = jsonProblem(text);
  // Another call (↓, a click), another screen or a reload would throw the edit away: asked first.
  useUnsaved(`edit-replay:${callId}:${deliveryId ?? 'classic'}`, text !== original ? `the edited body of call #${callId}` : null);
  return (
    <section className="edit-replay" data-testid="edit-replay-panel" aria-label="Replay with an edited body">
      <div className="row wrap">
        <h4 className="grow">Replay with an edited body ({byteLength(text)} B)</h4>
        <button
          type="button"
          className="small primary"
          data-testid="edit-replay-send"
          disabled={replaying || problem !== null}
          onClick={async () => {
            if (await store.getState().replayEdited(callId, text, deliveryId)) onClose();
          }}
        >
          {replaying ? 'Sending…' : deliveryId !== undefined ? 'Send this request' : 'Send to every URL'}
        </button>
        <button type="button" className="small" data-testid="edit-replay-cancel" onClick={onClose}>
          Cancel
        </button>
      </div>
      <div className="muted small-text">Sent exactly as written here, signed with the source’s current secret. The stored body and earlier attempts do not change.</div>
      <Suspense fallback={<div className="muted">Loading editor…</div>}>
        <JsonEditor value={text} onChange={setText} testId="edit-replay-body" minHeight="120px" />
      </Suspense>
      {problem ? (
        <div className="field-error" data-testid="edit-replay-error">
          {problem}
        </div>
      ) : null}
    </section>
  );
}

function jsonProblem(text: string): string | null {
  try {
    JSON.parse(text);
    return null;
  } catch (err) {
    return `Not valid JSON: ${(err as Error).message}`;
  }
}
