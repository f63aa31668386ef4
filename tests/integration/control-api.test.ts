import { createHmac, randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { startControlServer } from '../../src/main/server/control-server';
import type { ApiErrorBody, EngineEvent, ReplayResult } from '../../src/shared/api.contract';
import type { CallDetail, CallSummary, Page, Settings, Source } from '../../src/shared/types';
import { startTestEngine, waitFor, type TestEngine } from '../helpers/engine';
import { startReceiver, type TestReceiver } from '../helpers/receiver';

// The control API over a real socket, in-process: guard (token, Host, Origin), the routes the
// contract generates, and the SSE stream, against an engine whose receivers are real loopback servers.

const TOKEN = 'control-api-test-token';
const SECRET = 'api-secret';

let te: TestEngine;
let server: { app: FastifyInstance; url: string; port: number };
let agent: Agent;
let ok: TestReceiver; // answers 200
let failing: TestReceiver; // answers 500, so its deliveries stay retrying

interface ApiResponse<T> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
}

async function api<T = unknown>(
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  path: string,
  o: { body?: unknown; token?: string | null; headers?: Record<string, string> } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...o.headers };
  const token = o.token === undefined ? TOKEN : o.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  const res = await request(server.url + path, {
    method,
    headers,
    body: o.body === undefined ? undefined : JSON.stringify(o.body),
    dispatcher: agent,
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, body: (text ? JSON.parse(text) : null) as T };
}

const fieldPaths = (body: unknown) => ((body as ApiErrorBody).fields ?? []).map((f) => f.path);

async function createSource(name: string, urls: string[], extra: Record<string, unknown> = {}): Promise<Source> {
  const res = await api<Source>('POST', '/api/sources', {
    body: { name, webhooks: { enabled: urls.length > 0, sharedSecret: SECRET, urls: urls.map((url) => ({ url, headers: {} })) }, ...extra },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** Sends one call to the collector and returns its messageId. */
async function send(writeKey: string, path: string, call: Record<string, unknown>): Promise<string> {
  const messageId = (call.messageId as string | undefined) ?? randomUUID();
  const res = await te.post(path, { ...call, messageId }, { writeKey });
  expect(res.status).toBe(200);
  return messageId;
}

async function listMessages(query: Record<string, string | number>): Promise<Page<CallSummary>> {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]));
  const res = await api<Page<CallSummary>>('GET', `/api/messages?${qs}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** Waits until the call with this messageId has reached one of the given delivery states. */
async function settled(messageId: string, states: (string | null)[]): Promise<CallSummary> {
  return waitFor(async () => {
    const item = (await listMessages({ q: messageId })).items[0];
    return item && states.includes(item.deliveryState) ? item : undefined;
  }, `message ${messageId} in state ${states.join('/')}`);
}

beforeAll(async () => {
  [ok, failing] = await Promise.all([
    startReceiver(),
    startReceiver((_req, res) => void res.writeHead(500, { 'content-type': 'text/plain' }).end('down')),
  ]);
  te = await startTestEngine();
  server = await startControlServer({ engine: te.engine, host: '127.0.0.1', port: 0, token: TOKEN });
  agent = new Agent();
});

afterAll(async () => {
  await agent?.close();
  await server?.app.close();
  await te?.stop();
  await Promise.all([ok?.close(), failing?.close()]);
});

describe('request guard', () => {
  it('answers 401 without a token, naming the Bearer scheme', async () => {
    const res = await api<ApiErrorBody>('GET', '/api/health', { token: null });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(res.body.error).toMatch(/Bearer/);
  });

  it('answers 401 with a wrong token, a token of another length, or another scheme', async () => {
    expect((await api('GET', '/api/health', { token: 'control-api-test-tokeX' })).status).toBe(401);
    expect((await api('GET', '/api/health', { token: 'short' })).status).toBe(401);
    const basic = await api('GET', '/api/health', { token: null, headers: { authorization: `Basic ${Buffer.from(`${TOKEN}:`).toString('base64')}` } });
    expect(basic.status).toBe(401);
  });

  it('refuses a foreign Host header with 403 even with the right token (DNS rebinding)', async () => {
    const res = await api<ApiErrorBody>('GET', '/api/health', { headers: { host: `evil.example:${server.port}` } });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatch(/forbidden/);
    // The right name on another port is another origin too.
    expect((await api('GET', '/api/health', { headers: { host: `127.0.0.1:${server.port + 1}` } })).status).toBe(403);
  });

  it('refuses a foreign Origin with 403 and allows the same origin', async () => {
    expect((await api('GET', '/api/health', { headers: { origin: 'http://evil.example' } })).status).toBe(403);
    expect((await api('GET', '/api/health', { headers: { origin: `http://127.0.0.1:${server.port + 1}` } })).status).toBe(403);
    expect((await api('GET', '/api/health', { headers: { origin: 'null' } })).status).toBe(403);
    expect((await api('GET', '/api/health', { headers: { origin: server.url } })).status).toBe(200);
    const localhost = await api('GET', '/api/health', { headers: { origin: `http://localhost:${server.port}`, host: `localhost:${server.port}` } });
    expect(localhost.status).toBe(200);
  });

  it('answers an unknown /api path with a 404 JSON error', async () => {
    const res = await api<ApiErrorBody>('GET', '/api/no-such-thing');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(res.body.error).toMatch(/no such operation: GET \/api\/no-such-thing/);
    expect((await api('DELETE', '/api/health')).status).toBe(404);
  });
});

describe('health', () => {
  it('reports the engine', async () => {
    const res = await api<{ ok: boolean; collectorUrl: string; dataDir: string; calls: number; version: string }>('GET', '/api/health');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ok: true, collectorUrl: te.collectorUrl, dataDir: te.dataDir });
    expect(res.body.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(typeof res.body.calls).toBe('number');
  });
});

describe('sources', () => {
  it('creates, lists, updates and deletes a source', async () => {
    const created = await createSource('crud', [`${ok.url}/crud`], { writeKey: 'wk_crud' });
    expect(created).toMatchObject({ name: 'crud', writeKey: 'wk_crud', webhooks: { enabled: true, urls: [{ url: `${ok.url}/crud`, headers: {} }] } });

    const listed = await api<Source[]>('GET', '/api/sources');
    expect(listed.body.find((s) => s.id === created.id)).toEqual(created);

    const updated = await api<Source>('PATCH', `/api/sources/${created.id}`, {
      body: { name: 'crud-renamed', webhooks: { enabled: true, urls: [{ url: `${ok.url}/renamed`, headers: { 'X-Env': 'qa' } }] } },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id: created.id, name: 'crud-renamed', writeKey: 'wk_crud' });
    expect(updated.body.webhooks.urls).toEqual([{ url: `${ok.url}/renamed`, headers: { 'X-Env': 'qa' } }]);
    expect((await api<Source[]>('GET', '/api/sources')).body.find((s) => s.id === created.id)?.name).toBe('crud-renamed');

    expect((await api('DELETE', `/api/sources/${created.id}`)).body).toEqual({ ok: true });
    expect((await api<Source[]>('GET', '/api/sources')).body.some((s) => s.id === created.id)).toBe(false);
    expect((await api('DELETE', `/api/sources/${created.id}`)).status).toBe(404);
    expect((await api('PATCH', `/api/sources/${created.id}`, { body: { name: 'x' } })).status).toBe(404);
    // The 404 says what was not found, as for messages and receivers (it was "not found: <id>").
    for (const [method, path, body] of [
      ['DELETE', `/api/sources/${created.id}`, undefined],
      ['PATCH', `/api/sources/${created.id}`, { name: 'x' }],
      ['POST', `/api/sources/${created.id}/rotate-secret`, { which: 'sharedSecret' }],
    ] as const) {
      expect((await api<ApiErrorBody>(method, path, body ? { body } : {})).body.error).toBe(`not found: source ${created.id}`);
    }
  });

  it('refuses invalid webhook settings with 400 and the field of each problem', async () => {
    const url = (u: string, headers: Record<string, string> = {}) => ({ url: u, headers });
    const badUrl = await api<ApiErrorBody>('POST', '/api/sources', { body: { name: 'bad', webhooks: { enabled: true, urls: [url('ftp://example.com/x')] } } });
    expect(badUrl.status).toBe(400);
    expect(fieldPaths(badUrl.body)).toEqual(['webhooks.urls[0].url']);
    expect(badUrl.body.error).toMatch(/webhooks\.urls\[0\]\.url: must be an absolute http: or https: URL/);

    const six = await api<ApiErrorBody>('POST', '/api/sources', { body: { name: 'bad', webhooks: { enabled: true, urls: Array.from({ length: 6 }, (_, i) => url(`http://127.0.0.1:9/${i}`)) } } });
    expect(six.status).toBe(400);
    expect(six.body.fields).toEqual([{ path: 'webhooks.urls[5]', message: 'at most 5 URLs' }]);

    const reserved = await api<ApiErrorBody>('POST', '/api/sources', { body: { name: 'bad', webhooks: { enabled: true, urls: [url('http://127.0.0.1:9/', { 'Content-Type': 'text/plain' })] } } });
    expect(reserved.status).toBe(400);
    expect(fieldPaths(reserved.body)).toEqual(['webhooks.urls[0].headers.Content-Type']);

    const noUrl = await api<ApiErrorBody>('POST', '/api/sources', { body: { name: 'bad', webhooks: { enabled: true, urls: [] } } });
    expect(fieldPaths(noUrl.body)).toEqual(['webhooks.enabled']);

    const unknownKey = await api<ApiErrorBody>('POST', '/api/sources', { body: { name: 'bad', webhook: {} } });
    expect(unknownKey.status).toBe(400);
    expect(fieldPaths(unknownKey.body)).toEqual(['webhook']);

    // Nothing of the refused requests was stored.
    expect((await api<Source[]>('GET', '/api/sources')).body.some((s) => s.name === 'bad')).toBe(false);

    const s = await createSource('valid-then-bad', [`${ok.url}/v`]);
    const badUpdate = await api<ApiErrorBody>('PATCH', `/api/sources/${s.id}`, { body: { webhooks: { enabled: true, urls: [url('http://127.0.0.1:9/', { Host: 'x' })] } } });
    expect(badUpdate.status).toBe(400);
    expect(fieldPaths(badUpdate.body)).toEqual(['webhooks.urls[0].headers.Host']);
    expect((await api<Source[]>('GET', '/api/sources')).body.find((x) => x.id === s.id)?.webhooks.urls[0].url).toBe(`${ok.url}/v`);
  });

  it('collector faults: set on POST and PATCH, refused with the field named, cleared with null, counted at /api/collector-faults', async () => {
    const bad = await api<ApiErrorBody>('POST', '/api/sources', { body: { name: 'faulty', collectorFaults: { rate: 1.5, mode: 'status' } } });
    expect(bad.status).toBe(400);
    expect(bad.body.fields).toEqual([{ path: 'collectorFaults.rate', message: 'must be between 0 and 1' }]);
    const s = await createSource('faulty', [], { writeKey: 'wk_faulty', collectorFaults: { rate: 1, mode: 'status', status: 429, retryAfterS: 1 } });
    expect(s.collectorFaults).toEqual({ rate: 1, mode: 'status', status: 429, retryAfterS: 1 });
    expect((await te.post('/v1/track', { userId: 'u', event: 'E' }, { writeKey: 'wk_faulty' })).status).toBe(429);
    const badPatch = await api<ApiErrorBody>('PATCH', `/api/sources/${s.id}`, { body: { collectorFaults: { rate: 0.5, mode: 'delay' } } });
    expect(badPatch.body.fields).toEqual([{ path: 'collectorFaults.delayMs', message: 'required with mode "delay"' }]);
    const cleared = await api<Source>('PATCH', `/api/sources/${s.id}`, { body: { collectorFaults: null } });
    expect(cleared.body.collectorFaults).toBeNull();
    expect((await te.post('/v1/track', { userId: 'u', event: 'E' }, { writeKey: 'wk_faulty' })).status).toBe(200);
    const counts = await api<{ since: string; sources: Record<string, Record<string, number>> }>('GET', '/api/collector-faults');
    expect(counts.body.sources[s.id]).toEqual({ '429': 1 });
  });

  it('refuses a duplicate name with 409', async () => {
    await createSource('dup', []);
    const res = await api<ApiErrorBody>('POST', '/api/sources', { body: { name: 'dup' } });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatch(/already exists/);
  });

  it('regenerates the write key: the old key is then unknown, the new one works', async () => {
    const s = await createSource('regen', [`${ok.url}/regen`], { writeKey: 'wk_regen_old' });
    const res = await api<Source>('POST', `/api/sources/${s.id}/regenerate-key`, { body: {} });
    expect(res.status).toBe(200);
    const newKey = res.body.writeKey;
    expect(newKey).not.toBe('wk_regen_old');
    expect(newKey).toMatch(/^wk_[A-Za-z0-9_-]{16,}$/);

    const oldCall = await send('wk_regen_old', '/v1/track', { userId: 'regen-user', event: 'Old Key' });
    const newCall = await send(newKey, '/v1/track', { userId: 'regen-user', event: 'New Key' });
    const dropped = (await listMessages({ q: oldCall })).items[0];
    expect(dropped).toMatchObject({ status: 'dropped', dropReason: 'unknown write key', sourceId: null, deliveryState: 'dropped' });
    const delivered = await settled(newCall, ['delivered']);
    expect(delivered).toMatchObject({ status: 'accepted', sourceId: s.id, sourceName: 'regen' });
  });
});

describe('messages', () => {
  let good: Source;
  let bad: Source;
  let quiet: Source;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    good = await createSource('msgs-good', [`${ok.url}/good`]);
    bad = await createSource('msgs-bad', [`${failing.url}/bad`]);
    quiet = await createSource('msgs-quiet', []); // Webhooks off: accepted, not forwarded
    ids.order = await send(good.writeKey, '/v1/track', { userId: 'm-alice', event: 'Order Completed', properties: { total: 12 } });
    ids.identify = await send(good.writeKey, '/v1/identify', { userId: 'm-alice', traits: { plan: 'pro' } });
    ids.page = await send(good.writeKey, '/v1/page', { anonymousId: 'm-anon', name: 'Pricing' });
    ids.retry = await send(bad.writeKey, '/v1/track', { userId: 'm-bob', event: 'Signup Started' });
    ids.quiet = await send(quiet.writeKey, '/v1/track', { userId: 'm-carol', event: 'Quiet Event' });
    ids.noEvent = await send(good.writeKey, '/v1/track', { userId: 'm-dave' }); // track without event: dropped
    for (const id of [ids.order, ids.identify, ids.page]) await settled(id, ['delivered']);
    await settled(ids.retry, ['retrying']);
  });

  const idsOf = (page: Page<CallSummary>) => page.items.map((i) => i.messageId);

  it('filters by source and type', async () => {
    const bySource = await listMessages({ sourceId: good.id });
    expect(idsOf(bySource)).toEqual([ids.noEvent, ids.page, ids.identify, ids.order]); // newest first
    expect(bySource.total).toBe(4);
    expect(idsOf(await listMessages({ sourceId: good.id, type: 'identify' }))).toEqual([ids.identify]);
    expect((await listMessages({ sourceId: bad.id })).items.every((i) => i.sourceName === 'msgs-bad')).toBe(true);
  });

  it('filters by delivery status', async () => {
    const delivered = await listMessages({ sourceId: good.id, status: 'delivered' });
    expect(idsOf(delivered)).toEqual([ids.page, ids.identify, ids.order]);
    const retrying = await listMessages({ status: 'retrying', sourceId: bad.id });
    expect(idsOf(retrying)).toEqual([ids.retry]);
    expect(retrying.items[0].nextAttemptAt).toMatch(/Z$/);
    const dropped = await listMessages({ status: 'dropped', sourceId: good.id });
    expect(dropped.items).toHaveLength(1);
    expect(dropped.items[0]).toMatchObject({ messageId: ids.noEvent, status: 'dropped', deliveryState: 'dropped' });
    expect(dropped.items[0].dropReason).toMatch(/event/);
    const notForwarded = await listMessages({ status: 'not_forwarded', sourceId: quiet.id });
    expect(idsOf(notForwarded)).toEqual([ids.quiet]);
    expect(notForwarded.items[0]).toMatchObject({ status: 'accepted', deliveryState: null, deliveryId: null });
    expect((await listMessages({ status: 'not_forwarded', sourceId: good.id })).items).toEqual([]);
    // An unknown status is a validation error naming the field.
    const badStatus = await api<ApiErrorBody>('GET', '/api/messages?status=lost');
    expect(badStatus.status).toBe(400);
    expect(fieldPaths(badStatus.body)).toEqual(['status']);
  });

  it('filters by userId and by free text on the event name and the messageId', async () => {
    expect(idsOf(await listMessages({ userId: 'm-alice' }))).toEqual([ids.identify, ids.order]);
    expect(idsOf(await listMessages({ q: 'Order Compl' }))).toEqual([ids.order]);
    expect(idsOf(await listMessages({ q: 'signup started' }))).toEqual([ids.retry]); // LIKE is case-insensitive
    expect(idsOf(await listMessages({ q: ids.quiet }))).toEqual([ids.quiet]);
    expect(idsOf(await listMessages({ q: 'm-anon' }))).toEqual([ids.page]);
    expect((await listMessages({ q: '100%_' })).items).toEqual([]);
  });

  it('pages with limit, next and before', async () => {
    const first = await listMessages({ sourceId: good.id, limit: 3 });
    expect(idsOf(first)).toEqual([ids.noEvent, ids.page, ids.identify]);
    expect(first.total).toBe(4);
    expect(first.next).toBe(first.items[2].id);
    const second = await listMessages({ sourceId: good.id, limit: 3, before: first.next! });
    expect(idsOf(second)).toEqual([ids.order]);
    expect(second.next).toBeNull();
    const badLimit = await api<ApiErrorBody>('GET', '/api/messages?limit=0');
    expect(fieldPaths(badLimit.body)).toEqual(['limit']);
  });

  it('returns one message with its call, deliveries and attempts', async () => {
    const summary = (await listMessages({ q: ids.order })).items[0];
    const res = await api<CallDetail>('GET', `/api/messages/${summary.id}`);
    expect(res.status).toBe(200);
    const { call, deliveries } = res.body;
    expect(call).toMatchObject({ id: summary.id, type: 'track', userId: 'm-alice', label: 'Order Completed', status: 'accepted', sourceName: 'msgs-good' });
    expect(call.raw).toMatchObject({ event: 'Order Completed', properties: { total: 12 } });
    expect(call.request).toMatchObject({ path: '/v1/track', writeKeyFrom: 'basic' });
    expect(deliveries).toHaveLength(1);
    const [d] = deliveries;
    expect(d).toMatchObject({ state: 'delivered', attemptCount: 1, urls: [{ url: `${ok.url}/good`, headers: {} }] });
    expect(d.attempts).toHaveLength(1);
    const [a] = d.attempts;
    expect(a).toMatchObject({ trigger: 'scheduled', round: 1, urlIndex: 0, url: `${ok.url}/good`, responseStatus: 200, outcome: 'success', timedOut: false });
    // The body is the delivery's, sent once (on the delivery): the attempt sent it unedited.
    expect(a).not.toHaveProperty('requestBody');
    expect(a.signature).toBe(createHmac('sha1', SECRET).update(d.body).digest('hex'));
    expect(JSON.parse(d.body)).toMatchObject({ version: 1, type: 'track', event: 'Order Completed', messageId: ids.order });

    expect((await api('GET', '/api/messages/999999')).status).toBe(404);
    expect(fieldPaths((await api('GET', '/api/messages/abc')).body)).toEqual(['id']);
  });

  it('replays a delivered message as a new attempt and never changes earlier ones', async () => {
    const summary = (await listMessages({ q: ids.order })).items[0];
    const before = (await api<CallDetail>('GET', `/api/messages/${summary.id}`)).body.deliveries[0];
    const receivedBefore = ok.requests.length;

    const res = await api<ReplayResult>('POST', `/api/messages/${summary.id}/replay`, { body: {} });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.deliveryId).toBe(before.id);
    expect(res.body.attempts).toHaveLength(1);
    const replay = res.body.attempts[0];
    expect(replay).toMatchObject({ trigger: 'replay', responseStatus: 200, outcome: 'success' });
    expect(replay).not.toHaveProperty('requestBody');
    expect(replay.id).toBeGreaterThan(before.attempts[0].id);
    expect(replay.round).toBeGreaterThan(before.attempts[0].round);

    // The receiver got the same bytes again, with the same signature.
    await ok.waitForRequests(receivedBefore + 1);
    const again = ok.requests[receivedBefore];
    expect(again.body.toString('utf8')).toBe(before.body);
    expect(again.headers['x-signature']).toBe(before.attempts[0].signature);

    const after = (await api<CallDetail>('GET', `/api/messages/${summary.id}`)).body.deliveries[0];
    expect(after.attempts).toHaveLength(2);
    expect(after.attempts[0]).toEqual(before.attempts[0]);
    expect(after.attempts[1]).toEqual(replay);
    expect(after.attemptCount).toBe(2);
    expect(after.state).toBe('delivered');
  });

  it('replays an edited body, signed over the edited bytes, and refuses dropped calls', async () => {
    const summary = (await listMessages({ q: ids.identify })).items[0];
    const edited = '{"version":1,"type":"identify","userId":"m-alice","traits":{"plan":"enterprise"}}';
    const res = await api<ReplayResult>('POST', `/api/messages/${summary.id}/replay`, { body: { body: edited } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.attempts[0]).toMatchObject({ trigger: 'replay', requestBody: edited, signature: createHmac('sha1', SECRET).update(edited).digest('hex') });

    const notJson = await api<ApiErrorBody>('POST', `/api/messages/${summary.id}/replay`, { body: { body: '{nope' } });
    expect(notJson.status).toBe(400);
    // The bad field is named in `fields`, as every other 400 names it.
    expect(notJson.body.fields).toEqual([{ path: 'body', message: expect.stringMatching(/^not valid JSON/) }]);
    const noSuchUrl = await api<ApiErrorBody>('POST', `/api/messages/${summary.id}/replay`, { body: { urlIndex: 3 } });
    expect(noSuchUrl.status).toBe(400);
    expect(noSuchUrl.body.fields).toEqual([{ path: 'urlIndex', message: expect.stringMatching(/URL/) }]);

    const dropped = (await listMessages({ q: ids.noEvent })).items[0];
    const refused = await api<ApiErrorBody>('POST', `/api/messages/${dropped.id}/replay`, { body: {} });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatch(/dropped/);
  });
});

describe('settings', () => {
  it('reads and patches settings; bad values are a 400 naming the field', async () => {
    const initial = await api<Settings>('GET', '/api/settings');
    expect(initial.status).toBe(200);
    expect(initial.body).toMatchObject({ payloadFormat: 'full', timeScale: 1, strict: false, userAgentProduct: 'Segment.io' });
    expect(initial.body.retrySchedule.delaysMs[0]).toBe(5000);

    const patched = await api<Settings>('PATCH', '/api/settings', { body: { payloadFormat: 'documented', userAgentProduct: 'Acme' } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ payloadFormat: 'documented', userAgentProduct: 'Acme', timeScale: 1 });
    expect((await api<Settings>('GET', '/api/settings')).body).toEqual(patched.body);

    const bad = await api<ApiErrorBody>('PATCH', '/api/settings', { body: { timeScale: 0, payloadFormat: 'xml' } });
    expect(bad.status).toBe(400);
    expect(fieldPaths(bad.body).sort()).toEqual(['payloadFormat', 'timeScale']);
    const preset = await api<ApiErrorBody>('PATCH', '/api/settings', { body: { retrySchedule: { preset: 'nope' } } });
    expect(fieldPaths(preset.body)).toEqual(['retrySchedule.preset']);
    const typo = await api<ApiErrorBody>('PATCH', '/api/settings', { body: { timescale: 2 } });
    expect(fieldPaths(typo.body)).toEqual(['timescale']);
    // Refused patches change nothing.
    expect((await api<Settings>('GET', '/api/settings')).body).toEqual(patched.body);

    expect((await api('PATCH', '/api/settings', { body: { payloadFormat: 'full', userAgentProduct: 'Segment.io' } })).status).toBe(200);
  });

  it('aliasKeys picks the alias body form sent to receivers: both (default), documented or camel', async () => {
    expect((await api<Settings>('GET', '/api/settings')).body.aliasKeys).toBe('both');
    expect(fieldPaths((await api<ApiErrorBody>('PATCH', '/api/settings', { body: { aliasKeys: 'snake' } })).body)).toEqual(['aliasKeys']);
    const s = await createSource('alias-keys', [`${ok.url}/alias-keys`]);
    const aliasBody = async (aliasKeys: string) => {
      expect((await api('PATCH', '/api/settings', { body: { aliasKeys } })).status).toBe(200);
      const messageId = await send(s.writeKey, '/v1/alias', { userId: 'u-new', previousId: `anon-${aliasKeys}` });
      await settled(messageId, ['delivered']);
      const req = ok.requests.find((r) => r.url === '/alias-keys' && r.body.includes(`anon-${aliasKeys}`))!;
      return JSON.parse(req.body.toString()) as Record<string, unknown>;
    };
    const both = await aliasBody('both');
    expect(both).toMatchObject({ userId: 'u-new', previousId: 'anon-both', 'Previous ID': 'anon-both', 'User ID': 'u-new' });
    const documented = await aliasBody('documented');
    expect(documented).toMatchObject({ userId: 'u-new', 'Previous ID': 'anon-documented', 'User ID': 'u-new' });
    expect(documented).not.toHaveProperty('previousId');
    const camel = await aliasBody('camel');
    expect(camel).toMatchObject({ userId: 'u-new', previousId: 'anon-camel' });
    expect(Object.keys(camel)).not.toContain('Previous ID');
    expect(Object.keys(camel)).not.toContain('User ID');
    expect((await api('PATCH', '/api/settings', { body: { aliasKeys: 'both' } })).status).toBe(200);
  });
});

describe('events (SSE)', () => {
  it('refuses the stream without the token', async () => {
    expect((await api('GET', '/api/events', { token: null })).status).toBe(401);
  });

  it('streams calls.stored, then calls.updated with deliveryState delivered', async () => {
    const source = await createSource('sse', [`${ok.url}/sse`]);
    const controller = new AbortController();
    const res = await request(`${server.url}/api/events`, {
      headers: { authorization: `Bearer ${TOKEN}`, accept: 'text/event-stream' },
      dispatcher: agent,
      signal: controller.signal,
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);

    const seen: EngineEvent[] = [];
    const read = (async () => {
      let buffered = '';
      for await (const chunk of res.body) {
        buffered += (chunk as Buffer).toString('utf8');
        let end: number;
        while ((end = buffered.indexOf('\n\n')) !== -1) {
          const message = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          for (const line of message.split('\n')) {
            if (line.startsWith('data: ')) seen.push(...(JSON.parse(line.slice(6)) as EngineEvent[]));
          }
        }
      }
    })();

    let messageId = '';
    const has = (type: EngineEvent['type'], state?: string) =>
      seen.some((e) => e.type === type && 'calls' in e && e.calls.some((c) => c.messageId === messageId && (!state || c.deliveryState === state)));
    try {
      // The stream is open (headers in) before the call is sent, so its events cannot be missed.
      messageId = await send(source.writeKey, '/v1/track', { userId: 'sse-user', event: 'Streamed' });
      await waitFor(() => has('calls.stored') && has('calls.updated', 'delivered'), 'calls.stored and a delivered calls.updated on the stream', 5000);
    } finally {
      controller.abort();
      await read.catch(() => undefined);
    }

    const stored = seen.find((e) => e.type === 'calls.stored' && e.calls.some((c) => c.messageId === messageId));
    expect(stored && 'calls' in stored && stored.calls.find((c) => c.messageId === messageId)).toMatchObject({ type: 'track', label: 'Streamed', status: 'accepted', sourceName: 'sse' });
    const storedAt = seen.indexOf(stored!);
    const updatedAt = seen.findIndex((e) => e.type === 'calls.updated' && e.calls.some((c) => c.messageId === messageId && c.deliveryState === 'delivered'));
    expect(updatedAt).toBeGreaterThan(storedAt);
    expect(seen.some((e) => e.type === 'attempt.recorded' && e.attempt.trigger === 'scheduled' && e.attempt.responseStatus === 200)).toBe(true);
  });
});
