import { formatDuration, formatMs } from '../../components/format';

/**
 * When an attempt started, counted from its call's arrival (issue 40): "+5.02 s". Under a time warp
 * the wall clock says little of the retry schedule, so a scheduled attempt whose simulated offset
 * differs from it by a second or more says that too: "+6.10 s (+5m 00s simulated)". null when the
 * call's arrival is not known.
 */
export function attemptOffset(startedAt: string, receivedAt: string | undefined, simOffsetMs: number | undefined): string | null {
  if (receivedAt === undefined) return null;
  const wall = Date.parse(startedAt) - Date.parse(receivedAt);
  if (!Number.isFinite(wall)) return null;
  // A clock set back between the two would read as a negative offset.
  const shown = Math.max(0, wall);
  const text = `+${shown < 60_000 ? formatMs(shown) : formatDuration(shown)}`;
  if (simOffsetMs === undefined || Math.abs(simOffsetMs - shown) < 1000) return text;
  return `${text} (+${formatDuration(simOffsetMs)} simulated)`;
}
