import { describe, expect, it } from 'vitest';
import { droppedKeyWarnings } from '../../src/main/load-config';
import { testLab } from '../helpers/test-lab';

// Issue 37, item 5 and its rule: the lab refuses a mapping only where Segment's own code refuses it.
// Header names that differ only in case, a `__proto__` key in data, a `not` and single quotes in a
// trigger are all taken by Segment: the lab takes them, sends what Segment sends (one header with both
// values, the key dropped, the trigger read as Segment's parser reads it) and warns that it did.
const lab = testLab();
const TOKEN = 'lab-checks-token';

describe("the lab's own checks are warnings", () => {
  it('a config with case-twin headers, a __proto__ in data and a "not" trigger is applied with warnings, and sends what Segment sends', async () => {
    const receiver = await lab.receiver();
    const t = await lab.start({});
    const api = await lab.controlServer(t, TOKEN);
    // Written as text: JSON.parse keeps "__proto__" as a key, as a posted body does.
    const body = `{"sources":[{"name":"twins","writeKey":"wk_twins","webhooks":{"enabled":true,"mode":"actions","urls":[],"mappings":[
      {"name":"m","trigger":"not (type = \\"identify\\")","url":"${receiver.url}/t","method":"POST","headers":{"X-Dup":"one","Other":"o","x-dup":"two"},
       "data":{"e":{"@path":"$.event"},"__proto__":{"@path":"$.userId"},"nested":{"__proto__":1,"k":2}}}]}}]}`;
    const res = await fetch(`${api.url}/api/config`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body });
    const answer = (await res.json()) as { warnings: { path: string; code: string; message: string }[] };
    expect(res.status, JSON.stringify(answer)).toBe(200);
    const at = 'sources[0].webhooks.mappings[0]';
    expect(answer.warnings.map((w) => [w.code, w.path])).toEqual(
      expect.arrayContaining([
        ['trigger_reads_otherwise', `${at}.trigger`],
        ['headers_joined', `${at}.headers`],
        ['key_dropped', `${at}.data.__proto__`],
        ['key_dropped', `${at}.data.nested.__proto__`],
      ]),
    );
    expect(answer.warnings.find((w) => w.code === 'trigger_reads_otherwise')!.message).toMatch(/"not" is dropped.*reads it as: type = "identify" \(the lab's own check/);
    // Segment drops the `not`: an identify matches, a track does not.
    await t.post('/v1/track', { userId: 'u-1', event: 'Skipped' }, { writeKey: 'wk_twins' });
    await t.post('/v1/identify', { userId: 'u-1' }, { writeKey: 'wk_twins' });
    const [got] = await receiver.waitForRequests(1);
    expect(got.headers['x-dup']).toBe('one, two');
    expect(got.headers.other).toBe('o');
    expect(got.body.toString()).toBe('{"nested":{"k":2}}');
    // A __proto__ anywhere else is still refused, naming it.
    const elsewhere = await fetch(`${api.url}/api/config`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: '{"sources":[{"name":"p","writeKey":"wk_p","__proto__":{}}]}',
    });
    expect(elsewhere.status).toBe(400);
    expect(JSON.stringify(await elsewhere.json())).toMatch(/sources\[0\]\.__proto__/);
    expect(receiver.requests).toHaveLength(1);
  });

  it('a config file names the dropped keys by path and line', () => {
    const text = '{"sources":[{"name":"f","webhooks":{"mappings":[{"name":"m","url":"https://r.example/","data":{\n"__proto__":1}}]}}]}';
    expect(droppedKeyWarnings(text)).toEqual([
      { path: 'sources[0].webhooks.mappings[0].data.__proto__', code: 'key_dropped', message: `key "__proto__" is dropped (line 2): Segment's mapping kit drops it from what it sends, and so does the lab` },
    ]);
    expect(droppedKeyWarnings('{"__proto__":1}')).toEqual([]);
  });
});
