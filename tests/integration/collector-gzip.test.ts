import { request as httpRequest } from 'node:http';
import { deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../helpers/engine';
import { MAX_BATCH_BYTES, MAX_CALL_BYTES } from '../../src/shared/limits';

// Compressed request bodies (Content-Encoding: gzip or deflate), as Segment's tracking API takes them
// and some of its libraries send them (analytics-python's gzip=True). Over a real socket, through both
// of the collector's paths: a body with a Content-Length (the fast path) and a chunked one (Fastify's).

const KEY = 'wk_gzip';
const basic = `Basic ${Buffer.from(`${KEY}:`).toString('base64')}`;

function post(url: string, path: string, body: Buffer, headers: Record<string, string>, chunked: boolean): Promise<{ status: number; body: { success: boolean; message?: string }; acceptEncoding?: string }> {
  return new Promise((resolve, reject) => {
    const all: Record<string, string | number> = { 'content-type': 'application/json', authorization: basic, ...headers };
    if (!chunked) all['content-length'] = body.length;
    const req = httpRequest(`${url}${path}`, { method: 'POST', headers: all, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      const acceptEncoding = res.headers['accept-encoding'];
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')), ...(acceptEncoding === undefined ? {} : { acceptEncoding }) }));
    });
    req.on('error', reject);
    if (chunked) {
      req.write(body.subarray(0, 1));
      req.end(body.subarray(1));
    } else req.end(body);
  });
}

const track = (id: string, extra = '') => JSON.stringify({ userId: 'u1', event: 'Order Completed', messageId: id, properties: { note: extra } });

for (const chunked of [false, true]) {
  describe(`compressed bodies, ${chunked ? 'chunked (Fastify’s route)' : 'with a Content-Length (the fast path)'}`, () => {
    let t: TestEngine;
    const tag = chunked ? 'c' : 'l';
    beforeAll(async () => {
      t = await startTestEngine({ config: { sources: [{ name: 'gzip', writeKey: KEY }] } });
    });
    afterAll(() => t.stop());

    const stored = async (id: string) => {
      const { items } = await t.call('listMessages', { q: id, limit: 10 });
      if (items.length !== 1) return null;
      return (await t.call('getMessage', { id: items[0].id })).call;
    };
    const total = async () => (await t.call('listMessages', { limit: 1 })).total;

    it('a gzip call is stored as the JSON it was before compression, and says how it came', async () => {
      const id = `${tag}-gz-1`;
      const r = await post(t.collectorUrl, '/v1/track', gzipSync(track(id, 'ünïcode')), { 'content-encoding': 'gzip' }, chunked);
      expect(r).toEqual({ status: 200, body: { success: true } });
      const call = await stored(id);
      expect(call?.request.contentEncoding).toBe('gzip');
      expect(call?.rawText ?? JSON.stringify(call?.raw)).toContain('ünïcode');
      expect(call?.status).toBe('accepted');
    });

    it('a deflate batch, and the header in any case with spaces', async () => {
      const ids = [0, 1, 2].map((i) => `${tag}-df-${i}`);
      const batch = JSON.stringify({ batch: ids.map((id) => ({ type: 'track', userId: 'u', event: 'E', messageId: id })) });
      const r = await post(t.collectorUrl, '/v1/batch', deflateSync(batch), { 'content-encoding': ' Deflate ' }, chunked);
      expect(r.status).toBe(200);
      for (const id of ids) expect((await stored(id))?.request.contentEncoding).toBe('deflate');
    });

    it('a list of codings is undone from the last back; x-gzip, and raw deflate, are taken', async () => {
      const twice = `${tag}-twice`;
      expect((await post(t.collectorUrl, '/v1/track', gzipSync(gzipSync(track(twice))), { 'content-encoding': 'gzip, gzip' }, chunked)).status).toBe(200);
      expect((await stored(twice))?.request.contentEncoding).toBe('gzip, gzip');
      const listed = `${tag}-listed`;
      expect((await post(t.collectorUrl, '/v1/track', gzipSync(track(listed)), { 'content-encoding': 'identity, gzip' }, chunked)).status).toBe(200);
      expect((await stored(listed))?.request.contentEncoding).toBe('gzip');
      const x = `${tag}-xgzip`;
      expect((await post(t.collectorUrl, '/v1/track', gzipSync(track(x)), { 'content-encoding': 'x-gzip' }, chunked)).status).toBe(200);
      expect((await stored(x))?.request.contentEncoding).toBe('x-gzip');
      const raw = `${tag}-raw`;
      expect((await post(t.collectorUrl, '/v1/track', deflateRawSync(track(raw)), { 'content-encoding': 'deflate' }, chunked)).status).toBe(200);
      expect((await stored(raw))?.status).toBe('accepted');
    });

    it('a gzip body sent without its header is refused saying what to send', async () => {
      const r = await post(t.collectorUrl, '/v1/track', gzipSync(track(`${tag}-unsaid`)), {}, chunked);
      expect(r.status).toBe(400);
      expect(r.body.message).toMatch(/^invalid JSON: .*\(the body looks gzip-compressed: send it with Content-Encoding: gzip\)$/s);
    });

    it('an uncompressed body (no header, or identity) keeps no encoding', async () => {
      for (const [i, headers] of ([{}, { 'content-encoding': 'identity' }] as Record<string, string>[]).entries()) {
        const id = `${tag}-plain-${i}`;
        expect((await post(t.collectorUrl, '/v1/track', Buffer.from(track(id)), headers, chunked)).status).toBe(200);
        expect((await stored(id))?.request.contentEncoding).toBeUndefined();
      }
    });

    it('a small body that inflates past the limit is refused with the route’s limit, and nothing is stored', async () => {
      const before = await total();
      // 10 MB of one character: about 10 KB compressed, within the single call's 32 KB as sent.
      const bomb = gzipSync(Buffer.from(`{"userId":"u","event":"E","x":"${'a'.repeat(10 * 1024 * 1024)}"}`));
      expect(bomb.length).toBeLessThan(MAX_CALL_BYTES);
      const single = await post(t.collectorUrl, '/v1/track', bomb, { 'content-encoding': 'gzip' }, chunked);
      expect(single.status).toBe(400);
      expect(single.body.message).toBe(`call is larger than ${MAX_CALL_BYTES} bytes (32 KB), the limit for a single call once decompressed (Content-Encoding: gzip)`);
      const big = gzipSync(JSON.stringify({ batch: [{ type: 'track', userId: 'u', event: 'E', properties: { x: 'b'.repeat(MAX_BATCH_BYTES) } }] }));
      const batch = await post(t.collectorUrl, '/v1/batch', big, { 'content-encoding': 'gzip' }, chunked);
      expect(batch.status).toBe(400);
      expect(batch.body.message).toContain(`batch is larger than ${MAX_BATCH_BYTES} bytes`);
      expect(await total()).toBe(before);
    });

    it('a call just within the limit once decompressed is taken', async () => {
      const id = `${tag}-edge`;
      const base = track(id, '');
      const body = track(id, 'e'.repeat(MAX_CALL_BYTES - Buffer.byteLength(base)));
      expect(Buffer.byteLength(body)).toBe(MAX_CALL_BYTES);
      expect((await post(t.collectorUrl, '/v1/track', gzipSync(body), { 'content-encoding': 'gzip' }, chunked)).status).toBe(200);
      expect((await stored(id))?.status).toBe('accepted');
    });

    it('bytes that are not gzip, and an encoding it does not know, are refused saying so', async () => {
      const before = await total();
      const broken = await post(t.collectorUrl, '/v1/track', Buffer.from(track(`${tag}-broken`)), { 'content-encoding': 'gzip' }, chunked);
      expect(broken.status).toBe(400);
      expect(broken.body.message).toMatch(/^body is not valid gzip data \(Content-Encoding: gzip\): /);
      const truncated = gzipSync(track(`${tag}-cut`)).subarray(0, 20);
      const cut = await post(t.collectorUrl, '/v1/track', truncated, { 'content-encoding': 'gzip' }, chunked);
      expect(cut.status).toBe(400);
      expect(cut.acceptEncoding).toBeUndefined();
      // A 415 for a coding not taken names the ones taken (RFC 7694: Accept-Encoding in the answer).
      const br = await post(t.collectorUrl, '/v1/track', gzipSync(track(`${tag}-br`)), { 'content-encoding': 'br' }, chunked);
      expect(br).toEqual({ status: 415, body: { success: false, message: 'unsupported Content-Encoding "br": send the body as it is, or compressed with gzip or deflate' }, acceptEncoding: 'gzip, deflate' });
      const list = await post(t.collectorUrl, '/v1/track', gzipSync(track(`${tag}-br2`)), { 'content-encoding': 'gzip, br' }, chunked);
      expect([list.status, list.acceptEncoding]).toEqual([415, 'gzip, deflate']);
      expect(await total()).toBe(before);
    });
  });
}
