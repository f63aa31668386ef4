import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { startControlServer } from '../../src/main/server/control-server';
import type { ApiErrorBody } from '../../src/shared/api.contract';
import { startTestEngine, type TestEngine } from '../helpers/engine';

// Issue 22, item 7: what a receiver URL and its headers may be, refused over the control API when
// the source is created, updated or imported, naming the field — never accepted and then failing
// every delivery.

const TOKEN = 'receiver-url-settings-token';
let te: TestEngine;
let server: { app: FastifyInstance; url: string };

beforeAll(async () => {
  te = await startTestEngine();
  server = await startControlServer({ engine: te.engine, host: '127.0.0.1', port: 0, token: TOKEN });
});
afterAll(async () => {
  await server?.app.close();
  await te?.stop();
});

async function send(method: string, path: string, body: unknown): Promise<{ status: number; body: ApiErrorBody }> {
  const res = await fetch(`${server.url}/api${path}`, { method, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as ApiErrorBody };
}

const longUrl = (n: number) => `http://127.0.0.1:9/hook?pad=${'a'.repeat(n - 'http://127.0.0.1:9/hook?pad='.length)}`;
const mapping = (over: Record<string, unknown>) => ({ name: 'orders', url: 'http://127.0.0.1:9/a', ...over });

describe('receiver URL headers and length, refused at config time', () => {
  it.each(['Expect', 'Upgrade', 'Keep-Alive', 'Proxy-Connection', 'TE', 'Trailer'])('a Classic URL with header %s: 400 naming the field', async (name) => {
    const r = await send('POST', '/sources', { name: `s-${name}`, webhooks: { enabled: true, urls: [{ url: 'http://127.0.0.1:9/hook', headers: { [name]: 'x' } }] } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_input');
    expect(r.body.fields).toEqual([{ path: `webhooks.urls[0].headers.${name}`, message: `header "${name}" is hop-by-hop (it governs one connection, not the request) and cannot be set` }]);
  });

  it('an Actions mapping with a hop-by-hop header: 400 naming the field, and the source is unchanged', async () => {
    const created = await send('POST', '/sources', { name: 'mapped' });
    const id = (created.body as unknown as { id: string }).id;
    const r = await send('PATCH', `/sources/${id}`, { webhooks: { enabled: true, mode: 'actions', mappings: [mapping({ headers: { 'keep-alive': 'timeout=5' } })] } });
    expect(r.status).toBe(400);
    expect(r.body.fields?.[0].path).toBe('webhooks.mappings[0].headers.keep-alive');
    const sources = (await (await fetch(`${server.url}/api/sources`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { id: string; webhooks: { enabled: boolean } }[];
    expect(sources.find((s) => s.id === id)?.webhooks.enabled).toBe(false);
  });

  it('a URL over 2048 characters: 400 naming the field (Classic, Actions, config import); 2048 is accepted', async () => {
    const classic = await send('POST', '/sources', { name: 'long', webhooks: { enabled: true, urls: [{ url: longUrl(2049) }] } });
    expect(classic.status).toBe(400);
    expect(classic.body.fields).toEqual([{ path: 'webhooks.urls[0].url', message: 'at most 2048 characters (2 KB); this one has 2049' }]);

    const actions = await send('POST', '/sources', { name: 'long-a', webhooks: { enabled: true, mode: 'actions', mappings: [mapping({ url: longUrl(300 * 1024) })] } });
    expect(actions.status).toBe(400);
    expect(actions.body.fields).toEqual([{ path: 'webhooks.mappings[0].url', message: `at most 2048 characters (2 KB); this one has ${300 * 1024}` }]);

    const imported = await send('POST', '/config', { sources: [{ name: 'imp', webhooks: { enabled: true, urls: [{ url: longUrl(5000) }] } }] });
    expect(imported.status).toBe(400);
    expect(imported.body.fields?.[0].path).toBe('sources[0].webhooks.urls[0].url');

    const fits = await send('POST', '/sources', { name: 'fits', webhooks: { enabled: true, urls: [{ url: longUrl(2048) }] } });
    expect(fits.status).toBe(200);
  });
});
