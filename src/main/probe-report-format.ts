import type { ProbeReport } from '../shared/probe.contract';

// How `webhook-lab probe` prints a report: a line per check for people, JUnit XML for CI systems
// (one test case per check: fail → <failure>, skipped → <skipped>, warn passes with its warning
// in <system-out>, so a pipeline shows each check as a test).

const MARK: Record<string, string> = { pass: 'PASS', fail: 'FAIL', warn: 'WARN', skipped: 'SKIP', pending: '....', running: '....' };

/** `kept`: the store outlives the run (a lab, --data-dir), so the inspector still shows the requests. */
export function formatProbeReport(r: ProbeReport, kept = true): string {
  const lines = [`Webhook Lab probe of ${r.url} (${r.mode})`, ''];
  for (const c of r.checks) {
    lines.push(`${MARK[c.verdict]}  ${c.name.padEnd(17)} ${c.detail}`);
    if (c.verdict === 'fail' || c.verdict === 'warn') lines.push(`      ${''.padEnd(17)} why: ${c.why}`);
  }
  const count = (v: string) => r.checks.filter((c) => c.verdict === v).length;
  const took = r.durationMs === null ? '' : ` in ${(r.durationMs / 1000).toFixed(1)} s`;
  lines.push('');
  if (r.unreachable) lines.push(`probe: the receiver could not be reached${took}`);
  else lines.push(`probe: ${count('pass')} passed, ${count('fail')} failed, ${count('warn')} warned, ${count('skipped')} skipped${took}`);
  // Times are the receiver's (from when each request was sent); say when the lab's own lane held some first.
  const waited = r.checks.flatMap((c) => c.evidence).filter((e) => (e.waitedMs ?? 0) > 0);
  if (waited.length > 0) {
    lines.push(`${waited.length} request${waited.length === 1 ? '' : 's'} waited for a slot in the receiver's lane (the lab's sources were sending to it), up to ${Math.max(...waited.map((e) => e.waitedMs!))} ms; times above start when each was sent`);
  }
  if (r.sourceId && kept) lines.push('every request is in the inspector under the source "probe"');
  return `${lines.join('\n')}\n`;
}

/** What --json prints: the report, `ok` and `checks` first. */
export function probeJson(r: ProbeReport): string {
  const { ok, checks, ...rest } = r;
  return `${JSON.stringify({ ok, checks, ...rest }, null, 2)}\n`;
}

const esc = (s: string) =>
  s
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');

/** JUnit XML (the shape GitHub, GitLab and Jenkins read): one <testcase> per check. */
export function probeJunit(r: ProbeReport): string {
  const failures = r.checks.filter((c) => c.verdict === 'fail').length;
  const skipped = r.checks.filter((c) => c.verdict === 'skipped').length;
  const seconds = ((r.durationMs ?? 0) / 1000).toFixed(3);
  const cases = r.checks.map((c) => {
    const evidence = c.evidence
      .map((e) => `${e.label}: ${e.status !== null && e.error === null ? `HTTP ${e.status}` : (e.error ?? 'no answer')} in ${e.durationMs} ms${e.waitedMs ? ` after waiting ${e.waitedMs} ms for the receiver's lane` : ''} (expected ${e.expected}${e.callId !== null ? `; inspector call ${e.callId}` : ''})`)
      .join('\n');
    const out = [c.verdict === 'warn' ? `warning: ${c.detail}` : c.detail, evidence].filter(Boolean).join('\n');
    const body =
      c.verdict === 'fail' ? `\n      <failure message="${esc(c.detail)}" type="${esc(c.name)}">${esc(`${c.detail}\n${c.why}`)}</failure>`
      : c.verdict === 'skipped' ? `\n      <skipped message="${esc(c.detail)}"/>`
      : '';
    return `    <testcase classname="webhook-lab.probe" name="${esc(`${c.name}: ${c.title}`)}" time="0">${body}\n      <system-out>${esc(out)}</system-out>\n    </testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="webhook-lab probe" tests="${r.checks.length}" failures="${failures}" skipped="${skipped}" time="${seconds}">`,
    `  <testsuite name="webhook-lab probe ${esc(r.url)}" tests="${r.checks.length}" failures="${failures}" errors="0" skipped="${skipped}" time="${seconds}" timestamp="${esc(r.startedAt)}">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
