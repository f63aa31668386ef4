import { afterEach, describe, expect, it } from 'vitest';
import { startControlServer } from '../../src/main/server/control-server';
import { startTestEngine, waitFor, type TestEngine } from '../helpers/engine';
import { startReceiver, type TestReceiver } from '../helpers/receiver';
import type { Config, ConfigWarning } from '../../src/shared/config.schema';

// Issue 26: a config exported from one lab and imported into another kept the first lab's mock
// receiver URL (its port), so the second lab's calls silently went to the first lab. A source's URL
// that is one of the lab's mock receivers is exported by name ({"mockReceiver": "hook"}) and resolved
// to the importing lab's own URL; a plain URL on this machine at a port the lab does not listen on is
// applied with a warning. Two labs in one test, each with its own sockets and SQLite file.

const TOKEN = 'two-labs-token';
const started: { stop(): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.stop();
});

async function lab(config?: unknown, log?: (line: string) => void): Promise<TestEngine & { api: string }> {
  const t = await startTestEngine({ config, log });
  started.push(t);
  const control = await startControlServer({ engine: t.engine, host: '127.0.0.1', port: 0, token: TOKEN });
  started.push({ stop: () => control.app.close() });
  return Object.assign(t, { api: control.url });
}

async function api<T>(t: { api: string }, method: string, path: string, body?: unknown): Promise<{ status: number; json: T }> {
  const res = await fetch(`${t.api}/api${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as T };
}

async function receiverRequests(t: TestEngine, name: string): Promise<number> {
  const r = (await t.call('listReceivers', {})).find((x) => x.name === name)!;
  return (await t.call('listReceiverRequests', { id: r.id, limit: 100 })).length;
}

type ImportAnswer = { ok: true; sources: number; warnings: ConfigWarning[] };

describe('config export/import between two labs', () => {
  it("lab B's calls reach B's own mock receiver, not A's; the import answers 200 with what it adjusted and doubts", async () => {
    const a = await lab();
    const own: TestReceiver = await startReceiver();
    started.push({ stop: () => own.close() });
    const hookA = await a.call('createReceiver', { name: 'hook', path: '/hook', secret: 'rs' });
    const shop = await a.call('createSource', { name: 'shop', writeKey: 'wk_shop' });
    await a.call('attachReceiver', { id: hookA.id, sourceId: shop.id });
    // A second URL: the user's own receiver on this machine, given as a URL.
    const attached = (await a.call('listSources', {})).find((s) => s.name === 'shop')!;
    await a.call('updateSource', { id: shop.id, webhooks: { ...attached.webhooks, urls: [...attached.webhooks.urls, { url: `${own.url}/own`, headers: { 'X-Env': 'qa' } }] } });

    const exported = (await api<Config>(a, 'GET', '/config')).json;
    const urls = exported.sources.find((s) => s.name === 'shop')!.webhooks!.urls;
    expect(urls).toEqual([
      { mockReceiver: 'hook', headers: {} },
      { url: `${own.url}/own`, headers: { 'X-Env': 'qa' } },
    ]);

    const b = await lab();
    const imported = await api<ImportAnswer>(b, 'POST', '/config', exported);
    expect(imported.status).toBe(200);
    const hookB = (await b.call('listReceivers', {})).find((r) => r.name === 'hook')!;
    expect(hookB.url).not.toBe(hookA.url);
    expect(imported.json.warnings).toEqual([
      { path: 'sources[0].webhooks.urls[0].mockReceiver', code: 'mock_receiver_resolved', message: `mock receiver "hook" is ${hookB.url} in this lab` },
      expect.objectContaining({ path: 'sources[0].webhooks.urls[1].url', code: 'loopback_port_not_owned' }),
    ]);
    expect(imported.json.warnings[1].message).toContain(`port ${new URL(own.url).port}, which this lab does not listen on (collector ${new URL(b.collectorUrl).port}, control API ${new URL(b.api).port}, mock receivers `);
    const shopB = (await b.call('listSources', {})).find((s) => s.name === 'shop')!;
    expect(shopB.webhooks.urls.map((u) => u.url)).toEqual([hookB.url, `${own.url}/own`]);

    // A call to B goes to B's receiver (and the user's own), never to A's.
    expect((await b.post('/v1/track', { userId: 'u1', event: 'Two Labs' }, { writeKey: 'wk_shop' })).status).toBe(200);
    await waitFor(async () => (await receiverRequests(b, 'hook')) === 1, "B's receiver to get the call");
    await waitFor(() => own.requests.length === 1, 'the own receiver to get the call');
    expect(await receiverRequests(a, 'hook')).toBe(0);
    const [req] = await b.call('listReceiverRequests', { id: hookB.id, limit: 10 });
    expect(req.signature.state).toBe('valid');

    // Exported again from B, the receiver is still written by name: the round trip is stable.
    const again = (await api<Config>(b, 'GET', '/config')).json;
    expect(again.sources.find((s) => s.name === 'shop')!.webhooks!.urls[0]).toEqual({ mockReceiver: 'hook', headers: {} });
    // Imported into A again, nothing changes there: the name is A's own receiver.
    const back = await api<ImportAnswer>(a, 'POST', '/config', again);
    expect(back.status).toBe(200);
    expect((await a.call('listSources', {})).find((s) => s.name === 'shop')!.webhooks.urls[0].url).toBe(hookA.url);
  });

  it("an older export's plain URL at the other lab's receiver port is applied with a warning naming this lab's receiver of that path", async () => {
    const a = await lab({ mockReceivers: [{ name: 'hook', path: '/hook' }] });
    const hookA = (await a.call('listReceivers', {}))[0];
    const b = await lab({ mockReceivers: [{ name: 'hook', path: '/hook' }] });
    const r = await api<ImportAnswer>(b, 'POST', '/config', {
      sources: [{ name: 'old', writeKey: 'wk_old', webhooks: { enabled: true, urls: [{ url: hookA.url }], mode: 'both', mappings: [{ name: 'm', url: hookA.url }] } }],
    });
    expect(r.status).toBe(200);
    expect(r.json.warnings.map((w) => [w.path, w.code])).toEqual([
      ['sources[0].webhooks.urls[0].url', 'loopback_port_not_owned'],
      ['sources[0].webhooks.mappings[0].url', 'loopback_port_not_owned'],
    ]);
    expect(r.json.warnings[0].message).toContain(`write {"mockReceiver": "hook"} instead of url`);
    // Applied as given (a warning, not a refusal).
    expect((await b.call('listSources', {})).find((s) => s.name === 'old')!.webhooks.urls[0].url).toBe(hookA.url);
    // URLs at this lab's own ports, and other hosts, are not doubted.
    const hookB = (await b.call('listReceivers', {}))[0];
    const quiet = await api<ImportAnswer>(b, 'POST', '/config', {
      sources: [{ name: 'fine', webhooks: { enabled: true, urls: [{ url: hookB.url }, { url: `${b.collectorUrl}/v1/track` }, { url: 'https://example.com/hook' }] } }],
    });
    expect(quiet.json.warnings).toEqual([]);
  });

  it('a mapping may name a mock receiver too; a name this lab does not have is refused naming the field, nothing applied', async () => {
    const b = await lab({ mockReceivers: [{ name: 'orders', path: '/orders', tls: true }] });
    const ok = await api<ImportAnswer>(b, 'POST', '/config', {
      sources: [{ name: 'acts', webhooks: { enabled: true, mode: 'actions', mappings: [{ name: 'o', mockReceiver: 'orders', method: 'PUT' }] } }],
    });
    expect(ok.status).toBe(200);
    const orders = (await b.call('listReceivers', {}))[0];
    expect(orders.url.startsWith('https://127.0.0.1:')).toBe(true);
    expect((await b.call('listSources', {})).find((s) => s.name === 'acts')!.webhooks.mappings![0]).toMatchObject({ name: 'o', url: orders.url, method: 'PUT' });
    expect((await api<Config>(b, 'GET', '/config')).json.sources.find((s) => s.name === 'acts')!.webhooks!.mappings![0]).toMatchObject({ name: 'o', mockReceiver: 'orders' });

    const bad = await api<{ code: string; fields: { path: string; message: string }[] }>(b, 'POST', '/config', {
      sources: [{ name: 'new-one', webhooks: { enabled: true, urls: [{ mockReceiver: 'nope' }] } }],
    });
    expect(bad.status).toBe(400);
    expect(bad.json.fields).toEqual([{ path: 'sources[0].webhooks.urls[0].mockReceiver', message: 'no mock receiver named "nope" in this lab or in the file (there are "orders")' }]);
    expect((await b.call('listSources', {})).map((s) => s.name)).not.toContain('new-one');

    const both = await api<{ fields: { path: string; message: string }[] }>(b, 'POST', '/config', {
      sources: [{ name: 'x', webhooks: { urls: [{ url: 'http://example.com/', mockReceiver: 'orders' }, {}] } }],
    });
    expect(both.status).toBe(400);
    expect(both.json.fields.map((f) => f.path)).toEqual(['sources[0].webhooks.urls[0].mockReceiver', 'sources[0].webhooks.urls[1].url']);
  });

  it('a config file at start resolves a name to the receiver it defines, at the ports this start chose, and logs what it did', async () => {
    const log: string[] = [];
    const t = await lab(
      {
        mockReceivers: [{ name: 'hook', path: '/hook' }],
        sources: [{ name: 'shop', writeKey: 'wk_start', webhooks: { enabled: true, urls: [{ mockReceiver: 'hook' }, { url: 'http://127.0.0.1:1/elsewhere' }] } }],
      },
      (l) => log.push(l),
    );
    const hook = (await t.call('listReceivers', {}))[0];
    expect((await t.call('listSources', {}))[0].webhooks.urls.map((u) => u.url)).toEqual([hook.url, 'http://127.0.0.1:1/elsewhere']);
    expect(log).toContain(`config: note: sources[0].webhooks.urls[0].mockReceiver: mock receiver "hook" is ${hook.url} in this lab`);
    expect(log.some((l) => l.startsWith('config: warning: sources[0].webhooks.urls[1].url: http://127.0.0.1:1/elsewhere is on this machine at port 1'))).toBe(true);
    expect((await t.post('/v1/track', { userId: 'u', event: 'E' }, { writeKey: 'wk_start' })).status).toBe(200);
    await waitFor(async () => (await receiverRequests(t, 'hook')) === 1, 'the receiver named in the file to get the call');
  });
});
