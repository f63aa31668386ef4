import { useState } from 'react';

/** A button that asks once more in place (no modal dialogs to get lost behind). */
export function ConfirmButton(props: { label: string; confirm: string; onConfirm(): void; testId: string; disabled?: boolean }) {
  const [asking, setAsking] = useState(false);
  return asking ? (
    <span className="row">
      <button
        type="button"
        className="small danger"
        data-testid={`${props.testId}-confirm`}
        onClick={() => {
          setAsking(false);
          props.onConfirm();
        }}
      >
        {props.confirm}
      </button>
      <button type="button" className="small" data-testid={`${props.testId}-cancel`} onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  ) : (
    <button type="button" className="small" data-testid={props.testId} disabled={props.disabled} onClick={() => setAsking(true)}>
      {props.label}
    </button>
  );
}
