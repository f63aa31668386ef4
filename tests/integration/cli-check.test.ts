import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CheckResult } from '../../src/main/cli-check';
import type { CallStats } from '../../src/shared/call-stats';
import { webhookSource } from '../helpers/engine';
import { startReceiver, type TestReceiver } from '../helpers/receiver';
import { ensureBuilt, startServe, stopServe, type Serve } from '../helpers/serve';
import { runCheck } from '../helpers/run-check';
import { until } from '../helpers/until';

// `webhook-lab check` against a real `webhook-lab serve`: one source per outcome (--source keeps
// them apart), a receiver that answers 200, 404 or 500 by path.

let dir: string;
let receiver: TestReceiver;
let serve: Serve;

const check = runCheck;

const auth = () => ['--api', serve.api, '--token', serve.token];

async function track(writeKey: string, event: string, extra: Record<string, unknown> = {}): Promise<void> {
  const res = await fetch(`${serve.collector}/v1/track`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}` },
    body: JSON.stringify({ userId: 'u1', event, ...extra }),
  });
  expect(res.status).toBe(200);
}

async function stats(query: string): Promise<CallStats> {
  const res = await fetch(`${serve.api}/stats${query}`, { headers: { authorization: `Bearer ${serve.token}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as CallStats;
}

beforeAll(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'wl-cli-check-'));
  receiver = await startReceiver((req, res) => {
    const status = req.url.startsWith('/gone') ? 404 : req.url.startsWith('/flaky') ? 500 : 200;
    res.writeHead(status, { 'content-type': 'text/plain' }).end(String(status));
  });
  const config = join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      sources: [
        webhookSource('good', 'wk_good', [`${receiver.url}/ok`], 'secret'),
        webhookSource('broken', 'wk_broken', [`${receiver.url}/gone`]),
        webhookSource('flaky', 'wk_flaky', [`${receiver.url}/flaky`]),
        webhookSource('dups', 'wk_dups', [`${receiver.url}/ok`]),
        // Webhooks (Actions): only a mapping; and Classic beside a mapping whose receiver answers 404.
        actionsSource('acts', 'wk_acts', 'actions', `${receiver.url}/ok-actions`),
        actionsSource('acts-broken', 'wk_acts_broken', 'both', `${receiver.url}/gone-actions`),
      ],
    }),
  );
  serve = await startServe(['--config', config, '--data-dir', join(dir, 'data')]);
}, 120_000);

afterAll(async () => {
  await stopServe(serve);
  await receiver?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('webhook-lab check', () => {
  it('waits for the deliveries, prints the summary and exits 0 when all were delivered', async () => {
    for (let i = 0; i < 3; i++) await track('wk_good', `Good ${i}`);
    const r = await check([...auth(), '--source', 'good', '--timeout', '20']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^webhook-lab check: 3 calls \(all, source "good"\)\n/);
    expect(r.stdout).toMatch(/^ {2}delivered {6} {6}3$/m);
    expect(r.stdout).toMatch(/^ {2}failed {9} {6}0$/m);
    expect(r.stdout).toMatch(/^ {2}unfinished {5} {6}0$/m);
    expect(r.stdout).toContain('OK: nothing failed, expired or was dropped');
    // It waited: by the time it answered, the receiver had all three.
    expect(receiver.requests.filter((q) => q.url === '/ok')).toHaveLength(3);
  });

  it('exits 1 with the failed call and its URL when the receiver answered 404', async () => {
    await track('wk_broken', 'Broken');
    const r = await check([...auth(), '--source', 'broken', '--timeout', '20']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^ {2}failed {9} {6}1$/m);
    expect(r.stdout).toMatch(/^ {2}delivered {6} {6}0$/m);
    expect(r.stdout).toContain('FAILED: 1 failed');
    expect(r.stdout).toMatch(new RegExp(`call \\d+ track "Broken": failed — ${receiver.url}/gone → 404, 1 attempt \\(failed\\)`));
    // The call's permalink in the lab's web UI (#/inspector/<id>), on the line under it.
    const id = /call (\d+) track "Broken"/.exec(r.stdout)![1];
    expect(r.stdout).toContain(`\n    ${serve.api.replace(/\/api$/, '')}/#/inspector/${id}\n`);
  });

  it('exits 1 when a call was dropped, naming the reason', async () => {
    await track('wk_dups', 'Once', { messageId: 'dup-1' });
    await track('wk_dups', 'Twice', { messageId: 'dup-1' });
    const r = await check([...auth(), '--source', 'dups', '--timeout', '20']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^ {2}delivered {6} {6}1$/m);
    expect(r.stdout).toMatch(/^ {2}dropped {8} {6}1 {3}\(duplicate messageId: 1\)$/m);
    expect(r.stdout).toContain('FAILED: 1 dropped');
    expect(r.stdout).toMatch(/call \d+ track "Twice": dropped \(duplicate messageId\)/);
  });

  it('exits 3 when a delivery is still retrying at the timeout', async () => {
    await track('wk_flaky', 'Flaky');
    await until(() => receiver.requests.some((q) => q.url === '/flaky'));
    await until(async () => (await stats('?sourceId=' + (await sourceId('flaky')))).deliveries.retrying === 1);
    const r = await check([...auth(), '--source', 'flaky', '--timeout', '1']);
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/^ {2}unfinished {5} {6}1 {3}\(pending 0, in flight 0, retrying 1\)$/m);
    expect(r.stdout).toMatch(/TIMED OUT after 1\.\ds: 1 delivery not finished/);
  });

  it('--json prints the result object; --since leaves out earlier calls', async () => {
    const since = new Date().toISOString();
    await track('wk_good', 'After since');
    const r = await check([...auth(), '--source', 'good', '--since', since, '--json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as CheckResult;
    expect(out).toEqual({
      status: 'ok',
      exitCode: 0,
      waitedMs: expect.any(Number),
      stats: {
        since,
        sourceId: await sourceId('good'),
        calls: 1,
        dropped: 0,
        dropReasons: [],
        notForwarded: 0,
        blocked: 0,
        deliveries: { pending: 0, in_flight: 0, retrying: 0, delivered: 1, failed: 0, expired: 0, canceled: 0 },
        unfinished: 0,
      },
      problems: [],
      violations: { since: expect.any(String), checked: 0, withViolations: 0, blocked: 0, items: [], itemsTotal: 0, unchecked: [] },
    });

    const failed = await check([...auth(), '--source', 'broken', '--json']);
    expect(failed.code).toBe(1);
    const f = JSON.parse(failed.stdout) as CheckResult;
    expect(f.status).toBe('failures');
    expect(f.problems).toEqual([
      { id: expect.any(Number), receivedAt: expect.any(String), type: 'track', label: 'Broken', state: 'failed', dropReason: null, urls: [{ url: `${receiver.url}/gone`, state: 'failed', lastStatus: 404, attempts: 1 }], link: expect.stringMatching(/\/#\/inspector\/\d+$/) },
    ]);
  });

  it('counts every source without --source, and takes the API and token from the environment', async () => {
    const all = await stats('');
    const r = await check(['--timeout', '0', '--json'], { WEBHOOK_LAB_API: serve.api.replace(/\/api$/, '/'), WEBHOOK_LAB_TOKEN: serve.token });
    const out = JSON.parse(r.stdout) as CheckResult;
    expect(out.stats.calls).toBe(all.calls);
    expect(out.stats.deliveries.failed).toBe(1);
    expect(out.stats.dropped).toBe(1);
    expect(r.code).toBe(1);
  });

  it('exits 4 when the API refuses the token or cannot be reached, 2 on bad usage', async () => {
    const denied = await check(['--api', serve.api, '--token', 'wrong']);
    expect(denied.code).toBe(4);
    expect(denied.stderr).toMatch(/GET \/api\/stats → 401: .*check --token/);

    // --api at an address that redirects to the lab (another port): fetch does not send the token on
    // to another origin, so the lab says 401. Telling the user to check a token that is right misleads.
    const redirector = await startReceiver((req, res) => res.writeHead(307, { location: `${serve.api.replace(/\/api$/, '')}${req.url}` }).end());
    try {
      const redirected = await check(['--api', `${redirector.url}/api`, '--token', serve.token]);
      expect(redirected.code).toBe(4);
      expect(redirected.stderr).toContain(`redirected to ${serve.api}/stats`);
      expect(redirected.stderr).toContain('the token is not sent on to another address: give --api the URL it was redirected to');
      expect(redirected.stderr).not.toContain('check --token');
    } finally {
      await redirector.close();
    }

    const down = await check(['--api', 'http://127.0.0.1:9/api', '--token', 't']);
    expect(down.code).toBe(4);
    expect(down.stderr).toMatch(/cannot reach http:\/\/127\.0\.0\.1:9\/api/);

    const noSource = await check([...auth(), '--source', 'nope']);
    expect(noSource.code).toBe(2);
    expect(noSource.stderr).toMatch(/no source named "nope" \(sources: good, broken, flaky, dups, acts, acts-broken\)/);
    // What Date.parse alone took (a review): "1" as 2001, 2026-02-30 as 2 March, a year the API refuses (it exited 4).
    for (const since of ['yesterday', '1', 'Nov 26', '2026-02-30T00:00:00Z', '+275760-09-13T00:00:00Z']) {
      const badSince = await check([...auth(), '--since', since]);
      expect([since, badSince.code]).toEqual([since, 2]);
      expect(badSince.stderr).toContain('--since: expected an ISO time');
    }
    const noApi = await check(['--token', 't']);
    expect(noApi.code).toBe(2);
    expect(noApi.stderr).toContain('WEBHOOK_LAB_API');

    const help = await check(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('3  timed out');
    // Thirteen CLI processes one after another: what they take is the machine's (each has its own 30 s guard).
  }, 300_000);

  it('counts an Actions-only call by its Actions request, not as "not forwarded"', async () => {
    await track('wk_acts', 'Order Completed');
    const r = await check([...auth(), '--source', 'acts', '--timeout', '20', '--json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as CheckResult;
    expect(out.stats).toMatchObject({ calls: 1, notForwarded: 0, unfinished: 0, deliveries: { delivered: 1, failed: 0 } });
    expect(receiver.requests.filter((q) => q.url === '/ok-actions').map((q) => q.method)).toEqual(['PUT']);
  });

  it('exits 1 when an Actions request failed though the Classic one was delivered, naming the mapping', async () => {
    await track('wk_acts_broken', 'Order Completed');
    const r = await check([...auth(), '--source', 'acts-broken', '--timeout', '20']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^ {2}delivered {6} {6}1$/m);
    expect(r.stdout).toMatch(/^ {2}failed {9} {6}1$/m);
    expect(r.stdout).toMatch(/^ {2}not forwarded {2} {6}0$/m);
    expect(r.stdout).toContain('FAILED: 1 failed');
    expect(r.stdout).toMatch(
      new RegExp(`call \\d+ track "Order Completed": failed — ${receiver.url}/ok → 200, 1 attempt \\(delivered\\); Actions "orders" ${receiver.url}/gone-actions → 404, 1 attempt \\(failed\\)`),
    );
  });

  it('never prints the password of a receiver URL with credentials (summary and --json)', async () => {
    const host = receiver.url.slice('http://'.length);
    const created = await fetch(`${serve.api}/sources`, {
      method: 'POST',
      headers: { authorization: `Bearer ${serve.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'secret-url', writeKey: 'wk_secret_url', webhooks: { enabled: true, urls: [{ url: `http://admin:hunter2@${host}/gone-secret`, headers: {} }] } }),
    });
    expect(created.status).toBe(200);
    await track('wk_secret_url', 'Secret');
    const r = await check([...auth(), '--source', 'secret-url', '--timeout', '20']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`http://admin:****@${host}/gone-secret → 404`);
    const json = await check([...auth(), '--source', 'secret-url', '--json']);
    expect((JSON.parse(json.stdout) as CheckResult).problems[0].urls[0].url).toBe(`http://admin:****@${host}/gone-secret`);
    for (const out of [r.stdout, r.stderr, json.stdout, json.stderr]) expect(out).not.toContain('hunter2');
  });
});

/** A source whose Webhooks (Actions) mapping "orders" PUTs every track call to `url` (mode both: Classic to /ok as well). */
function actionsSource(name: string, writeKey: string, mode: 'actions' | 'both', url: string) {
  return {
    name,
    writeKey,
    webhooks: {
      enabled: true,
      mode,
      urls: mode === 'both' ? [{ url: `${receiver.url}/ok`, headers: {} }] : [],
      mappings: [{ name: 'orders', trigger: { type: 'track' }, url, method: 'PUT', headers: {} }],
    },
  };
}

async function sourceId(name: string): Promise<string> {
  const res = await fetch(`${serve.api}/sources`, { headers: { authorization: `Bearer ${serve.token}` } });
  const list = (await res.json()) as { id: string; name: string }[];
  return list.find((s) => s.name === name)!.id;
}
