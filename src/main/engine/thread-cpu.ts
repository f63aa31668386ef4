import { readFileSync, readlinkSync } from 'node:fs';

// A worker thread's own CPU time, read from another thread (issue 44). A budget in wall-clock time
// stops ordinary work on a machine whose cores are busy with other programs (a tracking plan's check
// of a valid call ran past 250 ms with both cores kept busy): a worker given a slice of a core is
// slow, not hostile. Linux says each thread's CPU time in /proc; elsewhere (macOS, Windows) callers
// fall back to wall time. Node 20 has no process.threadCpuUsage (23.9+), and it only reads its own thread.

/** This thread's kernel id (`/proc/thread-self` → `<pid>/task/<tid>`), or 0 where /proc does not say. */
export function currentThreadId(): number {
  try {
    const tid = Number(/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'))?.[1]);
    return Number.isSafeInteger(tid) && tid > 0 ? tid : 0;
  } catch {
    return 0;
  }
}

/**
 * CPU time a thread of this process has run, in ms, or undefined (no /proc, or the thread is gone).
 * schedstat's first field is nanoseconds on a CPU; stat's utime + stime (clock ticks of 10 ms) where
 * the kernel keeps no schedstat.
 */
export function threadCpuMs(tid: number): number | undefined {
  if (!(tid > 0)) return undefined;
  try {
    const ns = Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'latin1').split(' ', 1)[0]);
    // "0 0 0" where the kernel keeps no schedule statistics: not a thread that never ran.
    if (Number.isFinite(ns) && ns > 0) return ns / 1e6;
  } catch {
    // fall through to stat
  }
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'latin1');
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks * 10 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What a thread has spent on its current piece of work, as a watchdog polling it sees it: CPU time
 * counted from the first poll that saw the piece (so short by at most what ran before that poll: a
 * budget ends late, never early), or `wallMs` where the thread's CPU time cannot be read.
 */
export class SpentMeter {
  private piece: string | undefined;
  private base = 0;

  spent(tid: number, piece: string, wallMs: number): number {
    const cpu = threadCpuMs(tid);
    if (cpu === undefined) {
      this.piece = undefined;
      return wallMs;
    }
    if (piece !== this.piece) {
      this.piece = piece;
      this.base = cpu;
    }
    return cpu - this.base;
  }
}
