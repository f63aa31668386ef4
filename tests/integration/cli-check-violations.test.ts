import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CheckResult } from '../../src/main/cli-check';
import { ensureBuilt, startServe, stopServe, type Serve } from '../helpers/serve';
import { runCheck } from '../helpers/run-check';

// `webhook-lab check` and tracking plans (issue 24), against a real `webhook-lab serve`: violations
// are counted and listed per event and kind; they fail the check only with --fail-on-violations;
// a call the plan blocked is reported, never a failure by itself.

let dir: string;
let serve: Serve;
const auth = () => ['--api', serve.api, '--token', serve.token];

async function send(writeKey: string, body: unknown): Promise<void> {
  const res = await fetch(`${serve.collector}/v1/batch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}` },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
}

beforeAll(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'wl-cli-check-plans-'));
  const rule = { type: 'TRACK', key: 'Order Completed', version: 1, jsonSchema: { type: 'object', properties: { properties: { type: 'object', properties: { total: { type: 'number' } } } } } };
  const config = join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      sources: [
        { name: 'shop', writeKey: 'wk_shop', trackingPlan: { name: 'shop', unplannedEvents: 'block' } },
        { name: 'clean', writeKey: 'wk_clean', trackingPlan: { name: 'shop' } },
      ],
      trackingPlans: [{ name: 'shop', rules: [rule] }],
    }),
  );
  serve = await startServe(['--config', config, '--data-dir', join(dir, 'data')]);
  await send('wk_shop', { batch: [
    { type: 'track', userId: 'u', event: 'Order Completed', properties: { total: 'x' } },
    { type: 'track', userId: 'u', event: 'Order Completed', properties: { total: 'y' } },
    { type: 'track', userId: 'u', event: 'Unplanned' },
  ] });
  await send('wk_clean', { batch: [{ type: 'track', userId: 'u', event: 'Order Completed', properties: { total: 1 } }] });
}, 120_000);

afterAll(async () => {
  if (serve) await stopServe(serve);
  rmSync(dir, { recursive: true, force: true });
});

describe('webhook-lab check and tracking plans', () => {
  it('prints the violations and blocked calls, and passes without --fail-on-violations', async () => {
    const r = await runCheck([...auth(), '--source', 'shop']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ {2}blocked by plan +1$/m);
    expect(r.stdout).toMatch(/^ {2}with violations +3$/m);
    expect(r.stdout).toContain('OK: nothing failed, expired or was dropped');
    expect(r.stdout).toMatch(/^ {2}shop track "Order Completed": wrong type in 2 calls \(e\.g\. call \d+\)$/m);
    expect(r.stdout).toMatch(/^ {2}shop track "Unplanned": unplanned event in 1 call \(e\.g\. call \d+\)$/m);
  });

  it('--fail-on-violations exits 1 naming them; --json lists them per event and kind', async () => {
    const r = await runCheck([...auth(), '--source', 'shop', '--fail-on-violations', '--json']);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout) as CheckResult;
    expect(out).toMatchObject({ status: 'failures', exitCode: 1, violationsFailed: true, stats: { calls: 3, blocked: 1, dropped: 0 } });
    expect(out.violations).toMatchObject({ checked: 3, withViolations: 3, blocked: 1 });
    expect(out.violations?.items.map((i) => [i.event, i.kind, i.count])).toEqual([
      ['Order Completed', 'wrong_type', 2],
      ['Unplanned', 'unplanned_event', 1],
    ]);
    const text = await runCheck([...auth(), '--source', 'shop', '--fail-on-violations']);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('FAILED: 3 with tracking plan violations');
  });

  it('a source whose calls are clean passes with --fail-on-violations', async () => {
    const r = await runCheck([...auth(), '--source', 'clean', '--fail-on-violations']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ {2}with violations +0$/m);
  });
});
