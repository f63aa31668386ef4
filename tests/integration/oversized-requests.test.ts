import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlServer } from '../../src/main/server/control-server';
import { startTestEngine, type TestEngine } from '../helpers/engine';
import { rawExchange, type RawExchange } from '../helpers/raw-http';

// Finding 5 of issue 13: a request over a limit gets the answer the README promises, not a TCP
// reset, even when the client sends the whole body at full speed without waiting for an answer.
// The reset came from closing the connection with the rest of the body unread. Each case runs a few
// times: before the fix the 5 MB batch was reset every time, the others depended on timing.
const TOKEN = 'oversize-test-token';
const ROUNDS = 4;
let t: TestEngine;
let control: Awaited<ReturnType<typeof startControlServer>>;
let receiverPort: number;

beforeAll(async () => {
  t = await startTestEngine({ config: { sources: [{ name: 'app', writeKey: 'wk' }] } });
  control = await startControlServer({ engine: t.engine, host: '127.0.0.1', port: 0, token: TOKEN });
  const r = await t.call('createReceiver', { name: 'big', path: '/big' });
  receiverPort = Number(new URL(r.url).port);
});
afterAll(async () => {
  await control?.app.close();
  await t?.stop();
});

const collectorPort = () => Number(new URL(t.collectorUrl).port);
const basic = `Authorization: Basic ${Buffer.from('wk:').toString('base64')}`;

/** The answer's JSON body, checked against its Content-Length. */
function jsonBody(r: RawExchange): Record<string, unknown> {
  const [head, body] = r.text.split('\r\n\r\n');
  expect(Number(/content-length: (\d+)/i.exec(head)?.[1])).toBe(Buffer.byteLength(body, 'latin1'));
  return JSON.parse(body) as Record<string, unknown>;
}

function expectAnswered(r: RawExchange, status: number): Record<string, unknown> {
  expect(r.status, r.text.slice(0, 300)).toBe(status);
  expect(r.ended, `${status} then ${r.ended}`).toBe('closed');
  return jsonBody(r);
}

describe('bodies over the limit, sent at full speed', () => {
  it('a 5 MB batch to the collector: 400 with its message, no reset', async () => {
    const body = Buffer.alloc(5 * 1024 * 1024, 'a');
    for (let i = 0; i < ROUNDS; i++) {
      const r = await rawExchange(collectorPort(), `POST /v1/batch HTTP/1.1\r\nHost: 127.0.0.1\r\n${basic}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}`, body);
      expect(expectAnswered(r, 400).message).toMatch(/batch is larger than 512000 bytes/);
    }
  });

  it('a 100 KB call to /v1/track: 400 with its message, no reset (declared and chunked)', async () => {
    const body = Buffer.alloc(100 * 1024, 'a');
    for (let i = 0; i < ROUNDS; i++) {
      const r = await rawExchange(collectorPort(), `POST /v1/track HTTP/1.1\r\nHost: 127.0.0.1\r\n${basic}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}`, body);
      expect(expectAnswered(r, 400).message).toMatch(/call is larger than 32768 bytes/);
      const chunked = Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]);
      const c = await rawExchange(collectorPort(), `POST /v1/track HTTP/1.1\r\nHost: 127.0.0.1\r\n${basic}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked`, chunked);
      expect(expectAnswered(c, 400).message).toMatch(/call is larger than 32768 bytes/);
    }
  });

  it('a 5 MB body to the control API: 413, no reset', async () => {
    const body = Buffer.alloc(5 * 1024 * 1024, 'a');
    for (let i = 0; i < ROUNDS; i++) {
      const r = await rawExchange(control.port, `POST /api/sources HTTP/1.1\r\nHost: 127.0.0.1:${control.port}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}`, body);
      expect(expectAnswered(r, 413).error).toBeTypeOf('string');
    }
    expect((await t.call('listSources', {})).map((s) => s.name)).toEqual(['app']);
  });
});

describe('request lines and headers over 16 KB', () => {
  const servers = [
    { name: 'collector', port: () => collectorPort(), path: '/v1/track', field: 'message' },
    { name: 'control server', port: () => control.port, path: '/api/sources', field: 'error' },
    { name: 'mock receiver', port: () => receiverPort, path: '/big', field: 'error' },
  ];
  describe.each(servers)('$name', (s) => {
    it.each([64, 100])('a %s KB URL: 431 with a JSON body, no reset', async (kb) => {
      for (let i = 0; i < ROUNDS; i++) {
        const r = await rawExchange(s.port(), `GET ${s.path}?q=${'a'.repeat(kb * 1024)} HTTP/1.1\r\nHost: 127.0.0.1`);
        expect(expectAnswered(r, 431)[s.field]).toMatch(/larger than 16 KB/);
      }
    });

    it('a 100 KB header: 431, no reset', async () => {
      const r = await rawExchange(s.port(), `POST ${s.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'b'.repeat(100 * 1024)}\r\nContent-Length: 2`, '{}');
      expect(expectAnswered(r, 431)[s.field]).toMatch(/larger than 16 KB/);
    });
  });
});

it('the servers still answer afterwards', async () => {
  expect((await t.post('/v1/track', { userId: 'u', event: 'After' }, { writeKey: 'wk' })).status).toBe(200);
  expect((await fetch(`${control.url}/api/sources`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
});
