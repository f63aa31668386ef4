import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { OP_NAMES, type ApiHandlers } from '../../src/shared/api.contract';
import { ValidationError } from '../../src/shared/validation-error';
import { conflict, HttpError, notFound } from '../../src/main/engine/errors';
import { createEventForwarder, errorResult, invokeOp, isOpName, isTrustedSender } from '../../src/main/ipc/ipc-core';
import { registerIpcHandlers } from '../../src/main/ipc/ipc-register';
import type { EngineEvent } from '../../src/shared/api.contract';

// Handlers that record what they were called with: the adapter's job is what reaches them and what
// comes back, so these stand in for the engine only at that seam.
function recordingHandlers(overrides: Partial<Record<string, (input: unknown) => unknown>> = {}) {
  const calls: { name: string; input: unknown }[] = [];
  const handlers = Object.fromEntries(
    OP_NAMES.map((name) => [
      name,
      async (input: unknown) => {
        calls.push({ name, input });
        return overrides[name] ? overrides[name]!(input) : { echoed: input };
      },
    ]),
  ) as unknown as ApiHandlers;
  return { handlers, calls };
}

describe('invokeOp', () => {
  it('passes the parsed (coerced, defaulted) input to the handler and wraps the value', async () => {
    const { handlers, calls } = recordingHandlers();
    const r = await invokeOp(handlers, 'listMessages', { before: '42', status: 'failed' });
    expect(r).toEqual({ ok: true, value: { echoed: { before: 42, status: 'failed', limit: 100 } } });
    expect(calls).toEqual([{ name: 'listMessages', input: { before: 42, status: 'failed', limit: 100 } }]);
  });

  it('treats a missing payload as an empty object', async () => {
    const { handlers } = recordingHandlers();
    expect(await invokeOp(handlers, 'health', undefined)).toEqual({ ok: true, value: { echoed: {} } });
  });

  it('refuses invalid input with 400 and field paths, without calling the handler', async () => {
    const { handlers, calls } = recordingHandlers();
    const r = await invokeOp(handlers, 'listMessages', { limit: 501, colour: 'red' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.status).toBe(400);
    expect(r.code).toBe('invalid_input');
    expect(r.fields.map((f) => f.path).sort()).toEqual(['colour', 'limit']);
    expect(r.error).toContain('limit:');
    expect(calls).toEqual([]);
  });

  it('refuses names outside the contract, including prototype keys', async () => {
    const { handlers, calls } = recordingHandlers();
    for (const name of ['dropDatabase', 'constructor', '__proto__', 42, undefined]) {
      const r = await invokeOp(handlers, name, {});
      expect(r).toMatchObject({ ok: false, status: 404, code: 'not_found' });
    }
    expect(calls).toEqual([]);
    expect(isOpName('getMessage')).toBe(true);
    expect(isOpName('toString')).toBe(false);
  });

  it('turns thrown errors into plain results: ValidationError keeps fields, HttpError-like keeps status, others are 500 internal', async () => {
    const { handlers } = recordingHandlers({
      updateSource: () => {
        throw new ValidationError([{ path: 'webhooks.urls[0].url', message: 'must be http or https' }]);
      },
      getMessage: () => {
        throw Object.assign(new Error('not found: message 7'), { status: 404 });
      },
      health: () => {
        throw new TypeError('boom');
      },
      clientFlush: () => Promise.reject('a string'),
    });
    expect(await invokeOp(handlers, 'updateSource', { id: 's1' })).toEqual({
      ok: false,
      status: 400,
      code: 'invalid_input',
      error: 'webhooks.urls[0].url: must be http or https',
      fields: [{ path: 'webhooks.urls[0].url', message: 'must be http or https' }],
    });
    expect(await invokeOp(handlers, 'getMessage', { id: 7 })).toEqual({ ok: false, status: 404, code: 'not_found', error: 'not found: message 7', fields: [] });
    expect(await invokeOp(handlers, 'health', {})).toEqual({ ok: false, status: 500, code: 'internal', error: 'boom', fields: [] });
    expect(await invokeOp(handlers, 'clientFlush', {})).toEqual({ ok: false, status: 500, code: 'internal', error: 'a string', fields: [] });
  });

  it("keeps the engine's own code, and never takes a foreign one (Node's, Fastify's) for ours", () => {
    expect(errorResult(notFound('source s1'))).toEqual({ ok: false, status: 404, code: 'not_found', error: 'not found: source s1', fields: [] });
    expect(errorResult(conflict('name: taken'))).toMatchObject({ status: 409, code: 'conflict' });
    expect(errorResult(new HttpError(429, 'queue full'))).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(errorResult(Object.assign(new Error('no file'), { code: 'ENOENT' }))).toMatchObject({ status: 500, code: 'internal' });
    expect(errorResult(Object.assign(new Error('bad media type'), { code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', statusCode: 415 }))).toMatchObject({ status: 415, code: 'invalid_input' });
    // A code that contradicts the status is not trusted: the status decides.
    expect(errorResult(Object.assign(new Error('odd'), { status: 404, code: 'conflict' }))).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('does not trust a status outside 4xx/5xx', () => {
    expect(errorResult(Object.assign(new Error('weird'), { status: 200 }))).toMatchObject({ status: 500, code: 'internal' });
    expect(errorResult(Object.assign(new Error('teapot'), { status: 418 }))).toMatchObject({ status: 418, code: 'invalid_input' });
  });
});

describe('isTrustedSender', () => {
  const indexFile = resolve('/opt/webhook lab/out/renderer/index.html');
  const own = pathToFileURL(indexFile).href;

  it('accepts the top-level frame of the app page, with any query or hash', () => {
    expect(isTrustedSender({ url: own, topLevel: true }, { indexFile })).toBe(true);
    expect(isTrustedSender({ url: `${own}#/inspect?id=3`, topLevel: true }, { indexFile })).toBe(true);
    expect(isTrustedSender({ url: `${own}?x=1`, topLevel: true }, { indexFile })).toBe(true);
  });

  it('refuses subframes, destroyed frames, other files and other origins', () => {
    expect(isTrustedSender({ url: own, topLevel: false }, { indexFile })).toBe(false);
    expect(isTrustedSender({ url: undefined, topLevel: true }, { indexFile })).toBe(false);
    expect(isTrustedSender({ url: pathToFileURL(join(indexFile, '../other.html')).href, topLevel: true }, { indexFile })).toBe(false);
    expect(isTrustedSender({ url: pathToFileURL('/tmp/evil/index.html').href, topLevel: true }, { indexFile })).toBe(false);
    expect(isTrustedSender({ url: 'https://example.com/', topLevel: true }, { indexFile })).toBe(false);
    expect(isTrustedSender({ url: 'not a url', topLevel: true }, { indexFile })).toBe(false);
    expect(isTrustedSender({ url: 'about:blank', topLevel: true }, { indexFile })).toBe(false);
  });

  it('accepts the dev server origin only while one is configured', () => {
    const devServerUrl = 'http://localhost:5173';
    expect(isTrustedSender({ url: 'http://localhost:5173/#/x', topLevel: true }, { indexFile, devServerUrl })).toBe(true);
    expect(isTrustedSender({ url: 'http://localhost:5174/', topLevel: true }, { indexFile, devServerUrl })).toBe(false);
    expect(isTrustedSender({ url: 'http://localhost:5173/', topLevel: true }, { indexFile })).toBe(false);
  });
});

describe('registerIpcHandlers', () => {
  // A minimal ipcMain: Electron's own cannot load under Node; this checks the channel table and the sender gate.
  function fakeIpcMain() {
    const table = new Map<string, (event: unknown, payload: unknown) => unknown>();
    return {
      table,
      handle: (channel: string, fn: (event: unknown, payload: unknown) => unknown) => {
        if (table.has(channel)) throw new Error(`second handler for ${channel}`);
        table.set(channel, fn);
      },
      removeHandler: (channel: string) => void table.delete(channel),
    };
  }
  const indexFile = resolve('/app/out/renderer/index.html');
  const frame = (url: string, parent: unknown = null) => ({ senderFrame: { url, parent } });

  it('registers one api:<op> channel per contract op, gates on the sender and unregisters', async () => {
    const ipc = fakeIpcMain();
    const { handlers, calls } = recordingHandlers();
    const refused: string[] = [];
    const dispose = registerIpcHandlers(ipc as never, handlers, { indexFile }, (l) => refused.push(l));
    expect([...ipc.table.keys()].sort()).toEqual(OP_NAMES.map((n) => `api:${n}`).sort());

    const handler = ipc.table.get('api:getSettings')!;
    expect(await handler(frame(pathToFileURL(indexFile).href), {})).toEqual({ ok: true, value: { echoed: {} } });
    expect(await handler(frame('https://attacker.example/'), {})).toMatchObject({ ok: false, status: 403, code: 'forbidden' });
    expect(await handler(frame(pathToFileURL(indexFile).href, {}), {})).toMatchObject({ ok: false, status: 403, code: 'forbidden' });
    expect(await handler({ senderFrame: null }, {})).toMatchObject({ ok: false, status: 403, code: 'forbidden' });
    expect(calls).toHaveLength(1);
    expect(refused).toHaveLength(3);

    dispose();
    expect(ipc.table.size).toBe(0);
  });

  it('adds the export-to-file channel when given one, behind the same sender gate', async () => {
    const ipc = fakeIpcMain();
    const { handlers } = recordingHandlers();
    const opened: unknown[] = [];
    const open = (input: unknown) => {
      opened.push(input);
      return { filename: 'x.jsonl', contentType: 'application/x-ndjson', chunks: (async function* () {})() };
    };
    const dispose = registerIpcHandlers(ipc as never, handlers, { indexFile }, () => {}, { open, choosePath: async () => null });
    const handler = ipc.table.get('export:save')!;
    expect(await handler(frame('https://attacker.example/'), { format: 'jsonl' })).toMatchObject({ ok: false, status: 403, code: 'forbidden' });
    expect(opened).toEqual([]);
    expect(await handler(frame(pathToFileURL(indexFile).href), { format: 'jsonl' })).toEqual({ ok: true, value: { saved: false } });
    expect(opened).toHaveLength(1);
    dispose();
    expect(ipc.table.size).toBe(0);
  });
});

describe('createEventForwarder', () => {
  const ev = (n: number): EngineEvent => ({ type: 'attempt.recorded', callId: n, attempt: {} as never, delivery: {} as never });
  // Fake time (Date.now and setTimeout): in real time a busy machine could pass the interval
  // between two pushes, and a wait proves nothing about what a timer will do later.
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('sends the first batch at once and coalesces a burst into one message', async () => {
    const sent: EngineEvent[][] = [];
    const f = createEventForwarder((b) => sent.push(b), 40);
    f.push([ev(1)]);
    expect(sent).toEqual([[ev(1)]]);
    for (let i = 2; i <= 50; i++) f.push([ev(i)]);
    f.push([]);
    expect(sent).toHaveLength(1);
    vi.advanceTimersByTime(39);
    expect(sent).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(sent).toHaveLength(2);
    expect(sent[1].map((e) => (e as { callId: number }).callId)).toEqual(Array.from({ length: 49 }, (_, i) => i + 2));
  });

  it('drops pending events after dispose', async () => {
    const sent: EngineEvent[][] = [];
    const f = createEventForwarder((b) => sent.push(b), 30);
    f.push([ev(1)]);
    f.push([ev(2)]);
    f.dispose();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(60);
    expect(sent).toEqual([[ev(1)]]);
  });
});
