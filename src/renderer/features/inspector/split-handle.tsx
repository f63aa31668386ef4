import { useCallback, useRef, useState, type KeyboardEvent, type PointerEvent } from 'react';

const KEY = 'webhook-lab:inspector-detail-width';
/** The detail pane's share of the split: default 6 of 11 parts, kept between these bounds. */
export const DETAIL_DEFAULT = 6 / 11;
const MIN = 0.3;
const MAX = 0.75;

const clamp = (f: number) => Math.min(MAX, Math.max(MIN, f));

function stored(): number {
  try {
    const v = Number(localStorage.getItem(KEY));
    return v > 0 ? clamp(v) : DETAIL_DEFAULT;
  } catch {
    return DETAIL_DEFAULT;
  }
}

/** The detail pane's share of the width, remembered across visits (localStorage). */
export function useDetailWidth(): [number, (f: number, remember?: boolean) => void] {
  const [fraction, setFraction] = useState(stored);
  const set = useCallback((f: number, remember = true) => {
    const v = clamp(f);
    setFraction(v);
    if (remember) {
      try {
        localStorage.setItem(KEY, String(Math.round(v * 1000) / 1000));
      } catch {
        // Storage refused (private mode): the width lasts for this visit.
      }
    }
  }, []);
  return [fraction, set];
}

/** The bar between the list and the detail: drag it, or focus it and use ←/→ (Home resets). */
export function SplitHandle({ fraction, onChange }: { fraction: number; onChange(f: number, remember?: boolean): void }) {
  const dragging = useRef(false);
  const at = (e: PointerEvent<HTMLDivElement>) => {
    const split = e.currentTarget.parentElement!.getBoundingClientRect();
    return (split.right - e.clientX) / split.width;
  };
  const onKey = (e: KeyboardEvent<HTMLDivElement>) => {
    const step = e.key === 'ArrowLeft' ? 0.02 : e.key === 'ArrowRight' ? -0.02 : 0;
    if (step !== 0) onChange(fraction + step);
    else if (e.key === 'Home') onChange(DETAIL_DEFAULT);
    else return;
    e.preventDefault();
  };
  return (
    <div
      className="split-handle"
      role="separator"
      aria-orientation="vertical"
      aria-label="Resize the call list and the detail"
      aria-valuemin={Math.round((1 - MAX) * 100)}
      aria-valuemax={Math.round((1 - MIN) * 100)}
      aria-valuenow={Math.round((1 - fraction) * 100)}
      tabIndex={0}
      data-testid="split-handle"
      onKeyDown={onKey}
      onPointerDown={(e) => {
        dragging.current = true;
        e.currentTarget.setPointerCapture(e.pointerId);
        e.preventDefault();
      }}
      onPointerMove={(e) => {
        if (dragging.current) onChange(at(e), false);
      }}
      onPointerUp={(e) => {
        if (!dragging.current) return;
        dragging.current = false;
        onChange(at(e));
      }}
      onPointerCancel={() => (dragging.current = false)}
    />
  );
}
