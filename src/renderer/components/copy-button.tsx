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
  // How many copies it made: "Copied" shows for 1.2 s only, which a check on a slow machine can miss.
  const [copies, setCopies] = useState(0);
  return (
    <button
      type="button"
      className={props.className ?? 'small'}
      data-testid={props.testId}
      data-copy-label={props.label ?? 'Copy'}
      data-copied={copies}
      onClick={async () => {
        await copyText(typeof props.text === 'function' ? props.text() : props.text);
        setCopies((n) => n + 1);
        setDone(true);
        setTimeout(() => setDone(false), 1200);
      }}
    >
      {done ? 'Copied' : (props.label ?? 'Copy')}
    </button>
  );
}
