import type { LoadInput, LoadRun, LoadSample } from '../../shared/simulation.contract';
import type { CallType, JsonObject } from '../../shared/types';
import { SAMPLE_CALLS } from '../../shared/sample-calls';

// The load form as text, its conversion to startLoad's input, and the per-second series the chart
// draws from LoadRun.samples (whose counts are cumulative since the start of the run).

export const COMPOSE_TEMPLATE = 'compose';

export interface LoadDraft {
  rate: string;
  stopBy: 'duration' | 'total';
  durationS: string;
  total: string;
  /** A SAMPLE_CALLS id, or COMPOSE_TEMPLATE for the Compose draft. */
  template: string;
  users: string;
  /** Replace the template's userId with `{{userId}}`, drawn from `users` users. */
  randomUsers: boolean;
  sourceId: string;
}

export const defaultLoadDraft = (): LoadDraft => ({
  rate: '50',
  stopBy: 'duration',
  durationS: '10',
  total: '1000',
  template: SAMPLE_CALLS[0]?.id ?? COMPOSE_TEMPLATE,
  users: '100',
  randomUsers: true,
  sourceId: '',
});

/** The template for the choice; `compose` is the Compose screen's built message (null if it has errors). */
export function templateOf(d: LoadDraft, compose: { type: CallType; message: JsonObject; ok: boolean }): LoadInput['template'] | null {
  let type: CallType;
  let message: JsonObject;
  if (d.template === COMPOSE_TEMPLATE) {
    if (!compose.ok) return null;
    ({ type, message } = compose);
  } else {
    const s = SAMPLE_CALLS.find((x) => x.id === d.template);
    if (!s) return null;
    ({ type, message } = s);
  }
  const out: JsonObject = { ...message };
  // A fixed timestamp or messageId would make every call a duplicate or a historical import.
  delete out.messageId;
  if (d.randomUsers) {
    delete out.anonymousId;
    out.userId = '{{userId}}';
  }
  return { ...out, type };
}

export function loadInputOf(d: LoadDraft, template: LoadInput['template'] | null): { input: LoadInput | null; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const num = (text: string, path: string, integer: boolean): number | undefined => {
    const n = Number(text.trim());
    if (text.trim() === '' || !Number.isFinite(n) || (integer && !Number.isInteger(n))) {
      errors[path] = integer ? 'a whole number' : 'a number';
      return undefined;
    }
    return n;
  };
  const rate = num(d.rate, 'rate', false);
  const users = num(d.users, 'users', true);
  const durationS = d.stopBy === 'duration' ? num(d.durationS, 'durationS', false) : undefined;
  const total = d.stopBy === 'total' ? num(d.total, 'total', true) : undefined;
  if (!template) errors.template = d.template === COMPOSE_TEMPLATE ? 'the Compose draft has errors: fix them in Compose first' : 'choose a template';
  if (Object.keys(errors).length || !template || rate === undefined || users === undefined) return { input: null, errors };
  const input: LoadInput = { rate, users, template };
  if (durationS !== undefined) input.durationS = durationS;
  if (total !== undefined) input.total = total;
  if (d.sourceId) input.sourceId = d.sourceId;
  return { input, errors };
}

export interface RatePoint {
  t: number;
  accepted: number;
  delivered: number;
  failed: number;
  retrying: number;
  p50: number | null;
  p99: number | null;
}

/** Per-second rates between consecutive samples (retrying is a level, latency as sampled). */
export function ratesOf(samples: LoadSample[]): RatePoint[] {
  const out: RatePoint[] = [];
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i];
    const prev = i > 0 ? samples[i - 1] : { t: 0, accepted: 0, delivered: 0, failed: 0 };
    const dt = s.t - prev.t;
    if (dt <= 0) continue;
    out.push({
      t: s.t,
      accepted: Math.max(0, (s.accepted - prev.accepted) / dt),
      delivered: Math.max(0, (s.delivered - prev.delivered) / dt),
      failed: Math.max(0, (s.failed - prev.failed) / dt),
      retrying: s.retrying,
      p50: s.p50Ms,
      p99: s.p99Ms,
    });
  }
  return out;
}

/** An SVG path through the points; a null value breaks the line. */
export function linePath(points: { x: number; y: number | null }[], sx: (x: number) => number, sy: (y: number) => number): string {
  let d = '';
  let pen = false;
  for (const p of points) {
    if (p.y === null) {
      pen = false;
      continue;
    }
    d += `${pen ? 'L' : 'M'}${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`;
    pen = true;
  }
  return d;
}

/** A round axis maximum at or above `v` (1, 2, 5 × 10^n). */
export function niceMax(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

export function progressOf(run: LoadRun): number {
  if (run.state === 'done') return 1;
  return run.target > 0 ? Math.min(1, run.sent / run.target) : 0;
}
