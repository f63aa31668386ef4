import { formatDuration, formatMs } from '../../components/format';

/**
 * When an attempt started, counted from its call's arrival (issue 40): "+5.02 s". Under a time warp
 * the wall clock says little of the retry schedule, so a scheduled attempt whose simulated offset
 * differs by a second or more from the wall-clock time since its delivery's first attempt (where the
 * schedule's clock starts) says that too: "+6.10 s (+5m 00s simulated)". Without the first attempt's
 * time, the arrival stands for it. null when the call's arrival is not known.
 */
export function attemptOffset(startedAt: string, receivedAt: string | undefined, simOffsetMs: number | undefined, firstAttemptAt?: string | null): string | null {
  if (receivedAt === undefined) return null;
  const at = Date.parse(startedAt);
  const wall = at - Date.parse(receivedAt);
  if (!Number.isFinite(wall)) return null;
  // A clock set back between the two would read as a negative offset.
  const shown = Math.max(0, wall);
  const text = `+${shown < 60_000 ? formatMs(shown) : formatDuration(shown)}`;
  if (simOffsetMs === undefined) return text;
  // A first attempt that went out a while after its call arrived (a busy machine, a wait for its lane) is not a warp.
  const first = firstAttemptAt ? Date.parse(firstAttemptAt) : NaN;
  const scheduleWall = Number.isFinite(first) ? Math.max(0, at - first) : shown;
  if (Math.abs(simOffsetMs - scheduleWall) < 1000) return text;
  return `${text} (+${formatDuration(simOffsetMs)} simulated)`;
}
