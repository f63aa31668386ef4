import { randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { startControlServer } from '../../src/main/server/control-server';
import { invokeOp } from '../../src/main/ipc/ipc-core';
import { api as contract, type ApiErrorBody, type OpName } from '../../src/shared/api.contract';
import { API_PREFIX } from '../../src/shared/http-mapping';
import type { ErrorCode } from '../../src/shared/error-codes';
import type { CallSummary, Page, Source } from '../../src/shared/types';
import { startTestEngine, waitFor, type TestEngine } from '../helpers/engine';

// The same failure, asked for over the control API and over IPC, against one engine: both answers
// must carry the same status, code and message, since both come from errorAnswer (engine/errors.ts).

const TOKEN = 'error-codes-test-token';
let te: TestEngine;
let server: { app: FastifyInstance; url: string };
let agent: Agent;
let source: Source;

/** An operation over HTTP the way the renderer's HTTP transport sends it: path params in the path, the rest as query or JSON. */
async function overHttp(name: string, input: Record<string, unknown>): Promise<{ status: number; body: ApiErrorBody }> {
  const def = (contract as Record<string, { method: string; path: string } | undefined>)[name] ?? { method: 'GET', path: `/${name}` };
  const rest = { ...input };
  const path = def.path.replace(/:(\w+)/g, (_m, key: string) => {
    const v = rest[key];
    delete rest[key];
    return encodeURIComponent(String(v));
  });
  const get = def.method === 'GET' || def.method === 'DELETE';
  const qs = get && Object.keys(rest).length ? `?${new URLSearchParams(Object.entries(rest).map(([k, v]) => [k, String(v)]))}` : '';
  const res = await request(`${server.url}${API_PREFIX}${path}${qs}`, {
    method: def.method as 'GET',
    headers: { authorization: `Bearer ${TOKEN}`, ...(get ? {} : { 'content-type': 'application/json' }) },
    body: get ? undefined : JSON.stringify(rest),
    dispatcher: agent,
  });
  return { status: res.statusCode, body: (await res.body.json()) as ApiErrorBody };
}

async function bothWays(name: string, input: Record<string, unknown>) {
  const http = await overHttp(name, input);
  const ipc = await invokeOp(te.engine.handlers, name as OpName, input);
  if (ipc.ok) throw new Error(`${name} succeeded over IPC`);
  return { http, ipc };
}

beforeAll(async () => {
  te = await startTestEngine();
  server = await startControlServer({ engine: te.engine, host: '127.0.0.1', port: 0, token: TOKEN });
  agent = new Agent();
  const r = await invokeOp(te.engine.handlers, 'createSource', { name: 'taken' });
  if (!r.ok) throw new Error(r.error);
  source = r.value as Source;
});

afterAll(async () => {
  await agent?.close();
  await server?.app.close();
  await te?.stop();
});

describe('an error answered over HTTP and over IPC', () => {
  const cases: [string, string, () => Record<string, unknown>, ErrorCode, number][] = [
    ['a message that does not exist', 'getMessage', () => ({ id: 987654 }), 'not_found', 404],
    ['a source that does not exist', 'deleteSource', () => ({ id: 'no-such-source' }), 'not_found', 404],
    ['a name already taken', 'createSource', () => ({ name: 'taken' }), 'conflict', 409],
    ['input its schema refuses', 'listMessages', () => ({ limit: 0 }), 'invalid_input', 400],
    ['a client setting naming a missing source', 'clientUpdateSettings', () => ({ sourceId: 'no-such-source' }), 'not_found', 404],
    ['an operation that does not exist', 'dropEverything', () => ({}), 'not_found', 404],
  ];

  it.each(cases)('carries the same code: %s', async (_what, name, input, code, status) => {
    const { http, ipc } = await bothWays(name, input());
    expect(http.status).toBe(status);
    expect(http.body.code).toBe(code);
    expect({ status: ipc.status, code: ipc.code }).toEqual({ status, code });
    // Unknown operations are refused before the contract is consulted, with wording of each transport's own.
    if (name !== 'dropEverything') {
      expect(ipc.error).toBe(http.body.error);
      expect(ipc.fields).toEqual(http.body.fields ?? []);
    }
  });

  it('carries the same code for a state the engine refuses: replaying a dropped call', async () => {
    const messageId = randomUUID();
    // A track call without an event is stored as dropped (SPEC §3), so there is nothing to replay.
    expect((await te.post('/v1/track', { userId: 'u1', messageId }, { writeKey: source.writeKey })).status).toBe(200);
    const dropped = await waitFor(async () => {
      const r = await invokeOp(te.engine.handlers, 'listMessages', { q: messageId });
      return r.ok ? (r.value as Page<CallSummary>).items[0] : undefined;
    }, 'the dropped call');
    const { http, ipc } = await bothWays('replayMessage', { id: dropped.id });
    expect(http).toMatchObject({ status: 409, body: { code: 'conflict' } });
    expect({ status: ipc.status, code: ipc.code, error: ipc.error }).toEqual({ status: 409, code: 'conflict', error: http.body.error });
  });

  it("gives Fastify's own refusals a code from their status (a body over the limit, broken JSON)", async () => {
    const send = async (body: string) => {
      const res = await request(`${server.url}${API_PREFIX}/sources`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body,
        dispatcher: agent,
      });
      return { status: res.statusCode, code: ((await res.body.json()) as ApiErrorBody).code };
    };
    expect(await send(JSON.stringify({ name: 'x'.repeat(3 * 1024 * 1024) }))).toEqual({ status: 413, code: 'too_large' });
    expect(await send('{"name":')).toEqual({ status: 400, code: 'invalid_input' });
    // A prototype key is named (it was "Body is not valid JSON"), on any route.
    const res = await request(`${server.url}${API_PREFIX}/sources`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: '{"name":"x","webhooks":{"urls":[{"url":"http://127.0.0.1:9/h","headers":{"__proto__":{"X-Evil":"1"}}}]}}',
      dispatcher: agent,
    });
    expect(res.statusCode).toBe(400);
    expect(((await res.body.json()) as ApiErrorBody).fields).toEqual([
      { path: 'webhooks.urls[0].headers.__proto__', message: 'key "__proto__" is not accepted (line 1): JavaScript reads it as an object\'s prototype, so it would be lost' },
    ]);
  });

  it('answers the control API guard with codes too', async () => {
    const res = await request(`${server.url}${API_PREFIX}/health`, { dispatcher: agent });
    expect(res.statusCode).toBe(401);
    expect(((await res.body.json()) as ApiErrorBody).code).toBe('unauthorized');
  });
});
