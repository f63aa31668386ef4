import { afterEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { startControlServer } from '../../src/main/server/control-server';
import { BodyPool } from '../../src/main/server/body-pool';
import { startTestEngine, type TestEngine } from '../helpers/engine';

// Issue 38: a large body is read and checked in a worker thread (body-pool.ts), a small one on the
// event loop. Both must answer alike: every body below goes to two labs made alike, one reading every
// body on the loop, the other every body in the worker, and the answers are compared whole.

const TOKEN = 'body-pool-token';
const open: { engine: TestEngine; close: () => Promise<unknown> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.close();
    await o.engine.stop();
    rmSync(o.engine.dataDir, { recursive: true, force: true });
  }
});

async function labReading(offloadBytes: number): Promise<{ url: string; bodies: BodyPool }> {
  const engine = await startTestEngine({});
  const bodies = new BodyPool({ offloadBytes });
  const server = await startControlServer({ engine: engine.engine, host: '127.0.0.1', port: 0, token: TOKEN, bodies });
  open.push({ engine, close: () => server.app.close() });
  return { url: server.url, bodies };
}

const mapping = (data: string) =>
  `{"sources":[{"name":"m","writeKey":"wk_m","webhooks":{"enabled":true,"mode":"actions","urls":[],"mappings":[{"name":"m","trigger":"type = \\"track\\"","url":"https://r.example/t","method":"POST","headers":{"A":"1","a":"2"},"data":${data}}]}}]}`;
const deep = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;

/** [method, path, body]: each answered the same by both labs, in this order (the writes build on each other). */
const CASES: [string, string, string][] = [
  ['POST', '/config', '{"sources":[{"name":"a","writeKey":"wk_a","webhooks":{"enabled":true,"urls":[{"url":"https://r.example/a"}],"sharedSecret":"s"}}]}'],
  ['POST', '/config', '{"sources":[{"name":"a","name":"b"}]}'],
  ['POST', '/config', '{"sources":[{"name":"p","__proto__":{"x":1}}]}'],
  ['POST', '/config', '{"sources":[{"name":"p","constructor":{"prototype":{}}}]}'],
  ['POST', '/config', mapping('{"e":{"@path":"$.event"},"__proto__":{"@path":"$.userId"}}')],
  ['POST', '/config', '{"sources":[{"name":"x","writeKey":"wk_x",}]}'],
  ['POST', '/config', '{"sources":[{"name":"x","unknown":true}],"settings":{"retentionCalls":-1}}'],
  ['POST', '/config', `{"sources":[],"settings":${deep(200)}}`],
  ['POST', '/config', deep(5_000)],
  ['POST', '/config', '[]'],
  ['POST', '/config', '"text"'],
  ['POST', '/config', 'null'],
  ['POST', '/config', '5'],
  ['POST', '/config', `{"__proto__":1,"x":${deep(8_000)}}`],
  ['POST', '/config', `{"sources":[${new Array(300).fill('1').join(',')}]}`],
  ['POST', '/sources', '{"name":"made","webhooks":{"enabled":true,"urls":[{"url":"http://127.0.0.1:0/"}]}}'],
  ['POST', '/sources', '{"name":"made2"}'],
  ['POST', '/sources', '{"name":"made2"}'],
  ['POST', '/sources', '{"name":""}'],
  ['POST', '/tracking-plans', '{"name":"plan","rules":[{"type":"TRACK","key":"E","version":1,"jsonSchema":{"type":"object"}}]}'],
  ['POST', '/tracking-plans', '{"name":"bad","rules":[{"type":"TRACK","key":"E","version":1,"jsonSchema":{"type":"nope"}}]}'],
  ['POST', '/tracking-plans/check', '{"call":{"type":"track","event":"E"}}'],
];

/** Ids and times differ between two labs: compared as what they are. */
function comparable(text: string): string {
  return text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
    .replace(/"wk_[A-Za-z0-9_-]{20,}"/g, '"<writeKey>"')
    .replace(/"(createdAt|updatedAt|at)":\d+/g, '"$1":<time>');
}

async function answer(url: string, [method, path, body]: [string, string, string]): Promise<string> {
  const res = await fetch(`${url}/api${path}`, { method, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body });
  return `${res.status} ${comparable(await res.text())}`;
}

describe('the control API reads a body alike on the loop and in its worker', () => {
  it('answers every body of the corpus the same, whichever reads it', async () => {
    const loop = await labReading(Number.POSITIVE_INFINITY);
    const worker = await labReading(0);
    const seen = new Set<number>();
    for (const c of CASES) {
      const [a, b] = [await answer(loop.url, c), await answer(worker.url, c)];
      expect(b, `${c[0]} ${c[1]} ${c[2].slice(0, 120)}`).toBe(a);
      seen.add(Number(a.slice(0, 3)));
    }
    // The corpus reaches both outcomes, and every body went where it was sent.
    expect([...seen].sort()).toEqual(expect.arrayContaining([200, 400]));
    expect(loop.bodies.stats()).toEqual({ worker: 0, fallback: 0 });
    expect(worker.bodies.stats()).toEqual({ worker: CASES.length, fallback: 0 });
  });

  it('a body its reader runs out of memory on is refused (413), never read again on the loop, and the lab goes on', async () => {
    const engine = await startTestEngine({});
    const lines: string[] = [];
    const bodies = new BodyPool({ offloadBytes: 0, heapMb: 16, log: (l) => lines.push(l) });
    const server = await startControlServer({ engine: engine.engine, host: '127.0.0.1', port: 0, token: TOKEN, bodies });
    open.push({ engine, close: () => server.app.close() });
    // Each item an error of the schema: a million of them outgrow the reader's 16 MB.
    const answer1 = await answer(server.url, ['POST', '/config', `{"sources":[${new Array(1_000_000).fill('1').join(',')}]}`]);
    expect(answer1).toMatch(/^413 .*"code":"too_large"/);
    expect(answer1).toMatch(/too large for the lab to read/);
    expect(lines.join('\n')).toMatch(/refused: its reader stopped/);
    expect(await answer(server.url, ['POST', '/sources', '{"name":"after"}'])).toMatch(/^200 /);
  });

  it('names at most 100 problems, and how many more there were', async () => {
    const { url } = await labReading(0);
    const text = await answer(url, ['POST', '/config', `{"sources":[${new Array(5_000).fill('1').join(',')}]}`]);
    const body = JSON.parse(text.slice(4)) as { fields: { path: string; message: string }[] };
    expect(body.fields).toHaveLength(101);
    expect(body.fields.at(-1)).toEqual({ path: '', message: 'and 4900 more problems' });
  });

  it('a worker that cannot start costs nothing but time: the body is read on the loop, and the server says so', async () => {
    const engine = await startTestEngine({});
    const lines: string[] = [];
    const bodies = new BodyPool({ offloadBytes: 0, workerFile: () => Promise.reject(new Error('no such file')), log: (l) => lines.push(l) });
    const server = await startControlServer({ engine: engine.engine, host: '127.0.0.1', port: 0, token: TOKEN, bodies });
    open.push({ engine, close: () => server.app.close() });
    expect(await answer(server.url, ['POST', '/sources', '{"name":"fallback"}'])).toMatch(/^200 /);
    expect(bodies.stats()).toEqual({ worker: 0, fallback: 1 });
    expect(lines.join('\n')).toMatch(/read on the event loop: its worker failed \(no such file\)/);
  });
});
