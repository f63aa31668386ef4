import { describe, expect, it } from 'vitest';
import { ciCommand, reportSummary, shellQuote } from '../../src/renderer/features/probe/probe-model';
import type { ProbeReport } from '../../src/shared/probe.contract';

describe('Check a receiver: the CI command', () => {
  it('quotes the URL for the shell and never holds a secret, only the variables that carry them', () => {
    const cmd = ciCommand({ url: "https://h.example/hook?a=1&b='x'", secret: true, standardWebhooksSecret: true, mode: 'classic' });
    expect(cmd).toBe(
      [
        'npx webhook-lab probe',
        `--url 'https://h.example/hook?a=1&b='\\''x'\\'''`,
        '--secret "$WEBHOOK_SHARED_SECRET"',
        '--standard-webhooks-secret "$STANDARD_WEBHOOKS_SECRET"',
        '--junit probe-junit.xml',
      ].join(' \\\n  '),
    );
    expect(ciCommand({ url: 'https://h.example/hook', secret: false, standardWebhooksSecret: false, mode: 'actions', source: 'my shop', mapping: 'orders' })).toBe(
      'npx webhook-lab probe \\\n  --url https://h.example/hook \\\n  --mode actions --source \'my shop\' --mapping orders --api "$WEBHOOK_LAB_API" \\\n  --junit probe-junit.xml',
    );
  });

  it('shellQuote leaves plain words alone', () => {
    expect(shellQuote('http://127.0.0.1:9000/x')).toBe('http://127.0.0.1:9000/x');
    expect(shellQuote('a b')).toBe("'a b'");
  });

  it('summarises a report while it runs and when done', () => {
    const check = (verdict: ProbeReport['checks'][number]['verdict']) => ({ name: 'latency' as const, title: '', ok: true, verdict, detail: '', why: '', evidence: [] });
    const r: ProbeReport = {
      id: 'p', url: 'http://x', mode: 'classic', state: 'running', ok: false, unreachable: false, startedAt: '', finishedAt: null, durationMs: null, sourceId: null,
      checks: [check('pass'), check('running'), check('pending'), check('fail')],
    };
    expect(reportSummary(r)).toBe('Running: 2 of 4 checks done');
    expect(reportSummary({ ...r, state: 'done', durationMs: 1234, checks: [check('pass'), check('warn'), check('skipped'), check('fail')] })).toBe('1 passed, 1 failed, 1 warned, 1 skipped in 1.2 s');
    expect(reportSummary({ ...r, state: 'done', unreachable: true })).toMatch(/could not be reached/);
  });
});
