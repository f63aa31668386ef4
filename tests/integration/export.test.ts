import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallDetail } from '../../src/shared/types';
import type { Har, HarEntry } from '../../src/main/engine/simulation/export-har';
import { startTestEngine, waitFor, webhookSource, type TestEngine } from '../helpers/engine';
import { closedPort, startReceiver, type TestReceiver } from '../helpers/receiver';
import { startControlServer } from '../../src/main/server/control-server';
import { exportInputSchema } from '../../src/shared/simulation.contract';
import { sentBody } from '../../src/shared/attempt-body';

// har-validator checks a document against the HAR 1.2 JSON schema (har-schema); it has no types.
const harValidator = createRequire(__filename)('har-validator') as { har(doc: unknown): Promise<boolean> };

async function validHar(doc: unknown): Promise<true> {
  try {
    await harValidator.har(doc);
    return true;
  } catch (err) {
    throw new Error(`invalid HAR: ${JSON.stringify((err as { errors?: unknown }).errors ?? String(err))}`);
  }
}

let receiver: TestReceiver;
let t: TestEngine;
let ids: { ok: number; okBatch: number; gone: number; down: number; quiet: number; dropped: number };

beforeAll(async () => {
  receiver = await startReceiver((req, res) => {
    if (req.url.startsWith('/gone')) return res.writeHead(410, { 'content-type': 'text/plain' }).end('gone for good');
    res.writeHead(200, { 'content-type': 'application/json', 'x-receiver': 'yes' }).end('{"ok":true}');
  });
  const down = `http://127.0.0.1:${await closedPort()}/hook`;
  t = await startTestEngine({
    config: {
      sources: [
        webhookSource('ok', 'wk_ok', [`${receiver.url}/hook?env=qa`], 's3cret'),
        webhookSource('gone', 'wk_gone', [`${receiver.url}/gone`]),
        webhookSource('down', 'wk_down', [down]),
        { name: 'quiet', writeKey: 'wk_quiet' },
      ],
    },
  });
  const send = async (writeKey: string, batch: unknown[]) => {
    const r = await t.post('/v1/batch', { batch }, { writeKey });
    expect(r.status).toBe(200);
  };
  await send('wk_ok', [
    { type: 'track', userId: 'u1', event: 'Order Completed', properties: { total: 12.5 }, messageId: 'm-ok' },
    { type: 'identify', userId: 'u2', traits: { plan: 'pro' }, messageId: 'm-ok-2' },
    { type: 'track', userId: 'u1', messageId: 'm-dropped' }, // no event: stored as dropped
  ]);
  await send('wk_gone', [{ type: 'track', userId: 'u3', event: 'Refund', messageId: 'm-gone' }]);
  await send('wk_down', [{ type: 'page', userId: 'u4', name: 'Home', messageId: 'm-down' }]);
  await send('wk_quiet', [{ type: 'track', userId: 'u5', event: 'Quiet', messageId: 'm-quiet' }]);
  const page = await t.call('listMessages', { limit: 100 });
  const idOf = (m: string) => page.items.find((c) => c.messageId === m)!.id;
  ids = { ok: idOf('m-ok'), okBatch: idOf('m-ok-2'), gone: idOf('m-gone'), down: idOf('m-down'), quiet: idOf('m-quiet'), dropped: idOf('m-dropped') };
  await waitFor(async () => {
    const states = (await t.call('listMessages', { limit: 100 })).items.map((c) => c.deliveryState);
    return !states.includes('pending') && !states.includes('in_flight') && states.includes('retrying');
  }, 'first attempts recorded');
});

afterAll(async () => {
  await t?.stop();
  await receiver?.close();
});

const lines = (content: string) => content.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as CallDetail);

describe('export as JSON Lines', () => {
  it('writes one line per call, oldest first, each equal to GET /api/messages/:id', async () => {
    const file = await t.call('exportDeliveries', { format: 'jsonl' });
    expect(file.contentType).toBe('application/x-ndjson');
    expect(file.filename).toMatch(/^webhook-lab-.+\.jsonl$/);
    expect(file.content.endsWith('\n')).toBe(true);
    const rows = lines(file.content);
    expect(rows.map((r) => r.call.id)).toEqual(Object.values(ids).sort((a, b) => a - b));
    for (const row of rows) expect(row).toEqual(await t.call('getMessage', { id: row.call.id }));

    const ok = rows.find((r) => r.call.id === ids.ok)!;
    expect(ok.call.raw).toMatchObject({ type: 'track', event: 'Order Completed', messageId: 'm-ok' });
    expect(ok.call.normalized).toMatchObject({ event: 'Order Completed', properties: { total: 12.5 } });
    expect(ok.deliveries[0]).toMatchObject({ state: 'delivered', attemptCount: 1 });
    expect(ok.deliveries[0].attempts[0]).toMatchObject({ responseStatus: 200, outcome: 'success' });
    // The body is on the delivery, once: the attempt sent it unedited.
    expect(ok.deliveries[0].attempts[0]).not.toHaveProperty('requestBody');
    expect(sentBody(ok.deliveries[0], ok.deliveries[0].attempts[0])).toBe(ok.deliveries[0].body);
    expect(rows.find((r) => r.call.id === ids.dropped)).toMatchObject({ call: { status: 'dropped' }, deliveries: [] });
    expect(rows.find((r) => r.call.id === ids.quiet)!.deliveries).toEqual([]);
  });

  it('applies the listMessages filters and the limit', async () => {
    const only = async (input: Record<string, unknown>) =>
      lines((await t.call('exportDeliveries', { format: 'jsonl', ...input })).content).map((r) => r.call.id);
    expect(await only({ status: 'delivered' })).toEqual([ids.ok, ids.okBatch]);
    expect(await only({ status: 'failed' })).toEqual([ids.gone]);
    expect(await only({ status: 'retrying' })).toEqual([ids.down]);
    expect(await only({ status: 'dropped' })).toEqual([ids.dropped]);
    expect(await only({ status: 'not_forwarded' })).toEqual([ids.quiet]);
    expect(await only({ userId: 'u1' })).toEqual([ids.ok, ids.dropped]);
    expect(await only({ type: 'identify' })).toEqual([ids.okBatch]);
    expect(await only({ q: 'Refund' })).toEqual([ids.gone]);
    const okSource = (await t.call('listSources', {})).find((s) => s.name === 'ok')!;
    expect(await only({ sourceId: okSource.id })).toEqual([ids.ok, ids.okBatch, ids.dropped]);
    // The newest `limit` calls, still oldest first.
    const all = Object.values(ids).sort((a, b) => a - b);
    expect(await only({ limit: 2 })).toEqual(all.slice(-2));
    expect((await t.call('exportDeliveries', { format: 'jsonl', userId: 'nobody' })).content).toBe('');
    await expect(t.call('exportDeliveries', { format: 'jsonl', status: 'bogus' })).rejects.toMatchObject({ status: 400, fields: [{ path: 'status' }] });
  });
});

describe('export as HAR', () => {
  it('is a valid HAR 1.2 document with one entry per attempt', async () => {
    const file = await t.call('exportDeliveries', { format: 'har' });
    expect(file.filename).toMatch(/\.har$/);
    const har = JSON.parse(file.content) as Har;
    expect(await validHar(har)).toBe(true);
    expect(har.log).toMatchObject({ version: '1.2', creator: { name: 'Webhook Lab' } });
    // Attempts: ok ×2, gone ×1, down ×1 (dropped and not-forwarded calls have none).
    const entries = har.log.entries;
    expect(entries).toHaveLength(4);
    const started = entries.map((e) => Date.parse(e.startedDateTime));
    expect(started).toEqual([...started].sort((a, b) => a - b));
    for (const e of entries) {
      // HAR: time is the sum of the phases not -1, ssl aside (connect includes it).
      const { connect, send, wait, receive } = e.timings;
      expect(e.time).toBeCloseTo((connect === -1 ? 0 : connect) + send + wait + receive, 5);
      expect(Object.keys(e).filter((k) => !['startedDateTime', 'time', 'request', 'response', 'cache', 'timings', 'comment'].includes(k))).toEqual(['_webhookLab']);
    }
  });

  it('keeps the exact request, the response and the webhook details of each attempt', async () => {
    const har = JSON.parse((await t.call('exportDeliveries', { format: 'har' })).content) as Har;
    const entries = har.log.entries;
    const byCall = (id: number) => entries.find((e) => e._webhookLab.callId === id)!;
    const detail = await t.call('getMessage', { id: ids.ok });
    const attempt = detail.deliveries[0].attempts[0];

    const ok = byCall(ids.ok);
    const received = receiver.requests.find((r) => JSON.parse(r.body.toString('utf8')).messageId === 'm-ok')!;
    expect(ok.request).toMatchObject({ method: 'POST', url: `${receiver.url}/hook?env=qa`, queryString: [{ name: 'env', value: 'qa' }] });
    expect(ok.request.postData).toEqual({ mimeType: 'application/json', text: received.body.toString('utf8') });
    expect(ok.request.bodySize).toBe(received.body.length);
    const header = (list: { name: string; value: string }[], name: string) => list.find((h) => h.name.toLowerCase() === name)?.value;
    expect(header(ok.request.headers, 'x-signature')).toBe(received.headers['x-signature']);
    expect(ok.response).toMatchObject({ status: 200, statusText: 'OK', content: { mimeType: 'application/json', text: '{"ok":true}', size: 11 } });
    expect(header(ok.response.headers, 'x-receiver')).toBe('yes');
    expect(ok.startedDateTime).toBe(attempt.startedAt);
    // The recorded phases: a new connection (plain HTTP: no TLS), then waiting for the first byte, then reading.
    const timing = attempt.timing!;
    expect(ok.timings).toEqual({
      blocked: -1,
      dns: -1,
      connect: timing.connectMs,
      ssl: -1,
      send: 0,
      wait: Math.round((timing.ttfbMs! - timing.connectMs!) * 10) / 10,
      receive: Math.round((timing.totalMs - timing.ttfbMs!) * 10) / 10,
    });
    expect(timing.reused).toBe(false);
    expect(ok._webhookLab).toEqual({
      callId: ids.ok,
      messageId: 'm-ok',
      deliveryId: attempt.deliveryId,
      attemptId: attempt.id,
      round: attempt.round,
      urlIndex: 0,
      trigger: 'scheduled',
      signature: received.headers['x-signature'],
      outcome: 'success',
      errorCode: null,
      errorMessage: null,
      timedOut: false,
      timeoutMs: null,
      tlsError: null,
      connectError: null,
    });

    expect(byCall(ids.gone).response).toMatchObject({ status: 410, statusText: 'Gone', content: { text: 'gone for good' } });
    expect(byCall(ids.gone)._webhookLab).toMatchObject({ outcome: 'failed', signature: null });

    // No response at all: status 0, the error as statusText and in the custom fields.
    const down = byCall(ids.down);
    expect(down.response).toMatchObject({ status: 0, bodySize: -1 });
    expect(down.response.statusText).not.toBe('');
    expect(down._webhookLab).toMatchObject({ outcome: 'retryable', errorCode: 'ECONNREFUSED', connectError: { code: 'ECONNREFUSED' } });
  });

  it('follows the same filters', async () => {
    const har = JSON.parse((await t.call('exportDeliveries', { format: 'har', status: 'failed' })).content) as Har;
    expect(await validHar(har)).toBe(true);
    expect(har.log.entries.map((e: HarEntry) => e._webhookLab.callId)).toEqual([ids.gone]);
    const empty = JSON.parse((await t.call('exportDeliveries', { format: 'har', type: 'alias' })).content) as Har;
    expect(await validHar(empty)).toBe(true);
    expect(empty.log.entries).toEqual([]);
  });
});

describe('export as a streamed file (GET /api/export/file)', () => {
  const TOKEN = 'export-token';
  let server: Awaited<ReturnType<typeof startControlServer>>;
  beforeAll(async () => {
    server = await startControlServer({ engine: t.engine, host: '127.0.0.1', port: 0, token: TOKEN });
  });
  afterAll(async () => {
    await server?.app.close();
  });
  const get = (query: string, token = TOKEN) => fetch(`${server.url}/api/export/file?${query}`, { headers: { authorization: `Bearer ${token}` } });

  it("is the operation's file, byte for byte, sent as a download", async () => {
    for (const [format, query] of [['jsonl', 'format=jsonl'], ['har', 'format=har'], ['jsonl', 'format=jsonl&status=delivered&limit=1']] as const) {
      const op = await t.call('exportDeliveries', Object.fromEntries(new URLSearchParams(query)) as { format: typeof format });
      const res = await get(query);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(`${op.contentType}; charset=utf-8`);
      expect(res.headers.get('content-disposition')).toMatch(new RegExp(`^attachment; filename="webhook-lab-[0-9TZ-]+\\.${format}"$`));
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(await res.text()).toBe(op.content);
    }
  });

  it('refuses a bad query with the field named, before sending anything; and needs the token', async () => {
    const bad = await get('format=har&status=bogus');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ fields: [{ path: 'status' }] });
    const noFormat = await get('limit=5');
    expect(noFormat.status).toBe(400);
    expect(await noFormat.json()).toMatchObject({ fields: [{ path: 'format' }] });
    expect((await get('format=jsonl&limit=0')).status).toBe(400);
    expect((await get('format=jsonl', 'wrong')).status).toBe(401);
  });
});

describe('a large export', () => {
  it('is read a piece at a time, with the event loop free between pieces', async () => {
    const bulk = await startTestEngine({ config: { sources: [{ name: 'bulk', writeKey: 'wk_bulk' }] } });
    try {
      for (let b = 0; b < 5; b++) {
        const batch = Array.from({ length: 90 }, (_, i) => ({ type: 'track', userId: `u${i}`, event: 'Bulk', messageId: `bulk-${b}-${i}` }));
        expect((await bulk.post('/v1/batch', { batch }, { writeKey: 'wk_bulk' })).status).toBe(200);
      }
      const file = bulk.engine.openExport(exportInputSchema.parse({ format: 'jsonl', limit: 1000 }));
      const pieces: { text: string; loopRan: boolean }[] = [];
      const it = file.chunks[Symbol.asyncIterator]();
      for (;;) {
        // Runs only if the exporter went back to the event loop before its next piece.
        let loopRan = false;
        setImmediate(() => (loopRan = true));
        const next = await it.next();
        if (next.done) break;
        pieces.push({ text: next.value, loopRan });
      }
      expect(pieces.length).toBeGreaterThanOrEqual(3);
      expect(pieces.slice(1).every((p) => p.loopRan)).toBe(true);
      const text = pieces.map((p) => p.text).join('');
      expect(lines(text).map((r) => r.call.messageId)).toEqual(Array.from({ length: 450 }, (_, n) => `bulk-${Math.floor(n / 90)}-${n % 90}`));
      expect(text).toBe((await bulk.call('exportDeliveries', { format: 'jsonl', limit: 1000 })).content);
    } finally {
      await bulk.stop();
    }
  });
});
