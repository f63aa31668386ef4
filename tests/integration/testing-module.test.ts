import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { connectLab, LabApiError, LabTimeoutError, startLab, type Lab } from '../../src/main/testing';
import { ensureBuilt, ROOT, startServe, stopServe, type Serve } from '../helpers/serve';

// `webhook-lab/testing` (docs/testing.md) from its sources: real labs on loopback ports with a real
// SQLite file each, sent to over HTTP as a client would. The built bundle is what the child process
// below and the package test (npm-package.test.ts) load.

const labs: Lab[] = [];
let serve: Serve | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(labs.splice(0).map((l) => l.stop()));
  await stopServe(serve);
  serve = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'wl-testing-serve-'));
  dirs.push(d);
  return d;
}

async function lab(options?: Parameters<typeof startLab>[0]): Promise<Lab> {
  const l = await startLab(options);
  labs.push(l);
  return l;
}

/** POST a call to the collector as a client does (Basic auth with the write key). */
async function send(l: Pick<Lab, 'collectorUrl' | 'writeKey'>, path: string, body: unknown, writeKey = l.writeKey): Promise<number> {
  const res = await fetch(`${l.collectorUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}` },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  return res.status;
}

const order = (total: number, extra: Record<string, unknown> = {}) => ({
  userId: 'u1',
  event: 'Order Completed',
  properties: { total, currency: 'EUR', products: [{ sku: 'a', qty: 1 }, { sku: 'b', qty: 2 }] },
  ...extra,
});

describe('startLab', () => {
  it('starts in well under a second on free ports with a "Test" source, and waitForCall resolves with the call as sent', async () => {
    const t0 = performance.now();
    await (await startLab()).stop();
    const first = performance.now() - t0;
    const t1 = performance.now();
    const l = await lab();
    const next = performance.now() - t1;
    // The first lab of a process also loads the engine's modules and makes the HTTPS receivers' key.
    console.log(`startLab: ready in ${next.toFixed(0)} ms (the first in this process: ${first.toFixed(0)} ms)`);
    // About 60 ms (the first about 500 ms) on a quiet 2-core machine: a figure, printed above, not
    // asserted (machines of this kind differ 3× in speed, issue 44).
    expect(l.collectorUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(l.sources).toEqual([{ id: expect.any(String), name: 'Test', writeKey: l.writeKey }]);
    expect(l.apiUrl).toBeNull();

    const waiting = l.waitForCall({ type: 'track', event: 'Order Completed', properties: { total: 42 } });
    expect(await send(l, '/v1/track', order(42))).toBe(200);
    const call = await waiting;
    // As received, with the route's type (a /v1/track body has none): nothing added but that.
    expect(call).toEqual({ type: 'track', ...order(42) });
    expect(call.properties).toEqual({ total: 42, currency: 'EUR', products: [{ sku: 'a', qty: 1 }, { sku: 'b', qty: 2 }] });

    // A batch: each item as sent; calls() newest last.
    await send(l, '/v1/batch', { batch: [{ type: 'identify', userId: 'u1', traits: { plan: 'pro' } }, { type: 'page', userId: 'u1', name: 'Home' }] });
    await l.waitForCalls({ userId: 'u1' }, { count: 3 });
    expect((await l.calls()).map((c) => c.type)).toEqual(['track', 'identify', 'page']);
    expect(await l.calls({ type: 'identify' })).toEqual([{ type: 'identify', userId: 'u1', traits: { plan: 'pro' } }]);
  });

  it('matches deep partials, arrays item by item, RegExps, predicates and absent keys', async () => {
    const l = await lab();
    await send(l, '/v1/track', order(42, { context: { page: { path: '/checkout' } } }));
    await l.waitForCall({ event: 'Order Completed' });
    const one = async (match: Parameters<Lab['calls']>[0]) => (await l.calls(match)).length;
    expect(await one({ properties: { currency: 'EUR' } })).toBe(1);
    expect(await one({ context: { page: { path: '/checkout' } } })).toBe(1);
    expect(await one({ properties: { total: '42' } })).toBe(0); // no coercion
    expect(await one({ properties: { products: [{ sku: 'a' }, { sku: 'b', qty: 2 }] } })).toBe(1);
    expect(await one({ properties: { products: [{ sku: 'b' }, { sku: 'a' }] } })).toBe(0); // in order
    expect(await one({ properties: { products: [{ sku: 'a' }] } })).toBe(0); // same length
    expect(await one({ event: /^order/i })).toBe(1);
    expect(await one({ properties: { total: (v: unknown) => typeof v === 'number' && v > 40 } })).toBe(1);
    expect(await one((c) => c.userId === 'u1' && (c.properties as { total: number }).total === 42)).toBe(1);
    expect(await one((c) => (c.properties as { missing: { deep: number } }).missing.deep === 1)).toBe(0); // a predicate that throws does not match
    expect(await one({ anonymousId: undefined })).toBe(1);
    expect(await one({ userId: undefined })).toBe(0);
    expect(await one({ type: 'identify' })).toBe(0);
  });

  it('times out with the closest calls seen and how each differs, closest first', async () => {
    const l = await lab();
    await send(l, '/v1/track', { userId: 'u1', event: 'Product Viewed', properties: { total: 42 } });
    await send(l, '/v1/track', order(41));
    await send(l, '/v1/identify', { userId: 'u2', traits: { name: 'Ada' } });
    await l.waitForCalls({}, { count: 3 });

    const started = Date.now();
    const err = await l.waitForCall({ type: 'track', event: 'Order Completed', properties: { total: 42 } }, { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(err).toBeInstanceOf(LabTimeoutError);
    const message = (err as Error).message;
    expect(message).toMatch(/^waitForCall: no calls matched within 300 ms\n/);
    expect(message).toContain("match: { type: 'track', event: 'Order Completed', properties: { total: 42 } }");
    expect(message).toContain('the closest 3 of 3 received:');
    // The right event with a wrong total comes first; the other event next; the identify last.
    const first = message.indexOf('1) track "Order Completed" (userId "u1")');
    const second = message.indexOf('2) track "Product Viewed" (userId "u1")');
    const third = message.indexOf('3) identify (userId "u2")');
    expect(first).toBeGreaterThan(0);
    expect(second).toBeGreaterThan(first);
    expect(third).toBeGreaterThan(second);
    expect(message).toContain('properties.total\n         - expected 42\n         + received 41');
    expect(message).toContain('event\n         - expected \'Order Completed\'\n         + received \'Product Viewed\'');
    expect(message).toContain("type\n         - expected 'track'\n         + received 'identify'");
    expect((err as LabTimeoutError).seen).toBe(3);

    const counted = await l.waitForCalls({ type: 'track' }, { count: 3, timeoutMs: 100 }).catch((e: Error) => e.message);
    expect(counted).toMatch(/^waitForCalls: 2 of 3 calls matched within 100 ms/);

    const predicate = await l.waitForCall(function bigOrder(c) { return (c.properties as { total?: number } | undefined)?.total === 1000; }, { timeoutMs: 50 }).catch((e: Error) => e.message);
    expect(predicate).toContain('match: predicate bigOrder: function bigOrder(c) {');
    expect(predicate).toContain('the newest 3 of 3 received:\n  1) identify (userId "u2")');
    expect(predicate).toContain('- expected predicate bigOrder to return true');
  });

  it('says so when nothing arrived at all, naming the collector and write key', async () => {
    const l = await lab();
    const message = await l.waitForCall({ event: 'Signed Up' }, { timeoutMs: 50 }).catch((e: Error) => e.message);
    expect(message).toContain(`nothing was received at all. Is the app sending to ${l.collectorUrl} with write key ${l.writeKey}?`);
  });

  it('expectNoCall passes after forMs when nothing matches, and rejects as soon as a call matches', async () => {
    const l = await lab();
    await send(l, '/v1/track', order(10));
    const t0 = Date.now();
    await l.expectNoCall({ event: 'Order Refunded' }, { forMs: 200 });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(200);
    // "As soon as": a sentinel at forMs itself, set first, wins if the wait ran out forMs before rejecting.
    const forMs = 10_000;
    let sentinel: NodeJS.Timeout | undefined;
    const forMsPassed = new Promise<string>((r) => (sentinel = setTimeout(() => r(`still waiting after forMs (${forMs} ms)`), forMs)));
    const quiet = l.expectNoCall({ event: 'Order Refunded' }, { forMs }).catch((e: Error) => e.message);
    await send(l, '/v1/track', { userId: 'u1', event: 'Order Refunded' });
    const message = await Promise.race([quiet, forMsPassed]);
    clearTimeout(sentinel);
    expect(message).toMatch(/^expectNoCall: a call matching was received: track "Order Refunded" \(userId "u1"\)/);
    // One received before the wait counts too.
    await expect(l.expectNoCall({ event: 'Order Completed' }, { forMs: 10 })).rejects.toThrow(/a call matching was received/);
  });

  it('reset() forgets the calls and the receivers\' requests; later ones are seen', async () => {
    const l = await lab({ receivers: [{ name: 'orders', path: '/orders' }] });
    await send(l, '/v1/track', order(1));
    await l.waitForCall({ properties: { total: 1 } });
    await l.waitForDelivery({ receiver: 'orders' });
    await l.reset();
    expect(await l.calls()).toEqual([]);
    expect(await l.deliveries()).toEqual([]);
    await expect(l.expectNoCall({ properties: { total: 1 } }, { forMs: 50 })).resolves.toBeUndefined();
    await send(l, '/v1/track', order(2));
    expect((await l.waitForCall({ event: 'Order Completed' })).properties).toMatchObject({ total: 2 });
    expect((await l.waitForDelivery({ body: { properties: { total: 2 } } })).status).toBe(200);
    expect(await l.calls()).toHaveLength(1);
  });

  it('deliveries: what each receiver got, with the status it answered and the signature verdict', async () => {
    const l = await lab({
      sources: [{ name: 'Shop', webhooks: { sharedSecret: 'shop-secret' } }],
      receivers: [
        { name: 'orders', path: '/orders', secret: 'shop-secret' },
        { name: 'strict', path: '/strict', secret: 'another-secret', behavior: { status: 202 } },
      ],
    });
    expect(l.sources.map((s) => s.name)).toEqual(['Shop']);
    await send(l, '/v1/track', order(42));
    const good = await l.waitForDelivery({ receiver: 'orders', body: { type: 'track', event: 'Order Completed', properties: { total: 42 } } });
    expect(good).toMatchObject({ method: 'POST', path: '/orders', status: 200, signature: 'valid', signatureReason: null });
    expect(good.headers['x-signature']).toMatch(/^[0-9a-f]{40}$/);
    const bad = await l.waitForDelivery({ receiver: 'strict' });
    expect(bad).toMatchObject({ status: 202, signature: 'invalid' });
    expect(bad.signatureReason).toEqual(expect.any(String));
    expect(await l.deliveries({ signature: 'valid' })).toHaveLength(1);

    const message = await l.waitForDelivery({ receiver: 'orders', status: 500 }, { timeoutMs: 50 }).catch((e: Error) => e.message);
    expect(message).toMatch(/^waitForDelivery: no deliveries matched within 50 ms/);
    expect(message).toContain('1) POST /orders to receiver "orders" → 200, signature valid');
    expect(message).toContain('status\n         - expected 500\n         + received 200');
  });

  it('a receiver a source names in the config is left to it; one no source names goes to the first source', async () => {
    const l = await lab({
      sources: [{ name: 'First' }, { name: 'Second', webhooks: { enabled: true, urls: [{ mockReceiver: 'named' }] } }],
      receivers: [{ name: 'named', path: '/named' }, { name: 'spare', path: '/spare' }],
      ui: true,
    });
    const [first, second] = l.sources;
    const stored = await fetch(`${l.apiUrl}/sources`, { headers: { authorization: `Bearer ${l.token}` } }).then((r) => r.json() as Promise<{ name: string; webhooks: { urls: { url: string }[] } }[]>);
    const paths = (name: string) => stored.find((s) => s.name === name)!.webhooks.urls.map((u) => new URL(u.url).pathname);
    expect({ First: paths('First'), Second: paths('Second') }).toEqual({ First: ['/spare'], Second: ['/named'] });
    await send(l, '/v1/track', { userId: 'u', event: 'From First' }, first.writeKey);
    await send(l, '/v1/track', { userId: 'u', event: 'From Second' }, second.writeKey);
    await l.waitForDelivery({ receiver: 'named', body: { event: 'From Second' } });
    await l.waitForDelivery({ receiver: 'spare', body: { event: 'From First' } });
    await l.waitForCalls({}, { count: 2 });
    expect((await l.deliveries()).map((d) => [d.receiver, (d.body as { event: string }).event]).sort()).toEqual([
      ['named', 'From Second'],
      ['spare', 'From First'],
    ]);
  });

  it('violations(): the calls a tracking plan found violations in, and refuses when no plan is connected', async () => {
    const l = await lab({
      trackingPlans: [{ name: 'Shop', rules: [{ type: 'TRACK', key: 'Order Completed', jsonSchema: { type: 'object', properties: { properties: { type: 'object', required: ['total'], properties: { total: { type: 'number' } } } } } }] }],
      sources: [{ name: 'Web', trackingPlan: { name: 'Shop', unplannedEvents: 'block' } }],
    });
    await send(l, '/v1/track', order(42));
    await send(l, '/v1/track', { userId: 'u1', event: 'Order Completed', properties: { total: 'lots' } });
    await send(l, '/v1/track', { userId: 'u1', event: 'Checkout Stared' });
    await l.waitForCalls({}, { count: 3 });
    const found = await l.violations();
    expect(found.map((v) => [v.call.event, v.violations.map((x) => [x.kind, x.path]), v.blocked, v.plan])).toEqual([
      ['Order Completed', [['wrong_type', '/properties/total']], null, 'Shop'],
      ['Checkout Stared', [['unplanned_event', '/event']], expect.stringContaining('unplanned event "Checkout Stared"'), 'Shop'],
    ]);
    expect(await l.violations({ call: { event: 'Checkout Stared' } })).toHaveLength(1);

    const plain = await lab();
    await expect(plain.violations()).rejects.toThrow(/violations: no source of this lab is connected to a tracking plan/);
  });

  it('two labs in one process: their own ports, sources and calls', async () => {
    const [a, b] = await Promise.all([lab(), lab()]);
    expect(a.collectorUrl).not.toBe(b.collectorUrl);
    expect(a.writeKey).not.toBe(b.writeKey);
    await send(a, '/v1/track', { userId: 'in-a', event: 'A' });
    await send(b, '/v1/track', { userId: 'in-b', event: 'B' });
    await a.waitForCall({ event: 'A' });
    await b.waitForCall({ event: 'B' });
    expect((await a.calls()).map((c) => c.event)).toEqual(['A']);
    expect((await b.calls()).map((c) => c.event)).toEqual(['B']);
    await a.stop();
    // b keeps running after a stopped.
    await send(b, '/v1/track', { userId: 'in-b', event: 'B2' });
    await b.waitForCall({ event: 'B2' });
  });

  it('strict, timeScale and settings reach the lab as --strict and --time-scale do', async () => {
    const l = await lab({ strict: true, timeScale: 60, settings: { payloadFormat: 'documented' }, ui: true });
    expect(await send(l, '/v1/track', { userId: 'u', event: 'E' }, 'wk_unknown')).toBe(401);
    expect(await send(l, '/v1/track', { userId: 'u', event: 'E' })).toBe(200);
    const settings = await fetch(`${l.apiUrl}/settings`, { headers: { authorization: `Bearer ${l.token}` } }).then((r) => r.json() as Promise<Record<string, unknown>>);
    expect(settings).toMatchObject({ strict: true, timeScale: 60, payloadFormat: 'documented' });
    await l.waitForCall({ event: 'E' });
  });

  it('names the field of bad input', async () => {
    await expect(startLab({ sources: [{ name: '' }] })).rejects.toThrow(/^startLab: sources\[0\]\.name: /);
    await expect(startLab({ receivers: [{ name: 'r', path: 'no-slash' }] })).rejects.toThrow(/^startLab: receivers\[0\]\.path: must start with \//);
    await expect(startLab({ timeScale: -1 } as never)).rejects.toThrow(/^startLab: timeScale: /);
    await expect(startLab({ colour: 'red' } as never)).rejects.toThrow(/^startLab: colour: unknown key/);
    await expect(startLab(null as never)).rejects.toThrow(/^startLab: options: expected an object \(\{ sources, receivers, … \}\) or nothing, got null$/);
    const six = Array.from({ length: 6 }, (_, i) => ({ name: `r${i}`, path: `/r${i}` }));
    await expect(startLab({ receivers: six })).rejects.toThrow(/^startLab: receivers\[5\]: the first source \("Test"\) sends to at most 5 URLs/);
    const l = await lab();
    await expect(l.waitForCall(undefined as never)).rejects.toThrow(/^waitForCall: match: expected a partial object/);
    await expect(l.waitForCall({}, { timeoutMs: -5 })).rejects.toThrow(/^waitForCall: timeoutMs: expected a number of milliseconds/);
    await expect(l.waitForCalls({}, { count: 0 })).rejects.toThrow(/^waitForCalls: count: expected a whole number ≥ 1, got 0/);
  });

  it('stop() leaves no handle open: a process that starts, uses and stops a lab exits by itself', async () => {
    ensureBuilt();
    expect(existsSync(`${ROOT}/out/main/testing.js`)).toBe(true);
    // `webhook-lab/testing` resolved as a user's code does (the package's export map, from its own folder).
    const script = `
const { startLab } = require('webhook-lab/testing');
(async () => {
  const lab = await startLab({ ui: true, receivers: [{ name: 'r', path: '/r' }] });
  const res = await fetch(lab.collectorUrl + '/v1/track', { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Basic ' + Buffer.from(lab.writeKey + ':').toString('base64') }, body: JSON.stringify({ userId: 'u', event: 'E' }) });
  await res.text();
  await lab.waitForCall({ event: 'E' });
  await lab.waitForDelivery({ receiver: 'r' });
  // ui: true serves the web UI from the package's out/renderer, and the control API with the token.
  const ui = await fetch(lab.uiUrl);
  const health = await fetch(lab.apiUrl + '/health', { headers: { authorization: 'Bearer ' + lab.token } });
  console.log('ui ' + ui.status + ' ' + (await ui.text()).includes('<title>Webhook Lab</title>') + ', api ' + health.status);
  await lab.stop();
  // Closed handles are freed on the next turn of the loop; what is left then would keep the process up.
  setImmediate(() => console.log('stopped; open: ' + JSON.stringify(process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap' && r !== 'PipeWrap'))));
})();
`;
    const child = spawn(process.execPath, ['-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += String(d)));
    child.stderr.on('data', (d) => (out += String(d)));
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        resolve(-1);
      }, 20_000);
      child.once('exit', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    expect({ code, out }).toEqual({ code: 0, out: 'ui 200 true, api 200\nstopped; open: []\n' });
  }, 60_000);
});

describe('connectLab', () => {
  it('gives the same handle for a running `webhook-lab serve`, over its control API', async () => {
    ensureBuilt();
    serve = await startServe(['--data-dir', dataDir()]);
    const created = await fetch(`${serve.api}/sources`, {
      method: 'POST',
      headers: { authorization: `Bearer ${serve.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'CI' }),
    }).then((r) => r.json() as Promise<{ writeKey: string }>);
    const l = await connectLab({ apiUrl: serve.api, token: serve.token, source: 'CI' });
    labs.push(l);
    expect(l.collectorUrl).toBe(serve.collector);
    expect(l.writeKey).toBe(created.writeKey);
    expect(l.apiUrl).toBe(serve.api);
    // serve serves the UI at the API's root: the handle gives its address with the token.
    expect(l.uiUrl).toBe(`${serve.api.replace(/\/api$/, '')}/?token=${encodeURIComponent(serve.token)}`);
    // The UI's address, ?token=… and all, is taken as the API's root too.
    const viaUi = await connectLab({ apiUrl: l.uiUrl!, token: serve.token });
    labs.push(viaUi);
    expect(viaUi.apiUrl).toBe(serve.api);
    await send(l, '/v1/track', order(42));
    expect(await l.waitForCall({ event: 'Order Completed', properties: { total: 42 } })).toEqual({ type: 'track', ...order(42) });
    const message = await l.waitForCall({ properties: { total: 7 } }, { timeoutMs: 100 }).catch((e: Error) => e.message);
    expect(message).toContain('properties.total\n         - expected 7\n         + received 42');
    await l.reset();
    expect(await l.calls()).toEqual([]);
    await l.stop();
    // The lab keeps running: stop() of a connected handle ends only its waits.
    expect((await fetch(`${serve.api}/health`, { headers: { authorization: `Bearer ${serve.token}` } })).status).toBe(200);
  });

  it('a server that is not the lab rejects with a LabApiError naming its URL', async () => {
    const other = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(other.address() as AddressInfo).port}/api`;
      const err = (await connectLab({ apiUrl: url, token: 't' }).catch((e: unknown) => e)) as Error;
      expect(err).toBeInstanceOf(LabApiError);
      expect(err.message.startsWith(`GET ${url}/health answered 200 with JSON that is not the control API's answer ("version": `)).toBe(true);
      expect(err.message.endsWith('); is apiUrl the "api:" line webhook-lab serve printed?')).toBe(true);
    } finally {
      other.close();
    }
  });

  it('says what is wrong with apiUrl, token and source', async () => {
    ensureBuilt();
    serve = await startServe(['--data-dir', dataDir()]);
    await expect(connectLab({ apiUrl: '', token: 't' })).rejects.toThrow(/^connectLab: apiUrl: give the control API URL/);
    await expect(connectLab({ apiUrl: serve.api, token: '' })).rejects.toThrow(/^connectLab: token: /);
    await expect(connectLab({ apiUrl: serve.api, token: 'wrong' })).rejects.toThrow(/check the token given to connectLab/);
    // Through a redirect to another port, fetch does not send the token on: the 401 says so, not "check the token".
    const lab = serve;
    const redirector = createServer((req, res) => res.writeHead(307, { location: `${lab.api.replace(/\/api$/, '')}${req.url}` }).end());
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
    try {
      const via = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/api`;
      const err = (await connectLab({ apiUrl: via, token: lab.token }).catch((e: unknown) => e)) as Error;
      expect(err).toBeInstanceOf(LabApiError);
      expect(err.message).toContain(`redirected to ${lab.api}/health, where the token is not sent on: give connectLab that URL`);
      expect(err.message).not.toContain('check the token');
    } finally {
      redirector.close();
    }
    await expect(connectLab({ apiUrl: serve.api, token: serve.token, source: 'Nope' })).rejects.toThrow(/^connectLab: source: the lab has no source named "Nope"/);
  });
});

describe('what a demanding user relies on', () => {
  it('a match written in another realm (Jest, Vitest vmThreads) matches nested objects of a real call', async () => {
    const l = await lab();
    await send(l, '/v1/track', order(42));
    const match = runInNewContext("({ type: 'track', properties: { total: 42, products: [{ sku: 'a' }, { qty: 2 }] } })") as { type: string };
    expect(Object.getPrototypeOf(match)).not.toBe(Object.prototype);
    expect((await l.waitForCall(match, { timeoutMs: 2_000 })).properties).toMatchObject({ total: 42 });
  });

  it('calls the lab dropped (unknown write key, repeated messageId) do not count unless includeDropped; a timeout names them and why', async () => {
    const l = await lab();
    expect(await send(l, '/v1/track', order(42), 'wk_typo')).toBe(200);
    await send(l, '/v1/track', { userId: 'u1', event: 'Dup', messageId: 'm-1' });
    await send(l, '/v1/track', { userId: 'u1', event: 'Dup', messageId: 'm-1' });
    await l.waitForCalls({}, { count: 3, includeDropped: true, timeoutMs: 3_000 });
    expect((await l.calls()).map((c) => c.event)).toEqual(['Dup']);
    expect(await l.calls({ event: 'Dup' }, { includeDropped: true })).toHaveLength(2);
    const message = await l.waitForCall({ event: 'Order Completed' }, { timeoutMs: 100 }).catch((e: Error) => e.message);
    expect(message).toMatch(/^waitForCall: no calls matched within 100 ms/);
    expect(message).toMatch(/a call matching was dropped by the lab \(not counted; \{ includeDropped: true \} counts them\):\n  1\) track "Order Completed" \(userId "u1"\), dropped: \S+/);
    const short = await l.waitForCalls({ event: 'Dup' }, { count: 2, timeoutMs: 100 }).catch((e: Error) => e.message);
    // The one that matched is counted, not listed with an empty diff; the dropped repeat is named.
    expect(short).toMatch(/^waitForCalls: 1 of 2 calls matched within 100 ms\n  match: \{ event: 'Dup' \}\n  nothing else was received \(1 received, all matching\)\.\n  a call matching was dropped by the lab[^\n]*\n  1\) track "Dup" \(userId "u1"\), dropped: duplicate messageId$/);
    expect(await l.waitForCall({ event: 'Order Completed' }, { includeDropped: true })).toMatchObject({ properties: { total: 42 } });
    await l.expectNoCall({ event: 'Order Completed' }, { forMs: 50 });
    await expect(l.expectNoCall({ event: 'Order Completed' }, { forMs: 50, includeDropped: true })).rejects.toThrow(/a call matching was received/);
    await expect(l.calls({}, { includeDropped: 'yes' as unknown as boolean })).rejects.toThrow(/^calls: includeDropped: expected true or false, got 'yes'/);
  });

  it('the default wait timeout is under the 5 s a runner gives a test, so its message is what fails the test', async () => {
    const l = await lab();
    // Raced against the runner's own default (Vitest's and Jest's 5 s test timeout), set first.
    let sentinel: NodeJS.Timeout | undefined;
    const runnerGivesUp = new Promise<string>((r) => (sentinel = setTimeout(() => r('the runner\'s 5 s test timeout came first'), 5_000)));
    const t0 = Date.now();
    const message = await Promise.race([l.waitForCall({ event: 'never' }).catch((e: Error) => e.message), runnerGivesUp]);
    clearTimeout(sentinel);
    expect(message).toMatch(/^waitForCall: no calls matched within 4000 ms/);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(4_000);
  }, 10_000);

  it('timeoutMs holds on a lab holding 5,000 calls, over the control API; calls() reads them in pages', async () => {
    const started = await lab({ ui: true });
    for (let b = 0; b < 10; b++) {
      const batch = Array.from({ length: 500 }, (_, i) => ({ type: 'track', userId: 'u1', event: 'Bulk', properties: { n: b * 500 + i } }));
      expect(await send(started, '/v1/batch', { batch })).toBe(200);
    }
    // The handles' page reads (listMessageDetails), seen through fetch, connectLab's transport: the
    // `after` each asked for; and, while pageDelayMs is set, each page held back that long.
    const realFetch = globalThis.fetch;
    const pagesAfter: number[] = [];
    let pageDelayMs = 0;
    const spy = vi.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.pathname.endsWith('/api/message-details')) {
        pagesAfter.push(Number(url.searchParams.get('after')));
        if (pageDelayMs > 0) await new Promise((r) => setTimeout(r, pageDelayMs));
      }
      return realFetch(input, init);
    });
    try {
      // A wait checks its deadline between pages rather than reading all 25 first (before: 6.4 s). With
      // each page held past a look's 200 ms slice, a 500 ms wait reads at most 3 of them (each look one,
      // ≥ 250 ms), on any machine; one that read them all first would say nothing of more left to read.
      const paced = await connectLab({ apiUrl: started.apiUrl!, token: started.token! });
      labs.push(paced);
      pageDelayMs = 250;
      const err = await paced.waitForCall({ event: 'never' }, { timeoutMs: 500 }).catch((e: unknown) => e);
      pageDelayMs = 0;
      expect(err).toBeInstanceOf(LabTimeoutError);
      expect((err as Error).message).toMatch(/^waitForCall: no calls matched within 500 ms/);
      expect((err as Error).message).toMatch(/\(the lab holds more calls than could be read within the timeout: \d+ read so far\)$/);
      expect(pagesAfter.length).toBeGreaterThanOrEqual(1);
      expect(pagesAfter.length).toBeLessThanOrEqual(3);
      expect((err as LabTimeoutError).seen).toBe(pagesAfter.length * 200);

      // Unpaced, the figures (printed, not asserted: issue 44).
      const l = await connectLab({ apiUrl: started.apiUrl!, token: started.token! });
      labs.push(l);
      const t0 = performance.now();
      await expect(l.waitForCall({ event: 'never' }, { timeoutMs: 500 })).rejects.toThrow(/^waitForCall: no calls matched within 500 ms/);
      const waited = performance.now() - t0;
      const t1 = performance.now();
      const all = await l.calls();
      const read = performance.now() - t1;
      console.log(`5,000 calls over the control API: a 500 ms wait rejected after ${waited.toFixed(0)} ms; calls() then took ${read.toFixed(0)} ms`);
      expect(all).toHaveLength(5_000);
      expect(all[4_999].properties).toEqual({ n: 4_999 });
      // Later looks read only what is new: every page asked for starts after the 5,000 already read.
      await send(started, '/v1/track', order(1));
      pagesAfter.length = 0;
      await l.waitForCall({ event: 'Order Completed' }, { timeoutMs: 2_000 });
      expect(pagesAfter.length).toBeGreaterThanOrEqual(1);
      expect(Math.min(...pagesAfter)).toBeGreaterThanOrEqual(5_000);
    } finally {
      spy.mockRestore();
    }
  }, 60_000);

  it('reset() also forgets a delivery in flight when it ran (answered and recorded after it)', async () => {
    const l = await lab({ ui: true, receivers: [{ name: 'slow', path: '/slow', behavior: { delayMs: 1_000 } }] });
    await send(l, '/v1/track', order(1));
    const inFlight = async () => {
      const res = await fetch(`${l.apiUrl}/messages?status=in_flight`, { headers: { authorization: `Bearer ${l.token}` } });
      return ((await res.json()) as { total: number }).total;
    };
    await expect.poll(inFlight, { timeout: 5_000, interval: 20 }).toBe(1);
    await l.reset();
    await expect(l.waitForDelivery({ receiver: 'slow' }, { timeoutMs: 2_000 })).rejects.toThrow(/^waitForDelivery: no deliveries matched within 2000 ms/);
    await send(l, '/v1/track', order(2));
    expect((await l.waitForDelivery({ receiver: 'slow' }, { timeoutMs: 3_000 })).body).toMatchObject({ properties: { total: 2 } });
    expect(await l.deliveries()).toHaveLength(1);
  });

  it('a handle does not keep calls another handle cleared', async () => {
    const started = await lab({ ui: true });
    const other = await connectLab({ apiUrl: started.apiUrl!, token: started.token! });
    labs.push(other);
    await send(started, '/v1/track', order(1));
    await started.waitForCall({ properties: { total: 1 } });
    await other.waitForCall({ properties: { total: 1 } });
    await other.reset();
    expect(await started.calls()).toEqual([]);
    await expect(started.expectNoCall({ properties: { total: 1 } }, { forMs: 50 })).resolves.toBeUndefined();
    await send(started, '/v1/track', order(2));
    expect(await other.waitForCall({ properties: { total: 2 } })).toMatchObject({ event: 'Order Completed' });
    // Cleared through the control API (the UI's Clear) too.
    await fetch(`${started.apiUrl}/messages`, { method: 'DELETE', headers: { authorization: `Bearer ${started.token}` } }).then((r) => r.arrayBuffer());
    expect(await other.calls()).toEqual([]);
    expect(await started.calls()).toEqual([]);
  });

  it('after stop(), its methods reject saying the lab was stopped, and a pending expectNoCall rejects', async () => {
    const l = await startLab();
    const quiet = l.expectNoCall({ event: 'x' }, { forMs: 10_000 }).catch((e: Error) => e.message);
    await l.calls();
    await l.stop();
    expect(await quiet).toMatch(/^expectNoCall: the lab was stopped/);
    await expect(l.calls()).rejects.toThrow(/^calls: the lab was stopped/);
    await expect(l.reset()).rejects.toThrow(/^reset: the lab was stopped/);
    await expect(l.waitForCall({})).rejects.toThrow(/^waitForCall: the lab was stopped/);

    const served = await lab({ ui: true });
    const c = await connectLab({ apiUrl: served.apiUrl!, token: served.token! });
    const pending = c.expectNoCall({ event: 'x' }, { forMs: 10_000 }).then(
      () => 'passed',
      (e: Error) => e.message,
    );
    await c.stop();
    expect(await pending).toMatch(/^expectNoCall: the lab was stopped before forMs/);
  });
});
