import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { startControlServer } from '../../src/main/server/control-server';
import { MAX_CALL_DEPTH, TOO_DEEP_REASON } from '../../src/shared/nesting';
import type { CallDetail, CallSummary } from '../../src/shared/types';
import { startTestEngine, waitFor, webhookSource, type TestEngine } from '../helpers/engine';
import { startReceiver, type TestReceiver } from '../helpers/receiver';

// Issue 13, findings 2 and 3: a call nested deeper than MAX_CALL_DEPTH levels is stored as dropped
// (the rest of its batch is accepted), and every stored call, at any depth JSON.parse accepts, reads
// back through GET /api/messages/:id and the exports. Real sockets, a real SQLite file.

const TOKEN = 'deep-nesting-token';
const HOOKS = 'wk_deep_hooks';
const QUIET = 'wk_deep_quiet';

/** `levels` arrays (or objects under key "a") inside each other, as JSON text. */
const nestedText = (levels: number, kind: 'array' | 'object' = 'array', inner = '1') =>
  kind === 'array' ? '['.repeat(levels) + inner + ']'.repeat(levels) : '{"a":'.repeat(levels) + inner + '}'.repeat(levels);

/** A track call as JSON text whose properties.p holds `levels` nested containers (the call itself is 2 more). */
const deepTrack = (levels: number, extra = '', kind: 'array' | 'object' = 'array') =>
  `{"type":"track","userId":"u_deep","event":"Deep"${extra},"properties":{"p":${nestedText(levels, kind)}}}`;

let t: TestEngine;
let receiver: TestReceiver;
let server: Awaited<ReturnType<typeof startControlServer>>;

beforeAll(async () => {
  receiver = await startReceiver();
  t = await startTestEngine({
    config: { sources: [webhookSource('hooks', HOOKS, [`${receiver.url}/hook`], 'sec'), { name: 'quiet', writeKey: QUIET }] },
  });
  server = await startControlServer({ engine: t.engine, host: '127.0.0.1', port: 0, token: TOKEN });
});

afterAll(async () => {
  await server?.app.close();
  await t?.stop();
  await receiver?.close();
});

const apiGet = (path: string) => fetch(`${server.url}/api${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });

async function byMessageId(messageId: string): Promise<CallSummary> {
  const page = await t.call('listMessages', { q: messageId, limit: 5 });
  const found = page.items.find((c) => c.messageId === messageId);
  if (!found) throw new Error(`no call stored with messageId ${messageId}`);
  return found;
}

async function detail(id: number): Promise<CallDetail> {
  const res = await apiGet(`/messages/${id}`);
  const text = await res.text();
  expect(res.status, text.slice(0, 200)).toBe(200);
  return JSON.parse(text) as CallDetail;
}

const post = (path: string, body: string, writeKey: string) =>
  fetch(t.collectorUrl + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}` },
    body,
  });

describe('a call nested too deep', () => {
  it('10,000 nested arrays in a single track call (about 20 KB) on a Webhooks source: 200, stored as dropped with the reason', async () => {
    const body = deepTrack(10_000, ',"messageId":"m-deep-single"');
    expect(Buffer.byteLength(body)).toBeLessThan(32 * 1024);
    const res = await post('/v1/track', body, HOOKS);
    expect([res.status, await res.text()]).toEqual([200, '{"success":true}']);
    const c = await byMessageId('m-deep-single');
    expect([c.status, c.dropReason, c.deliveryState]).toEqual(['dropped', TOO_DEEP_REASON, 'dropped']);
    expect(TOO_DEEP_REASON).toBe(`nested too deep (more than ${MAX_CALL_DEPTH} levels)`);
  });

  it('in a batch, the deep call is dropped and the others are accepted and delivered', async () => {
    const body = `{"batch":[{"type":"track","userId":"u1","event":"Before","messageId":"m-before"},${deepTrack(10_000, ',"messageId":"m-deep-batch"')},{"type":"identify","userId":"u1","messageId":"m-after"}]}`;
    const res = await post('/v1/batch', body, HOOKS);
    expect(res.status).toBe(200);
    expect((await byMessageId('m-deep-batch')).dropReason).toBe(TOO_DEEP_REASON);
    for (const m of ['m-before', 'm-after']) {
      await waitFor(async () => (await byMessageId(m)).deliveryState === 'delivered', `${m} delivered`);
    }
  });

  it(`the limit counts objects and arrays from the call itself: ${MAX_CALL_DEPTH} levels are accepted and forwarded, ${MAX_CALL_DEPTH + 1} dropped`, async () => {
    // The call is level 1 and its properties level 2, so properties.p holds MAX_CALL_DEPTH - 2 more.
    for (const kind of ['array', 'object'] as const) {
      const ok = `m-limit-ok-${kind}`;
      const over = `m-limit-over-${kind}`;
      const res = await post(
        '/v1/batch',
        `{"batch":[${deepTrack(MAX_CALL_DEPTH - 2, `,"messageId":"${ok}"`, kind)},${deepTrack(MAX_CALL_DEPTH - 1, `,"messageId":"${over}"`, kind)}]}`,
        HOOKS,
      );
      expect(res.status).toBe(200);
      expect((await byMessageId(over)).dropReason).toBe(TOO_DEEP_REASON);
      const accepted = await waitFor(async () => {
        const c = await byMessageId(ok);
        return c.deliveryState === 'delivered' ? c : undefined;
      }, `${ok} delivered`);
      expect(accepted.status).toBe('accepted');
      const sent = receiver.requests.find((r) => r.body.toString().includes(ok));
      expect(JSON.parse(sent!.body.toString()).properties).toEqual({ p: JSON.parse(nestedText(MAX_CALL_DEPTH - 2, kind)) });
    }
  });

  it("an envelope context nested too deep drops the batch's calls (it is merged into each), and is answered 200", async () => {
    // The call is level 1, its context level 2, so context.x may hold MAX_CALL_DEPTH - 2 levels.
    const res = await post('/v1/batch', `{"context":{"x":${nestedText(MAX_CALL_DEPTH - 1)}},"batch":[{"type":"track","userId":"u","event":"E","messageId":"m-env-deep"}]}`, HOOKS);
    expect(res.status).toBe(200);
    expect((await byMessageId('m-env-deep')).dropReason).toBe(TOO_DEEP_REASON);
    const shallow = await post('/v1/batch', `{"context":{"x":${nestedText(MAX_CALL_DEPTH - 2)}},"batch":[{"type":"track","userId":"u","event":"E","messageId":"m-env-ok"}]}`, HOOKS);
    expect(shallow.status).toBe(200);
    expect((await byMessageId('m-env-ok')).status).toBe('accepted');
  });

  it('a `type` that is itself nested 10,000 deep is dropped as an unknown type, not a 500', async () => {
    const res = await post('/v1/batch', `{"batch":[{"type":${nestedText(10_000)},"userId":"u","messageId":"m-deep-type"}]}`, HOOKS);
    expect(res.status).toBe(200);
    expect((await byMessageId('m-deep-type')).dropReason).toMatch(/^unknown type/);
  });
});

describe('strict mode', () => {
  let s: TestEngine;
  beforeAll(async () => {
    s = await startTestEngine({ config: { sources: [webhookSource('hooks', HOOKS, [`${receiver.url}/hook`])] }, overrides: { strict: true } });
  });
  afterAll(() => s?.stop());

  it('a call nested too deep is a 400 naming its index; nothing of the request is stored', async () => {
    const body = `{"batch":[{"type":"track","userId":"u","event":"ok"},${deepTrack(10_000)}]}`;
    const res = await fetch(`${s.collectorUrl}/v1/batch`, { method: 'POST', headers: { authorization: `Basic ${Buffer.from(`${HOOKS}:`).toString('base64')}` }, body });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ success: false, message: `batch[1]: ${TOO_DEEP_REASON}` });
    expect((await s.call('health', {})).calls).toBe(0);
  });
});

describe('stored calls at any depth read back and export', () => {
  // Stored before the depth rule existed too: a database may hold accepted calls of any depth.
  const cases: [string, string, string][] = [
    ['Webhooks off', QUIET, 'm-read-quiet'],
    ['an unknown write key', 'wk_nobody_knows', 'm-read-unknown'],
    ['a Webhooks source (dropped)', HOOKS, 'm-read-dropped'],
  ];

  it.each(cases)('a 10,000-level single call on %s: GET /api/messages/:id is 200 with the call as received', async (_what, key, messageId) => {
    const body = deepTrack(10_000, `,"messageId":"${messageId}"`);
    expect((await post('/v1/track', body, key)).status).toBe(200);
    const d = await detail((await byMessageId(messageId)).id);
    expect(d.call.status).toBe('dropped');
    expect(d.call.raw).toBeNull();
    // The call as received, as compact JSON text (the body was sent compact, so byte for byte).
    expect(d.call.rawText).toBe(body);
  });

  it('a batch item 100,000 levels deep (200 KB) reads back; the shallow calls beside it keep their value form', async () => {
    const deep = deepTrack(100_000, ',"messageId":"m-read-100k"');
    const body = `{"batch":[{"type":"track","userId":"u","event":"Shallow","messageId":"m-read-shallow"},${deep}]}`;
    expect((await post('/v1/batch', body, QUIET)).status).toBe(200);
    const d = await detail((await byMessageId('m-read-100k')).id);
    expect([d.call.raw, d.call.rawText, d.call.normalized]).toEqual([null, deep, null]);
    const shallow = await detail((await byMessageId('m-read-shallow')).id);
    expect(shallow.call.raw).toEqual({ type: 'track', userId: 'u', event: 'Shallow', messageId: 'm-read-shallow' });
    expect(shallow.call.rawText).toBeUndefined();
  });

  it('a deep call accepted by an older version (no depth rule then) reads back, without a normalized form', async () => {
    // Such a row can only come from before this rule: write one the way the collector stored calls then.
    expect((await post('/v1/track', `{"userId":"u","event":"Legacy","messageId":"m-legacy"}`, QUIET)).status).toBe(200);
    const id = (await byMessageId('m-legacy')).id;
    const db = new Database(join(t.dataDir, 'webhook-lab.db'));
    try {
      const requestId = db.prepare('SELECT request_id FROM calls WHERE id = ?').pluck().get(id) as number;
      db.prepare('UPDATE requests SET body = ? WHERE id = ?').run(deepTrack(20_000, ',"messageId":"m-legacy"'), requestId);
    } finally {
      db.close();
    }
    const d = await detail(id);
    expect(d.call.status).toBe('accepted');
    expect([d.call.raw, d.call.normalized]).toEqual([null, null]);
    expect(d.call.rawText).toBe(deepTrack(20_000, ',"messageId":"m-legacy"'));
  });

  it("a purge erases a user's call from a batch that keeps another's 10,000-level call, which still reads back", async () => {
    const deep = deepTrack(10_000, ',"messageId":"m-purge-keep"').replace('"u_deep"', '"u_keep"');
    const body = `{"batch":[{"type":"track","userId":"u_purged","event":"Gone","messageId":"m-purge-gone"},${deep}]}`;
    expect((await post('/v1/batch', body, QUIET)).status).toBe(200);
    const kept = (await byMessageId('m-purge-keep')).id;
    expect(await t.call('createDeletion', { userId: 'u_purged', purge: true })).toMatchObject({ purgedCalls: 1 });
    expect((await t.call('listMessages', { q: 'm-purge-gone', limit: 5 })).items).toEqual([]);
    const d = await detail(kept);
    expect([d.call.rawText, d.call.request.batchIndex]).toEqual([deep, 1]);
  });

  it('a single call whose body holds a 10,000-level `type` (the route names the type) is accepted; it reads back as text with its normalized form', async () => {
    const body = `{"type":${nestedText(10_000)},"userId":"u","event":"Typed","messageId":"m-deep-ignored-type"}`;
    expect((await post('/v1/track', body, HOOKS)).status).toBe(200);
    const c = await waitFor(async () => {
      const found = await byMessageId('m-deep-ignored-type');
      return found.deliveryState === 'delivered' ? found : undefined;
    }, 'the call delivered');
    const d = await detail(c.id);
    expect([d.call.status, d.call.raw, d.call.rawText]).toEqual(['accepted', null, body]);
    expect(d.call.normalized).toMatchObject({ type: 'track', event: 'Typed', messageId: 'm-deep-ignored-type' });
  });

  it('the JSON Lines and HAR exports complete, and every line equals GET /api/messages/:id', async () => {
    const jsonl = await apiGet('/export/file?format=jsonl&limit=10000');
    const text = await jsonl.text();
    expect(jsonl.status, text.slice(0, 200)).toBe(200);
    const lines = text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as CallDetail);
    expect(lines.length).toBe((await t.call('health', {})).calls);
    const deep = lines.find((l) => l.call.messageId === 'm-read-100k')!;
    expect(deep).toEqual(await detail(deep.call.id));
    const har = await apiGet('/export/file?format=har&limit=10000');
    expect(har.status).toBe(200);
    expect((JSON.parse(await har.text()) as { log: { entries: unknown[] } }).log.entries.length).toBeGreaterThan(0);
    const op = await t.call('exportDeliveries', { format: 'jsonl', limit: 10_000 });
    expect(op.content).toBe(text);
  });
});
