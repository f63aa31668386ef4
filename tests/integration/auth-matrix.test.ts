import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, OP_NAMES } from '../../src/shared/api.contract';
import { API_PREFIX, EXPORT_FILE_PATH } from '../../src/shared/http-mapping';
import { startControlServer } from '../../src/main/server/control-server';
import { startTestEngine, waitFor, type TestEngine } from '../helpers/engine';

// The control API's lock, attacked the way a hostile local process would: every route of the
// contract (so a new operation is covered without anyone listing it) plus the routes outside it,
// each spelled every way a router might normalize, without the token or from another origin.
// Nothing may answer with data, and the database must be byte-for-byte what it was.

const TOKEN = 'matrix-token-0123456789';
const SECRET = 'matrix-shared-secret-must-not-leak';
const WRITE_KEY = 'wk_matrix_must_not_leak';
const PROBE = '__matrix_probe__';

let te: TestEngine;
let server: { app: FastifyInstance; url: string; port: number };
let staticDir: string;
const ids: Record<string, string> = {};

interface Route {
  name: string;
  method: string;
  /** Canonical path with its parameters filled with ids that exist. */
  path: string;
  /** A body that would do harm if the lock were open. */
  body?: string;
}

// Inputs that would change the database if a request got through; operations not listed get `{}`.
const HARMFUL: Record<string, unknown> = {
  createSource: { name: 'pwned' },
  updateSource: { name: 'pwned' },
  updateSettings: { timeScale: 7 },
  createDeletion: { userId: 'u_matrix', purge: true },
  createReceiver: { name: 'pwned', path: '/pwned', behavior: { status: 500 } },
  updateReceiver: { name: 'pwned' },
  clientUpdateSettings: { flushAt: 3 },
  clientSend: { type: 'track', userId: 'pwned', event: 'pwned' },
  importConfig: { sources: [{ name: 'pwned' }] },
  replayMessage: {},
  rotateSecret: { which: 'sharedSecret' },
};

function fillParams(path: string): string {
  const collection = /^\/(\w+)/.exec(path)?.[1] ?? '';
  return path.replace(/:([A-Za-z]+)/g, (_, param: string) => (param === 'id' ? ids[collection] ?? ids.sources : ids[param] ?? ids.sources));
}

function routes(): Route[] {
  const contract = OP_NAMES.map((name): Route => {
    const def = api[name];
    const hasBody = def.method !== 'GET' && def.method !== 'DELETE';
    return { name, method: def.method, path: API_PREFIX + fillParams(def.path), body: hasBody ? JSON.stringify(HARMFUL[name] ?? {}) : undefined };
  });
  return [
    ...contract,
    { name: 'events stream', method: 'GET', path: `${API_PREFIX}/events` },
    { name: 'export file', method: 'GET', path: `${API_PREFIX}${EXPORT_FILE_PATH}?format=jsonl` },
    { name: 'unknown api path', method: 'GET', path: `${API_PREFIX}/sources-secret` },
  ];
}

interface Variant {
  label: string;
  target: string;
  headers: Record<string, string>;
  /** Statuses that count as refused for this variant. */
  expect: number[];
}

const bearer = { authorization: `Bearer ${TOKEN}` };
const refused = [400, 401, 403, 404];

/** Every spelling of the route a hostile client might try; none of them carries a valid token to a valid origin. */
function variants(r: Route, port: number): Variant[] {
  const [path, query] = r.path.split('?');
  const rest = path.slice(API_PREFIX.length); // "/sources/abc"
  const q = query ? `?${query}` : '';
  const withQuery = (p: string, extra: string) => `${p}${q ? `${q}&` : '?'}${extra}`;
  const encodeFirst = (segment: string) => `%${segment.charCodeAt(0).toString(16)}${segment.slice(1)}`;
  const lastSlash = path.lastIndexOf('/');
  const v = (label: string, target: string, headers: Record<string, string> = {}, expected = refused): Variant => ({ label, target, headers, expect: expected });
  return [
    v('no token', path + q, {}, [401]),
    v('wrong token', path + q, { authorization: `Bearer ${TOKEN.slice(0, -1)}X` }, [401]),
    v('token in the query only', withQuery(path, `token=${TOKEN}`), {}, [401]),
    v('access_token in the query only', withQuery(path, `access_token=${TOKEN}`), {}, [401]),
    v('Basic with the token', path + q, { authorization: `Basic ${Buffer.from(`${TOKEN}:`).toString('base64')}` }, [401]),
    v('Host of another name', path + q, { ...bearer, host: `evil.example:${port}` }, [403]),
    v('Host with the loopback name on another port', path + q, { ...bearer, host: `127.0.0.1:${port + 1}` }, [403]),
    v('foreign Origin', path + q, { ...bearer, origin: 'http://evil.example' }, [403]),
    v('Origin null', path + q, { ...bearer, origin: 'null' }, [403]),
    v('%61pi', `/%61pi${rest}${q}`, {}),
    v('percent-encoded last segment', `${path.slice(0, lastSlash + 1)}${encodeFirst(path.slice(lastSlash + 1))}${q}`, {}),
    v('%2F for a slash', `${API_PREFIX}%2F${rest.slice(1)}${q}`, {}),
    v('%2f lower case', `${API_PREFIX}%2f${rest.slice(1)}${q}`, {}),
    v('absolute-form target', `http://127.0.0.1:${port}${path}${q}`, {}),
    v('absolute-form target, foreign host', `http://evil.example${path}${q}`, {}),
    v('leading double slash', `/${path}${q}`, {}),
    v('inner double slash', `${API_PREFIX}/${rest}${q}`, {}),
    v('/./ segment', `/.${path}${q}`, {}),
    v('/../ segment', `/x/..${path}${q}`, {}),
    v('encoded dot segment', `/%2e${path}${q}`, {}),
    v('backslash', `${API_PREFIX}\\${rest.slice(1)}${q}`, {}),
    v('upper case', `${path.toUpperCase()}${q}`, {}),
    v('mixed case prefix', `/Api${rest}${q}`, {}),
    v('trailing slash', `${path}/${q}`, {}),
  ];
}

interface Answer {
  status: number;
  body: string;
}

/** Sends the target exactly as written (no client-side normalization), reading at most 64 KB. */
function raw(method: string, target: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: server.port, method, path: target, agent: false, headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
        // An event stream that got through never ends: what arrived is enough to judge.
        if (text.length > 65536 || res.headers['content-type']?.startsWith('text/event-stream')) res.destroy();
      });
      res.on('close', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Every row of every table, hashed: proof that nothing was written. */
function databaseDigest(): string {
  const db = new Database(join(te.dataDir, 'webhook-lab.db'), { readonly: true, fileMustExist: true });
  try {
    const hash = createHash('sha256');
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all() as string[];
    for (const t of tables) {
      const rows = (db.prepare(`SELECT * FROM "${t}"`).raw().all() as unknown[][]).map((row) =>
        JSON.stringify(row, (_k, x) => (Buffer.isBuffer(x) ? x.toString('hex') : typeof x === 'bigint' ? String(x) : x)),
      );
      hash.update(`\n#${t}\n${rows.sort().join('\n')}`);
    }
    return hash.digest('hex');
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  staticDir = mkdtempSync(join(tmpdir(), 'webhook-lab-matrix-'));
  mkdirSync(join(staticDir, 'assets'));
  writeFileSync(join(staticDir, 'index.html'), '<!doctype html><title>ui</title><script type="module" src="./assets/app.js"></script>');
  writeFileSync(join(staticDir, 'assets', 'app.js'), 'export {};');
  te = await startTestEngine({
    config: {
      sources: [{ name: 'matrix', writeKey: WRITE_KEY, webhooks: { enabled: false, sharedSecret: SECRET, urls: [{ url: 'http://127.0.0.1:9/hook', headers: {} }] } }],
      mockReceivers: [{ name: 'matrix-receiver', path: '/matrix', behavior: { status: 200 } }],
    },
  });
  server = await startControlServer({ engine: te.engine, host: '127.0.0.1', port: 0, token: TOKEN, staticDir });
  ids.sources = (await te.call('listSources', {}))[0].id;
  ids.receivers = (await te.call('listReceivers', {}))[0].id;
  ids.audiences = (await te.call('createAudience', { name: 'Matrix Members', sourceIds: [ids.sources], rule: { combine: 'and', conditions: [{ kind: 'trait', trait: 'plan', op: 'eq', value: 'pro' }] } } as never)).id;
  expect((await te.post('/v1/track', { userId: 'u_matrix', event: 'Matrix' }, { writeKey: WRITE_KEY })).status).toBe(200);
  ids.messages = String(await waitFor(async () => (await te.call('listMessages', { limit: 1 } as never)).items[0]?.id, 'the stored call'));
  // The body-search index is fed in the background after arrival: once it has reached the stored
  // call, nothing the refused requests do may write a row.
  await waitFor(() => {
    const db = new Database(join(te.dataDir, 'webhook-lab.db'), { readonly: true, fileMustExist: true });
    try {
      return (db.prepare('SELECT indexed_to FROM body_index_state').pluck().get() as number) >= Number(ids.messages) || undefined;
    } finally {
      db.close();
    }
  }, 'the body-search index to reach the stored call');
});

afterAll(async () => {
  await server?.app.close();
  await te?.stop();
  if (staticDir) rmSync(staticDir, { recursive: true, force: true });
});

describe('authorization matrix, generated from the API contract', () => {
  it('covers every operation of the contract', () => {
    expect(routes().filter((r) => OP_NAMES.includes(r.name as never)).length).toBe(OP_NAMES.length);
  });

  it('refuses every route in every spelling without a valid token from a valid origin, and writes nothing', async () => {
    const before = databaseDigest();
    const leaks: string[] = [];
    let tried = 0;
    for (const r of routes()) {
      for (const v of variants(r, server.port)) {
        const res = await raw(r.method, v.target, v.headers, r.body);
        tried++;
        const where = `${r.name}: ${r.method} ${v.target} (${v.label}) → ${res.status} ${res.body.slice(0, 120)}`;
        if (!v.expect.includes(res.status)) leaks.push(where);
        else if (res.body.includes(SECRET) || res.body.includes(WRITE_KEY)) leaks.push(`leaked a secret: ${where}`);
      }
    }
    expect(leaks).toEqual([]);
    expect(tried).toBeGreaterThan(routes().length * 20);
    expect(databaseDigest()).toBe(before);
  });

  it('reaches every route with the token (the matrix is aimed at real routes)', async () => {
    // An unknown input field is refused by the operation's own schema (a 400 naming fields): proof
    // that the request passed the lock and reached the route's handler, with no side effect.
    for (const r of routes().filter((x) => OP_NAMES.includes(x.name as never))) {
      const def = api[r.name as (typeof OP_NAMES)[number]];
      const bodyless = def.method === 'GET' || def.method === 'DELETE';
      const target = bodyless ? `${r.path}${r.path.includes('?') ? '&' : '?'}${PROBE}=1` : r.path;
      const res = await raw(r.method, target, bearer, bodyless ? undefined : JSON.stringify({ [PROBE]: 1 }));
      expect(res.status, `${r.name}: ${res.body}`).toBe(400);
      expect(JSON.parse(res.body).fields?.length, `${r.name}: ${res.body}`).toBeGreaterThan(0);
    }
    const events = await raw('GET', `${API_PREFIX}/events`, bearer);
    expect(events.status).toBe(200);
    const file = await raw('GET', `${API_PREFIX}${EXPORT_FILE_PATH}?format=jsonl`, bearer);
    expect(file.status).toBe(200);
    expect(file.body).toContain('u_matrix');
  });

  it('serves the UI without the token, and nothing of the API through it', async () => {
    const page = await raw('GET', '/', {});
    expect(page.status).toBe(200);
    expect(page.body).toContain('<title>ui</title>');
    expect((await raw('GET', '/assets/app.js', {})).status).toBe(200);
    expect((await raw('HEAD', '/', {})).status).toBe(200);
    // A path that is not a file is not found, whatever it resembles.
    expect((await raw('GET', '/API/sources', {})).status).toBe(404);
  });

  it("answers a body that is not JSON, or poisons a prototype at any depth, with the API's own 400 error shape", async () => {
    const deep = (inner: string) => `{"name":${'{"a":'.repeat(20_000)}${inner}${'}'.repeat(20_000)}}`;
    for (const body of ['{"name":', 'not json', '{"__proto__":{"x":1},"name":"p"}', deep('{"__proto__":1}'), deep('{"constructor":{"prototype":1}}')]) {
      const res = await raw('POST', `${API_PREFIX}/sources`, bearer, body);
      expect(res.status, body.slice(0, 40)).toBe(400);
      const answer = JSON.parse(res.body) as { code?: string; fields?: { path: string }[] };
      // A prototype key is named (fields); one nested past the depth limit gets the depth's refusal,
      // named too (as a body read in the control API's worker does: op-body.ts); not JSON is the parser's.
      const named = body.startsWith('{"__proto__"') ? '__proto__' : body.startsWith('{"name":{') ? 'name.a.a.a.a.a' : null;
      expect(Object.keys(answer), res.body).toEqual(named ? ['error', 'code', 'fields'] : ['error', 'code']);
      if (answer.fields) expect(answer.fields.map((f) => f.path)).toEqual([named]);
      expect(answer.code).toBe('invalid_input');
    }
    expect((await te.call('listSources', {})).map((s) => s.name)).not.toContain('p');
  });

  it('accepts a bodiless DELETE sent with Content-Type: application/json', async () => {
    const created = await te.call('createSource', { name: 'to-delete' } as never);
    const res = await raw('DELETE', `${API_PREFIX}/sources/${created.id}`, { ...bearer, 'content-type': 'application/json' });
    expect(res.status, res.body).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ ok: true });
    expect((await te.call('listSources', {})).some((s) => s.id === created.id)).toBe(false);
  });
});
