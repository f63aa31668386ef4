import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../helpers/engine';

// Issue 22, item 4: the collector is open to any web page (CORS `*`, because analytics.js posts
// cross-origin), so it must tell a caller nothing about sources it did not name by their key.
// Every answer below is read as another origin's page would read it, and none may hold another
// source's write key or name.

const SECRET_KEY = 'wk_team_secret_8a71';
const SECRET_NAME = 'Payments team (prod mirror)';
let t: TestEngine;

beforeAll(async () => {
  t = await startTestEngine({ config: { sources: [{ name: SECRET_NAME, writeKey: SECRET_KEY }, { name: 'other', writeKey: 'wk_other_2b' }] } });
});
afterAll(() => t.stop());

const basic = (key: string) => `Basic ${Buffer.from(`${key}:`).toString('base64')}`;

async function read(path: string, init: RequestInit = {}): Promise<{ status: number; cors: string | null; text: string }> {
  const res = await fetch(t.collectorUrl + path, { ...init, headers: { origin: 'https://evil.example', ...(init.headers as Record<string, string>) } });
  return { status: res.status, cors: res.headers.get('access-control-allow-origin'), text: await res.text() };
}

function expectNoLeak(text: string): void {
  expect(text).not.toContain(SECRET_KEY);
  expect(text).not.toContain(SECRET_NAME);
  expect(text).not.toContain('wk_other_2b');
  expect(text).not.toMatch(/"other"|\bother\b \(|use one of/);
}

describe('what a page on another origin can read from the collector', () => {
  it('an unknown key on the settings route gets a plain 404, listing no source', async () => {
    for (const key of ['nope', 'wk_team', SECRET_KEY.slice(0, -1), '%2A', 'x'.repeat(90)]) {
      const r = await read(`/v1/projects/${key}/settings`);
      expect(r.status).toBe(404);
      expect(r.cors).toBe('*');
      expect(JSON.parse(r.text)).toEqual({ success: false, message: 'no source has this write key' });
      expectNoLeak(r.text);
    }
  });

  it('the settings of a key it names are still served (that key only)', async () => {
    const r = await read(`/v1/projects/wk_other_2b/settings`);
    expect(r.status).toBe(200);
    expect(r.text).toContain('wk_other_2b');
    expect(r.text).not.toContain(SECRET_KEY);
    expect(r.text).not.toContain(SECRET_NAME);
  });

  it('no other answer names a source: calls with unknown, missing or bad keys, other routes, errors', async () => {
    const answers = await Promise.all([
      read('/v1/track', { method: 'POST', body: JSON.stringify({ userId: 'u', event: 'e' }), headers: { authorization: basic('wk_unknown') } }),
      read('/v1/track', { method: 'POST', body: JSON.stringify({ userId: 'u', event: 'e', writeKey: 'wk_unknown' }) }),
      read('/v1/track', { method: 'POST', body: JSON.stringify({ userId: 'u', event: 'e' }) }),
      read('/v1/batch', { method: 'POST', body: '{"batch": 1, "writeKey": "wk_unknown"}' }),
      read('/v1/batch', { method: 'POST', body: 'not json' }),
      read('/v1/projects/wk_unknown/settings', { method: 'POST' }),
      read('/analytics.js/v1/wk_unknown/analytics.min.js'),
      read('/analytics-next/bundles/nope.js'),
      read('/v1/m', { method: 'POST', body: '{}' }),
      read('/'),
      read('/nothing/here'),
    ]);
    for (const r of answers) expectNoLeak(r.text);
    // The unknown key is answered as any call is (SPEC §3): 200, stored as dropped, nothing said.
    expect(answers[0].status).toBe(200);
    expect(answers[0].text).toBe('{"success":true}');
  });

  it('strict mode answers an unknown key 401 without naming any source', async () => {
    await t.call('updateSettings', { strict: true });
    try {
      const r = await read('/v1/track', { method: 'POST', body: JSON.stringify({ userId: 'u', event: 'e' }), headers: { authorization: basic('wk_unknown') } });
      expect(r.status).toBe(401);
      expect(JSON.parse(r.text)).toMatchObject({ success: false, message: expect.stringMatching(/unknown write key/) });
      expectNoLeak(r.text);
    } finally {
      await t.call('updateSettings', { strict: false });
    }
  });
});
