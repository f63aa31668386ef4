import { describe, expect, it } from 'vitest';
import { MAX_CONFIG_BYTES } from '../../src/shared/config.schema';
import { testLab } from '../helpers/test-lab';

// A config file may be 10 MiB (serve --config), but the control API took 2 MB: an export of a larger
// lab (one big tracking plan is enough) could not be imported back through the API or the web UI (a
// review found it: 413). A config import and a tracking plan's create, replace and import take what
// a config file may hold; other operations keep the 2 MB limit.

const TOKEN = 'large-token';
const lab = testLab();
let server: { url: string } | undefined;

/** 300 rules with an 8 KB description each: ~2.5 MB of JSON, cheap to compile. */
const bigRules = () =>
  Array.from({ length: 300 }, (_, i) => ({
    type: 'TRACK' as const,
    key: `Event ${i}`,
    version: 1,
    jsonSchema: { type: 'object', description: `${i} `.padEnd(8 * 1024, 'd'), properties: { properties: { type: 'object' } } },
  }));

async function send(method: string, path: string, body: string): Promise<{ status: number; body: { code?: string } }> {
  const res = await fetch(`${server!.url}/api${path}`, { method, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body });
  return { status: res.status, body: (await res.json()) as { code?: string } };
}

describe('a config or tracking plan over 2 MB', () => {
  it('imports over the control API, and its export imports back; past 10 MiB it is refused with too_large', async () => {
    server = await lab.controlServer(await lab.start(), TOKEN);
    const config = { sources: [{ name: 'app', writeKey: 'wk_large', trackingPlan: { name: 'Big' } }], trackingPlans: [{ name: 'Big', rules: bigRules() }] };
    const text = JSON.stringify(config);
    expect(text.length).toBeGreaterThan(2 * 1024 * 1024);
    expect((await send('POST', '/config', text)).status).toBe(200);

    const exported = await (await fetch(`${server.url}/api/config`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
    expect(exported.length).toBeGreaterThan(2 * 1024 * 1024);
    expect((await send('POST', '/config', exported)).status).toBe(200);

    // A plan alone, created and replaced.
    const plan = await send('POST', '/tracking-plans', JSON.stringify({ name: 'Big too', rules: bigRules() }));
    expect(plan.status).toBe(200);
    const id = (plan.body as { id: string }).id;
    expect((await send('PUT', `/tracking-plans/${id}`, JSON.stringify({ name: 'Big too', rules: bigRules().reverse() }))).status).toBe(200);
    expect((await send('POST', '/tracking-plans/import', JSON.stringify({ name: 'Big three', file: { rules: bigRules() } }))).status).toBe(200);

    // Past what a config file may be: refused before it is parsed.
    const huge = JSON.stringify({ sources: [{ name: 'x'.repeat(MAX_CONFIG_BYTES) }] });
    expect(await send('POST', '/config', huge)).toEqual({ status: 413, body: expect.objectContaining({ code: 'too_large' }) });
    // Other operations keep the 2 MB limit.
    expect((await send('POST', '/sources', JSON.stringify({ name: 'x'.repeat(3 * 1024 * 1024) }))).status).toBe(413);
  });
});
