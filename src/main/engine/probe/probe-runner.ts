import type { ProbeCheckId, ProbeEvidence, ProbeReport } from '../../../shared/probe.contract';
import { probeInputSchema } from '../../../shared/probe.contract';
import type { ActionsMapping, Source } from '../../../shared/types';
import type { z } from 'zod';
import { formatTimestamp } from '../../../shared/timestamp';
import { HttpSender } from '../dispatcher/http-sender';
import { ProbeSender, type ProbeAnswer, type ProbeSenderDeps } from './probe-sender';
import { CHECK_DEFS, callTypes, duplicates, latency, ordering, retryClasses, robustness, signature, standardWebhooks, type CheckContext, type CheckResult } from './checks';
import { judgeTransport } from './transport';
import { probeCall } from './calls';
import { actionsCheck } from './actions-check';

export type ProbeParsed = z.output<typeof probeInputSchema>;

/** A new report: every check pending (or skipped when --only leaves it out). */
export function newReport(id: string, input: ProbeParsed, sourceId: string, now: number): ProbeReport {
  return {
    id,
    url: input.url,
    mode: input.mode,
    state: 'running',
    ok: false,
    unreachable: false,
    startedAt: formatTimestamp(now),
    finishedAt: null,
    durationMs: null,
    sourceId,
    checks: (Object.keys(CHECK_DEFS) as ProbeCheckId[]).map((name) => {
      const selected = !input.only || input.only.includes(name);
      return {
        name,
        ...CHECK_DEFS[name],
        ok: !selected,
        verdict: selected ? 'pending' : 'skipped',
        detail: selected ? '' : 'not selected for this run',
        evidence: [],
      };
    }),
  };
}

/**
 * Runs a probe, updating `report` in place and calling `changed` after each step. The first request
 * goes alone: it finds out whether the receiver can be reached at all (not: every other check is
 * skipped, `unreachable`), whether its certificate is trusted (not: transport fails and the rest go
 * on accepting it) and is latency's "alone" sample. Then latency's 20 at once, alone too; then
 * every other check in parallel, each at most two requests deep, so a run ends within
 * 3 × 2 × PROBE_WAIT_MS (well inside a minute) even when no request is answered, plus the time its
 * requests wait for the receiver's lane when the lab's sources keep it full.
 */
export async function runProbe(
  deps: ProbeSenderDeps,
  source: Source,
  input: ProbeParsed,
  report: ProbeReport,
  changed: () => void,
  /** Actions mode: the mapping whose request the actions check sends (probe-service.ts finds it). */
  mapping: ActionsMapping | null = null,
): Promise<void> {
  const t0 = performance.now();
  const settings = deps.store.settings.get();
  const senders: HttpSender[] = [new HttpSender({ now: deps.now, connectionsPerOrigin: null })];
  const probe = new ProbeSender(deps, source, { url: input.url, secret: input.secret, standardWebhooksSecret: input.standardWebhooksSecret }, settings, senders[0]);
  const answers: ProbeAnswer[] = [];
  const ctx: CheckContext = {
    send: async (req) => {
      const a = await probe.send(req);
      answers.push(a);
      return a;
    },
    now: deps.now,
    settings,
    hasSecret: !!input.secret,
    hasStandardWebhooksSecret: !!input.standardWebhooksSecret,
  };
  const check = (name: ProbeCheckId) => report.checks.find((c) => c.name === name)!;
  const selected = (name: ProbeCheckId) => check(name).verdict !== 'skipped';
  // The check whose subject made the receiver refuse every validly signed request. Standard Webhooks
  // wins: it showed X-Signature alone was accepted.
  let refusedBy: 'signature' | 'standard-webhooks' | null = null;
  const set = (name: ProbeCheckId, r: CheckResult) => {
    if (r.blocksOthers && (name === 'signature' || name === 'standard-webhooks') && refusedBy !== 'standard-webhooks') refusedBy = name;
    Object.assign(check(name), { verdict: r.verdict, ok: r.verdict !== 'fail', detail: r.detail, evidence: r.evidence });
    changed();
  };
  const run = async (name: ProbeCheckId, fn: () => Promise<CheckResult>) => {
    if (!selected(name)) return;
    check(name).verdict = 'running';
    changed();
    try {
      set(name, await fn());
    } catch (err) {
      set(name, { verdict: 'fail', detail: `the probe itself failed: ${(err as Error).message}`, evidence: [] });
    }
  };

  try {
    if (selected('transport')) check('transport').verdict = 'running';
    changed();
    const firstCall = () => ({ label: 'track', expected: '2xx' as const, call: probeCall('track', deps.now()) });
    let first = await ctx.send(firstCall());
    let tlsRefused: ProbeAnswer | null = null;
    if (first.result.tlsError) {
      tlsRefused = first;
      const lenient = new HttpSender({ now: deps.now, connectionsPerOrigin: null, acceptAnyCertificate: true });
      senders.push(lenient);
      probe.useSender(lenient);
      first = await ctx.send(firstCall());
    }
    if (unreachable(first)) {
      report.unreachable = true;
      const why = first.evidence.error ?? 'no connection';
      if (selected('transport')) set('transport', { verdict: 'fail', detail: `no connection could be made: ${why}`, evidence: tlsRefused ? [tlsRefused.evidence, first.evidence] : [first.evidence] });
      for (const c of report.checks) if (c.verdict === 'pending') Object.assign(c, { verdict: 'skipped', ok: false, detail: `not run: the receiver could not be reached (${why})` });
      return;
    }
    if (selected('transport')) set('transport', judgeTransport(new URL(input.url), first, tlsRefused));
    await run('latency', () => latency(ctx, first));
    if (mapping) {
      // An Actions receiver takes the mapping's body, not Classic's: only time, transport and the
      // mapping's own request are judged.
      for (const c of report.checks) {
        if (c.verdict === 'pending' && c.name !== 'actions') Object.assign(c, { verdict: 'skipped', ok: true, detail: 'a Classic check: not run in Actions mode' });
      }
    }
    await Promise.all([
      run('call-types', () => callTypes(ctx)),
      run('signature', () => signature(ctx)),
      run('standard-webhooks', () => standardWebhooks(ctx)),
      run('duplicates', () => duplicates(ctx)),
      run('retry-classes', () => retryClasses(ctx)),
      run('robustness', () => robustness(ctx)),
      run('ordering', () => ordering(ctx)),
    ]);
    if (refusedBy !== null) {
      const by = refusedBy;
      const title = by === 'signature' ? 'Signature' : 'Standard Webhooks';
      // Their failures follow from the refused signatures: a fix of their own would mislead (issue 37, item 6).
      // Only a failure made of 401/403 answers follows from it: a certificate, a late answer or an
      // accepted forgery stands on its own.
      const refusedOnly = (c: (typeof report.checks)[number]) => {
        const missed = c.evidence.filter((e) => !e.ok);
        return missed.length > 0 && missed.every((e) => e.status === 401 || e.status === 403);
      };
      for (const c of report.checks) {
        if (c.name !== by && c.verdict === 'fail' && refusedOnly(c)) c.detail = `not judged on its own: the receiver refused validly signed requests (see ${title}); fix that first. What it answered: ${c.detail}`;
      }
      changed();
    }
    if (selected('retry-classes')) check('retry-classes').detail += `. Every answer of this run, as Segment treats it: ${treatmentSummary(answers.map((a) => a.evidence))}`;
    if (mapping) await run('actions', () => actionsCheck(probe, mapping, deps.now()));
    else if (selected('actions')) {
      set('actions', { verdict: 'skipped', detail: 'Classic mode: no Actions mapping chosen', evidence: [] });
    }
  } catch (err) {
    // Not the receiver's doing (storage failing under the first request, a bug): no check is left
    // pending or counted as passed.
    for (const c of report.checks) {
      if (c.verdict === 'pending' || c.verdict === 'running') Object.assign(c, { verdict: 'fail', ok: false, detail: `the probe itself failed: ${(err as Error).message}` });
    }
  } finally {
    await Promise.all(senders.map((s) => s.close({ force: true })));
    report.state = 'done';
    report.ok = !report.unreachable && report.checks.every((c) => c.verdict !== 'fail');
    report.finishedAt = formatTimestamp(deps.now());
    report.durationMs = Math.round(performance.now() - t0);
    changed();
  }
}

/**
 * No connection was ever made: refused, no route, no such host, or no connection within the time
 * (a request written, then a reset or a timeout, had one). Told by what the connection did, never by
 * how long it took: on a slow or busy machine a refusal can be read after the attempt's deadline.
 */
export function unreachable(a: Pick<ProbeAnswer, 'result'>): boolean {
  const r = a.result;
  return r.status === null && r.errorCode !== null && r.timing === null;
}

/** "HTTP 200 ×40 (delivered); HTTP 401 ×3 (not retried: …)" over a run's answers. */
export function treatmentSummary(evidence: ProbeEvidence[]): string {
  const groups = new Map<string, number>();
  for (const e of evidence) {
    const key = `${e.status !== null && e.error === null ? `HTTP ${e.status}` : (e.error ?? 'no answer')} → ${e.treatment.replace(/ \(.*\)$/, '')}`;
    groups.set(key, (groups.get(key) ?? 0) + 1);
  }
  return [...groups].map(([k, n]) => `${k} ×${n}`).join('; ');
}
