import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlServer } from '../../src/main/server/control-server';
import { invokeOp } from '../../src/main/ipc/ipc-core';
import { api, OP_NAMES } from '../../src/shared/api.contract';
import { MAX_INPUT_DEPTH } from '../../src/shared/nesting';
import { startTestEngine, type TestEngine } from '../helpers/engine';

// Issue 22, item 3: deep nesting in an audience rule, a load template or a config answered 500 (a
// schema recursed until the stack overflowed). Every operation's input is walked for depth, without
// recursion, before any schema sees it: for every route the contract declares, so a new one is
// covered without anyone remembering it. Real sockets, a real SQLite file.

const TOKEN = 'input-depth-token';
const TOO_DEEP = `nested more than ${MAX_INPUT_DEPTH} levels deep`;

let t: TestEngine;
let server: Awaited<ReturnType<typeof startControlServer>>;

beforeAll(async () => {
  t = await startTestEngine({ config: { sources: [{ name: 's', writeKey: 'wk_depth' }] } });
  server = await startControlServer({ engine: t.engine, host: '127.0.0.1', port: 0, token: TOKEN });
});

afterAll(async () => {
  await server?.app.close();
  await t?.stop();
});

/** `levels` arrays inside each other, as JSON text. */
const arrays = (levels: number) => '['.repeat(levels) + '1' + ']'.repeat(levels);
/** An audience rule with `levels` rules inside each other, as JSON text (2 levels each, 1 more for the condition). */
const deepRule = (levels: number) =>
  '{"combine":"and","conditions":['.repeat(levels) + '{"kind":"trait","trait":"plan","op":"exists"}' + ']}'.repeat(levels);

async function send(method: string, path: string, body: string): Promise<{ status: number; json: { error: string; code: string; fields?: { path: string; message: string }[] } }> {
  const res = await fetch(`${server.url}/api${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body,
  });
  return { status: res.status, json: (await res.json()) as never };
}

describe('the routes that answered 500', () => {
  const cases: [string, string, string, string][] = [
    ['createAudience', 'POST', '/audiences', `{"name":"Deep","sourceIds":["x"],"rule":${deepRule(5_000)}}`],
    ['updateAudience', 'PATCH', '/audiences/nope', `{"rule":${deepRule(5_000)}}`],
    ['previewAudience', 'POST', '/audiences/preview', `{"rule":${deepRule(5_000)}}`],
    ['startLoad', 'POST', '/load', `{"rate":1,"total":1,"template":{"type":"track","event":"E","properties":{"p":${arrays(20_000)}}}}`],
    ['importConfig', 'POST', '/config', `{"audiences":[{"name":"Deep","sources":["s"],"rule":${deepRule(5_000)}}]}`],
  ];
  it.each(cases)('%s: 400 naming the field, not 500', async (_op, method, path, body) => {
    const r = await send(method, path, body);
    expect(r.status, JSON.stringify(r.json).slice(0, 300)).toBe(400);
    expect(r.json.code).toBe('invalid_input');
    expect(r.json.fields?.[0].message).toContain(TOO_DEEP);
    expect(r.json.error).toContain(TOO_DEEP);
  });

  it('the field path names where it is, at most 6 keys down', async () => {
    const r = await send('POST', '/config', `{"audiences":[{"name":"Deep","sources":["s"],"rule":${deepRule(5_000)}}]}`);
    expect(r.json.fields?.[0].path).toBe('audiences[0].rule.conditions[0].conditions');
    const load = await send('POST', '/load', `{"rate":1,"total":1,"template":{"type":"track","properties":{"p":${arrays(20_000)}}}}`);
    expect(load.json.fields?.[0].path).toBe('template.properties.p[0][0][0]');
  });

  it(`the limit is ${MAX_INPUT_DEPTH} levels, the body itself level 1: ${MAX_INPUT_DEPTH} pass the check, ${MAX_INPUT_DEPTH + 1} do not`, async () => {
    // {"zz": arrays(n)} nests n + 1 levels; the unknown key is then refused by the schema, not for depth.
    const at = await send('POST', '/audiences/preview', `{"zz":${arrays(MAX_INPUT_DEPTH - 1)}}`);
    expect([at.status, at.json.fields]).toEqual([400, [{ path: 'zz', message: 'unknown key' }]]);
    const past = await send('POST', '/audiences/preview', `{"zz":${arrays(MAX_INPUT_DEPTH)}}`);
    expect(past.status).toBe(400);
    expect(past.json.fields?.[0]).toMatchObject({ path: 'zz[0][0][0][0][0]', message: expect.stringContaining(TOO_DEEP) });
    // A rule as deep as the limit allows is evaluated: (72 - 2) / 2 = 35 rules inside each other.
    const deepest = await send('POST', '/audiences/preview', `{"rule":${deepRule((MAX_INPUT_DEPTH - 2) / 2)}}`);
    expect([deepest.status, deepest.json]).toEqual([200, { members: [], total: 0 }]);
  });
});

describe('every operation of the contract', () => {
  const withBody = OP_NAMES.filter((name) => api[name].method !== 'GET');
  const pathOf = (name: (typeof OP_NAMES)[number]) => api[name].path.replace(/:[a-zA-Z]+/g, 'x');
  const keysOf = (name: (typeof OP_NAMES)[number]): string[] => {
    const shape = (api[name].input as unknown as { shape?: Record<string, unknown> }).shape;
    return [...Object.keys(shape ?? {}), 'zz_unknown'];
  };

  it('answers 400 for 100,000 levels under any field, or as the whole body, over HTTP and IPC', async () => {
    expect(withBody.length).toBeGreaterThan(20);
    const deep = arrays(100_000);
    for (const name of withBody) {
      for (const key of keysOf(name)) {
        const r = await send(api[name].method, pathOf(name), `{"${key}":${deep}}`);
        expect([name, key, r.status, r.json.code, r.json.fields?.[0].path.split('[')[0]]).toEqual([name, key, 400, 'invalid_input', key]);
        expect(r.json.error).toContain(TOO_DEEP);
      }
      const whole = await send(api[name].method, pathOf(name), deep);
      expect([name, whole.status, whole.json.error]).toEqual([name, 400, expect.stringContaining(TOO_DEEP)]);
      const ipc = await invokeOp(t.engine.handlers, name, JSON.parse(`{"${keysOf(name)[0]}":${deep}}`));
      expect([name, ipc]).toMatchObject([name, { ok: false, status: 400, code: 'invalid_input', error: expect.stringContaining(TOO_DEEP) }]);
    }
  });
});
