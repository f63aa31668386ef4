import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { testLab } from '../helpers/test-lab';
import { ROOT } from '../helpers/serve';

// docs/tracking-plans.md's worked example, run: the config and the expected violations are read from
// the page itself (so it cannot drift from what the lab does), the curl call sent as written.

const lab = testLab();
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
});
