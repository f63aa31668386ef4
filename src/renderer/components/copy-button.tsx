import { useState } from 'react';

export async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // Clipboard API refused (permissions, insecure context): fall back to a selection copy.
    const ta = document.createElement('textarea');
    ta.value = text;
    ta.style.position = 'fixed';
    ta.style.opacity = '0';
    document.body.append(ta);
    ta.select();
    document.execCommand('copy');
    ta.remove();
  }
}

export function CopyButton(props: { text: string | (() => string); label?: string; testId?: string; className?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      className={props.className ?? 'small'}
      data-testid={props.testId}
      data-copy-label={props.label ?? 'Copy'}
      onClick={async () => {
        await copyText(typeof props.text === 'function' ? props.text() : props.text);
        setDone(true);
        setTimeout(() => setDone(false), 1200);
      }}
    >
      {done ? 'Copied' : (props.label ?? 'Copy')}
    </button>
  );
}
