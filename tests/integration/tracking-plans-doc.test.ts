import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { startControlServer } from '../../src/main/server/control-server';
import { formatSummary, runCheck } from '../../src/main/cli-check';
import { testLab } from '../helpers/test-lab';
import { ROOT } from '../helpers/serve';

// docs/tracking-plans.md's worked example, run: the config and the expected violations are read from
// the page itself (so it cannot drift from what the lab does), the curl call sent as written.

const lab = testLab();
let server: { app: FastifyInstance; url: string } | undefined;
afterEach(async () => {
  await server?.app.close();
  server = undefined;
});
const doc = readFileSync(join(ROOT, 'docs/tracking-plans.md'), 'utf8');

function block(tag: string): unknown {
  const m = new RegExp('```json ' + tag + '\\n([\\s\\S]*?)\\n```').exec(doc);
  if (!m) throw new Error(`docs/tracking-plans.md: no \`\`\`json ${tag} block`);
  return JSON.parse(m[1]!);
}

/** The curl call of the example: its write key and -d body. */
function docCurl(): { writeKey: string; body: Record<string, unknown> } {
  const m = /curl -u (\S+): http:\/\/127\.0\.0\.1:8787\/v1\/track \\\n\s+-d '([^']+)'/.exec(doc);
  if (!m) throw new Error('docs/tracking-plans.md: no curl example');
  return { writeKey: m[1]!, body: JSON.parse(m[2]!) as Record<string, unknown> };
}

describe('docs/tracking-plans.md, worked example', () => {
  it('the config applies, the call is answered 200 with the violations the page shows, and an unplanned event is blocked as it says', async () => {
    const t = await lab.start({ config: block('tracking-plan-example') });
    const { writeKey, body } = docCurl();
    expect(await t.post('/v1/track', body, { writeKey })).toEqual({ status: 200, json: { success: true } });
    const id = (await t.call('listMessages', { limit: 1 })).items[0]!.id;
    const detail = await t.call('getMessage', { id });
    expect(detail.violations).toEqual(block('tracking-plan-example-violations'));
    expect(detail.call.status).toBe('accepted');

    await t.post('/v1/track', { userId: 'u_1', event: 'Checkout Stared' }, { writeKey });
    const blocked = (await t.call('listMessages', { q: 'Checkout Stared' })).items[0]!;
    expect(blocked.status).toBe('blocked');
    expect(blocked.dropReason).toBe('blocked by tracking plan: unplanned event "Checkout Stared"');
    expect(doc).toContain('`blocked by tracking plan: unplanned event "Checkout Stared"`');
  });

  it('"In CI": webhook-lab check after the two calls of the example prints what the page shows', async () => {
    const t = await lab.start({ config: block('tracking-plan-example') });
    server = await startControlServer({ engine: t.engine, host: '127.0.0.1', port: 0, token: 'doc-token' });
    const { writeKey, body } = docCurl();
    await t.post('/v1/track', body, { writeKey });
    await t.post('/v1/track', { userId: 'u_1', event: 'Checkout Stared' }, { writeKey });
    const since = '2026-01-31T12:00:00.000Z';
    const r = await runCheck({ api: server.url, token: 'doc-token', since, timeoutMs: 5_000, json: false, failOnViolations: true }, undefined);
    expect(r.exitCode).toBe(1);
    const m = /```sh tracking-plan-ci-example\n[\s\S]*?--fail-on-violations\n((?:# .*\n)+)```/.exec(doc);
    if (!m) throw new Error('docs/tracking-plans.md: no ```sh tracking-plan-ci-example block');
    const shown = m[1]!.split('\n').filter(Boolean).map((l) => l.slice(2));
    // The page's call ids and --since are examples: compared as shapes.
    const shape = (l: string) => l.replace(/call \d+/g, 'call N').replace(/inspector\/\d+/g, 'inspector/N').replace(/since \S+\)/, 'since T)');
    expect(formatSummary(r).trimEnd().split('\n').map(shape)).toEqual(shown.map(shape));
  });
});
