import type { ProbeCheck, ProbeReport, ProbeVerdict } from '../../../shared/probe.contract';

// What the Check a receiver screen shows and copies, without React.

/** A word for the shell: single-quoted, a quote inside as '\'' (POSIX sh, bash, zsh). */
export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The probe as a CI step (docs/ci.md): the secrets are never pasted into it, only the names of the
 * environment variables (CI secrets) that hold them.
 */
export function ciCommand(o: { url: string; secret: boolean; standardWebhooksSecret: boolean; mode: 'classic' | 'actions'; source?: string; mapping?: string }): string {
  const parts = ['npx webhook-lab probe', `--url ${shellQuote(o.url.trim() || 'https://your-receiver.example/webhooks')}`];
  if (o.secret) parts.push('--secret "$WEBHOOK_SHARED_SECRET"');
  if (o.standardWebhooksSecret) parts.push('--standard-webhooks-secret "$STANDARD_WEBHOOKS_SECRET"');
  // A source and a mapping are names, not secrets: given as typed (placeholders when blank).
  if (o.mode === 'actions') parts.push(`--mode actions --source ${shellQuote(o.source?.trim() || 'SOURCE')} --mapping ${shellQuote(o.mapping?.trim() || 'MAPPING')} --api "$WEBHOOK_LAB_API"`);
  parts.push('--junit probe-junit.xml');
  return parts.join(' \\\n  ');
}

export const VERDICT_CHIP: Record<ProbeVerdict, string> = {
  pass: 'chip-delivered',
  fail: 'chip-failed',
  warn: 'chip-warn',
  skipped: 'chip-none',
  pending: 'chip-pending',
  running: 'chip-in_flight',
};

/** "Running: 4 of 9 checks done", or "3 passed, 1 failed, 1 warned, 2 skipped in 1.2 s". */
export function reportSummary(r: ProbeReport): string {
  const n = (v: ProbeVerdict) => r.checks.filter((c: ProbeCheck) => c.verdict === v).length;
  if (r.state === 'running') {
    const todo = n('pending') + n('running');
    return `Running: ${r.checks.length - todo} of ${r.checks.length} checks done`;
  }
  if (r.unreachable) return 'The receiver could not be reached: no check could be judged';
  const took = r.durationMs === null ? '' : ` in ${(r.durationMs / 1000).toFixed(1)} s`;
  return `${n('pass')} passed, ${n('fail')} failed, ${n('warn')} warned, ${n('skipped')} skipped${took}`;
}
