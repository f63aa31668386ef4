import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../helpers/engine';

// Pipelined requests (several requests written at once on one connection, README "The collector"):
// every call that is stored gets its answer, in order, before the connection closes; a request behind
// an answer that closes the connection (an error with `Connection: close`) is neither stored nor
// answered, so a client resending it makes no duplicate. Raw bytes in one write over a real socket.

const KEY = 'wk_pipe';
const AUTH = `Basic ${Buffer.from(`${KEY}:`).toString('base64')}`;
const OK = '{"success":true}';

/** One request with a Content-Length (the collector's fast path). */
const sized = (userId: string, event: string, path = '/v1/track') => {
  const body = JSON.stringify({ userId, event });
  return `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
};
/** One chunked request (Fastify's route). */
const chunked = (userId: string, event: string) => {
  const body = JSON.stringify({ userId, event });
  return `POST /v1/track HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nTransfer-Encoding: chunked\r\n\r\n${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`;
};
const GARBAGE = 'GARBAGE\r\n\r\n';

interface Answer {
  status: string;
  connection: string | undefined;
  body: string;
}

/** Writes `bytes` in one write and reads every answer until the collector closes the connection. */
function exchange(url: string, bytes: string): Promise<Answer[]> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.setTimeout(15_000, () => socket.destroy(new Error('the collector did not close the connection')));
    socket.on('end', () => {
      socket.end();
      resolve(parseAnswers(Buffer.concat(chunks).toString('latin1')));
    });
  });
}

function parseAnswers(text: string): Answer[] {
  const out: Answer[] = [];
  let at = 0;
  while (at < text.length) {
    const head = text.indexOf('\r\n\r\n', at);
    if (head === -1) throw new Error(`not an HTTP answer: ${JSON.stringify(text.slice(at))}`);
    const [status, ...lines] = text.slice(at, head).split('\r\n');
    const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    const length = Number(headers.get('content-length'));
    out.push({ status, connection: headers.get('connection'), body: text.slice(head + 4, head + 4 + length) });
    at = head + 4 + length;
  }
  return out;
}

const ok: Answer = { status: 'HTTP/1.1 200 OK', connection: 'keep-alive', body: OK };
const badRequest = (message: string): Answer => ({ status: 'HTTP/1.1 400 Bad Request', connection: 'close', body: JSON.stringify({ success: false, message }) });
const notHttp = badRequest('bad request: HPE_INVALID_METHOD');

describe('pipelined requests', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine({ config: { sources: [{ name: 'pipe', writeKey: KEY }] } });
  });
  afterAll(() => t.stop());

  /** Events stored for userId, once a call sent after them (on another connection) is committed. */
  async function stored(userId: string): Promise<string[]> {
    expect((await t.post('/v1/track', { userId: `${userId}-marker`, event: 'M' }, { writeKey: KEY })).status).toBe(200);
    const page = await t.call('listMessages', { userId, limit: 50 });
    const calls = await Promise.all(page.items.map(async (m) => (await t.call('getMessage', { id: m.id })).call));
    return calls.filter((c) => c.userId === userId).map((c) => c.label ?? '').sort();
  }

  it('a call followed by bytes that are not HTTP: its 200, then the 400, then the close', async () => {
    expect(await exchange(t.collectorUrl, sized('g1', 'P') + GARBAGE)).toEqual([ok, notHttp]);
    expect(await stored('g1')).toEqual(['P']);
  });

  it('three calls followed by bytes that are not HTTP: three 200s in order, then the 400', async () => {
    const bytes = sized('g3', 'A') + sized('g3', 'B', '/v1/t') + sized('g3', 'C') + GARBAGE;
    expect(await exchange(t.collectorUrl, bytes)).toEqual([ok, ok, ok, notHttp]);
    expect(await stored('g3')).toEqual(['A', 'B', 'C']);
  });

  it('the same on the chunked path (Fastify)', async () => {
    expect(await exchange(t.collectorUrl, chunked('gc', 'A') + chunked('gc', 'B') + GARBAGE)).toEqual([ok, ok, notHttp]);
    expect(await stored('gc')).toEqual(['A', 'B']);
  });

  it('a 400 KB batch between two calls waits its turn with its body unread: three 200s, everything stored', async () => {
    const batch = JSON.stringify({ batch: Array.from({ length: 40 }, (_, i) => ({ type: 'track', userId: 'b1', event: `B${String(i).padStart(3, '0')}`, properties: { pad: 'x'.repeat(10_000) } })) });
    const request = `POST /v1/batch HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Length: ${batch.length}\r\n\r\n${batch}`;
    expect(await exchange(t.collectorUrl, sized('b1', 'A') + request + sized('b1', 'Z') + GARBAGE)).toEqual([ok, ok, ok, notHttp]);
    const events = await stored('b1');
    expect([events.length, events[0], events.at(-1)]).toEqual([42, 'A', 'Z']);
  });

  it('a call behind an oversized one (400, connection closed) is neither stored nor answered', async () => {
    const big = JSON.stringify({ userId: 'big', event: 'X', properties: { pad: 'x'.repeat(40 * 1024) } });
    const oversized = `POST /v1/track HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Length: ${big.length}\r\n\r\n${big}`;
    const answers = await exchange(t.collectorUrl, sized('o1', 'A') + oversized + sized('o1', 'C'));
    expect(answers).toEqual([ok, { ...badRequest('call is larger than 32768 bytes (32 KB), the limit for a single call'), connection: 'close' }]);
    expect(await stored('o1')).toEqual(['A']);
  });

  it('a POST with a body but no Content-Length: its own 400 first, then the 400 for the body read as a request', async () => {
    const body = JSON.stringify({ userId: 'n1', event: 'A' });
    const bytes = `POST /v1/track HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\n\r\n${body}`;
    const answers = await exchange(t.collectorUrl, bytes);
    expect(answers).toEqual([{ ...badRequest('request body is empty: send a JSON object'), connection: 'keep-alive' }, notHttp]);
    expect(await stored('n1')).toEqual([]);
  });
});
