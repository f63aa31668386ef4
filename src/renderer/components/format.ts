// Display formatting shared by the screens.
import { MAX_CALL_DEPTH, nestsDeeperThan } from '../../shared/nesting';

export function formatDuration(ms: number): string {
  const neg = ms < 0;
  let s = Math.round(Math.abs(ms) / 1000);
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  const text = h ? `${h}h ${String(m).padStart(2, '0')}m` : m ? `${m}m ${String(s).padStart(2, '0')}s` : `${s}s`;
  return neg ? `-${text}` : text;
}

export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/**
 * Local time as 24-hour HH:MM:SS.mmm. Built by hand rather than with toLocaleTimeString: the first
 * Intl formatter a page creates loads locale data (tens of ms), which the inspector's first
 * render would otherwise pay for before its rows appear.
 */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.toLocaleDateString()} ${formatTime(iso)}`;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

export function prettyJson(text: string): string {
  try {
    const value: unknown = JSON.parse(text);
    // Indenting grows with the square of the depth (and past a few thousand levels overflows the
    // stack): a body nested deeper than any accepted call is shown as it is.
    return nestsDeeperThan(value, MAX_CALL_DEPTH) ? text : JSON.stringify(value, null, 2);
  } catch {
    return text;
  }
}

/** A count with its noun, singular for one: "1 rule", "2,000 rules". */
export function countOf(n: number, noun: string, plural = `${noun}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? noun : plural}`;
}
