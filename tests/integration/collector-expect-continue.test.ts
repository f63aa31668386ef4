import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../helpers/engine';
import { MAX_BATCH_BYTES, MAX_CALL_BYTES } from '../../src/shared/limits';

// `Expect: 100-continue` (curl sends it before large bodies): a body over the route's limit is refused
// before it is sent, instead of a 100 Continue inviting the client to upload what will be refused.
// Raw sockets, so what comes first on the wire is seen.

const KEY = 'wk_expect';
const auth = `Basic ${Buffer.from(`${KEY}:`).toString('base64')}`;

/** A socket whose received bytes are kept, and whose end is known. */
function open(url: string): Promise<{ socket: Socket; text: () => string; closed: () => boolean }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    let data = '';
    let closed = false;
    const socket = connect(Number(port), hostname, () => resolve({ socket, text: () => data, closed: () => closed }));
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (data += d));
    socket.on('close', () => (closed = true));
    socket.on('error', reject);
  });
}

const head = (path: string, length: string) =>
  `POST ${path} HTTP/1.1\r\nHost: lab\r\nAuthorization: ${auth}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`;

describe('Expect: 100-continue at the collector', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine({ config: { sources: [{ name: 'expect', writeKey: KEY }] } });
  });
  afterAll(() => t.stop());

  for (const [path, length, message] of [
    ['/v1/track', String(MAX_CALL_BYTES + 1), `call is larger than ${MAX_CALL_BYTES} bytes (32 KB), the limit for a single call`],
    ['/v1/batch', String(MAX_BATCH_BYTES + 1), `batch is larger than ${MAX_BATCH_BYTES} bytes (500 KB), the limit for a batch request`],
    ['/v1/t?x=1', '123456789012', `call is larger than ${MAX_CALL_BYTES} bytes (32 KB), the limit for a single call`],
  ] as const) {
    it(`a Content-Length of ${length} to ${path} is refused at once, without 100 Continue, and the connection ends`, async () => {
      const c = await open(t.collectorUrl);
      c.socket.write(head(path, length));
      await expect.poll(() => c.closed(), { timeout: 10_000 }).toBe(true);
      expect(c.text()).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(c.text()).not.toContain('100 Continue');
      expect(c.text()).toMatch(/\r\nconnection: close\r\n/i);
      expect(JSON.parse(c.text().split('\r\n\r\n')[1])).toEqual({ success: false, message });
    });
  }

  it('a body within the limit gets 100 Continue, then is stored and answered 200', async () => {
    const body = JSON.stringify({ userId: 'u', event: 'Asked First', messageId: 'expect-ok-1' });
    const c = await open(t.collectorUrl);
    c.socket.write(head('/v1/track', String(Buffer.byteLength(body))));
    await expect.poll(() => c.text(), { timeout: 10_000 }).toBe('HTTP/1.1 100 Continue\r\n\r\n');
    c.socket.write(body);
    await expect.poll(() => c.text(), { timeout: 10_000 }).toContain('{"success":true}');
    expect(c.text()).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/);
    c.socket.destroy();
    const { items } = await t.call('listMessages', { q: 'expect-ok-1', limit: 10 });
    expect(items.map((m) => m.label)).toEqual(['Asked First']);
  });

  it('a zero-padded Content-Length within the limit (0000000105) is its number: 100 Continue, stored (issue 38)', async () => {
    const body = JSON.stringify({ userId: 'u', event: 'Padded Length', messageId: 'expect-padded-1' });
    const c = await open(t.collectorUrl);
    c.socket.write(head('/v1/track', String(Buffer.byteLength(body)).padStart(10, '0')));
    await expect.poll(() => c.text(), { timeout: 10_000 }).toBe('HTTP/1.1 100 Continue\r\n\r\n');
    c.socket.write(body);
    await expect.poll(() => c.text(), { timeout: 10_000 }).toContain('{"success":true}');
    c.socket.destroy();
    const { items } = await t.call('listMessages', { q: 'expect-padded-1', limit: 10 });
    expect(items.map((m) => m.label)).toEqual(['Padded Length']);
  });
});
