// The requests of the seeded collector fuzz (tests/integration/collector-fuzz.test.ts), generated
// up front from the seed alone, so the same seed always sends the same requests, each with the
// answers the README documents for it. Bodies are built as text where JSON.stringify could not say
// it (`__proto__` keys, `1e400`, lone surrogates, invalid UTF-8, depths it cannot write).

import { MAX_BATCH_BYTES, MAX_CALL_BYTES } from '../../src/shared/limits';
import { mulberry32, type Random } from '../../src/main/engine/seeded-random';
import { FuzzDraws } from './fuzz-draws';

export interface FuzzRequest {
  n: number;
  /** What was generated, for the failure message. */
  kind: string;
  method: 'POST' | 'GET';
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** Sent with Transfer-Encoding: chunked, in these pieces. */
  chunks?: Buffer[];
  /** Written as is on a fresh connection (request line, headers and body). */
  raw?: Buffer;
  /** Runs after strict mode is switched on. */
  strict: boolean;
  /** Every status the README allows for it (each response, when a raw exchange holds several). */
  expect: number[];
}

type Rng = Random;

const MAX_CALL = MAX_CALL_BYTES;
const MAX_BATCH = MAX_BATCH_BYTES;
const SINGLE_ROUTES: [string, string][] = [
  ['identify', 'identify'], ['i', 'identify'], ['track', 'track'], ['t', 'track'], ['page', 'page'], ['p', 'page'],
  ['screen', 'screen'], ['s', 'screen'], ['group', 'group'], ['g', 'group'], ['alias', 'alias'], ['a', 'alias'],
];
const BATCH_ROUTES = ['batch', 'import', 'b'];
const FIELDS = ['type', 'userId', 'anonymousId', 'event', 'name', 'category', 'groupId', 'previousId', 'messageId', 'timestamp', 'sentAt', 'context', 'properties', 'traits', 'integrations'];
/** JSON texts of every type, including values JSON.stringify cannot produce. */
const WEIRD = ['null', 'true', 'false', '0', '-0', '1e400', '-1e400', '1e-400', '123456789012345678901234567890', '""', '"   "', '"\\u0000"', '"\\ud800"', '"\\udfff\\ud800"', '[]', '[1,"a",null]', '{}', '{"__proto__":{"polluted":true}}', '{"constructor":{"prototype":{"x":1}}}', '"2024-13-45T99:99:99Z"', '"2024-01-01T00:00:00"', '1700000000', '"\\"quoted\\""'];
const ODD_TYPES = ['json', 'text/plain', 'text', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=utf-16', 'application/json; charset=latin1', ';;', 'a/b/c', '*/*', 'application/json, text/plain', 'APPLICATION/JSON', 'application/csp-report', 'application/json; charset="utf-8"', '\t'];

class Gen extends FuzzDraws {
  constructor(
    r: Rng,
    private readonly keys: { hooks: string; quiet: string },
  ) {
    super(r);
  }
  id(prefix: string): string {
    return `${prefix}_${Math.floor(this.r() * 1e9).toString(36)}`;
  }
  knownKey(): string {
    return this.chance(0.5) ? this.keys.hooks : this.keys.quiet;
  }

  /** A valid call of `type` as JSON text, with `extra` members (text) added at the end. */
  call(type: string, extra: string[] = []): string {
    const m: string[] = [`"type":"${type}"`, `"messageId":"${this.id('m')}"`];
    const who = this.int(0, 2);
    if (who !== 1 || type === 'alias') m.push(`"userId":"${this.id('u')}"`);
    if (who >= 1) m.push(`"anonymousId":"${this.id('a')}"`);
    if (type === 'track') m.push(`"event":"${this.pick(['Order Completed', 'Signed Up', 'Ünïcødé ✓', 'Product Viewed'])}"`);
    if (type === 'group') m.push(`"groupId":"${this.id('g')}"`);
    if (type === 'alias') m.push(`"previousId":"${this.id('p')}"`);
    if (type === 'page' || type === 'screen') m.push(`"name":"Home"`);
    if (this.chance(0.5)) m.push(`"timestamp":"2026-11-2${this.int(0, 3)}T10:00:00.${this.int(100, 999)}Z"`);
    if (this.chance(0.6)) m.push(`"properties":{"total":${this.int(1, 999)}.5,"items":[{"sku":"s1","qty":2}],"nested":{"a":{"b":{"c":true}}}}`);
    if (this.chance(0.5)) m.push(`"context":{"library":{"name":"fuzz","version":"1"},"ip":"10.0.0.1","traits":{"address":{"city":"Paris"}}}`);
    if (this.chance(0.2)) m.push(`"integrations":{"All":true,"Webhooks":${this.pick(['true', 'false', '{"x":1}'])}}`);
    return `{${[...m, ...extra].join(',')}}`;
  }

  /** Replaces (or adds) the member `field` of an object's JSON text, keeping the text as is otherwise. */
  set(objText: string, field: string, value: string): string {
    const inner = objText.slice(1, -1);
    // Later keys win in JSON.parse: appending overrides without parsing (the earlier stays as sent).
    return `{${inner}${inner ? ',' : ''}"${field}":${value}}`;
  }

  nested(levels: number, kind: 'array' | 'object', inner = '1'): string {
    return kind === 'array' ? '['.repeat(levels) + inner + ']'.repeat(levels) : '{"k":'.repeat(levels) + inner + '}'.repeat(levels);
  }
}

interface Shape {
  kind: string;
  route: 'single' | 'batch';
  path: string;
  body: Buffer;
  /** How the write key resolves: the README's rules for Basic and body keys. */
  key: 'known' | 'unknown' | 'none';
  /** Whether the body is a JSON object (else 400). */
  parses: boolean;
  /** Batch route: "batch" is an array of at most 2500 items (else 400). */
  batchOk: boolean;
  /** Whether every call would be accepted in strict mode: true, false, or not known in advance. */
  valid: boolean | 'maybe';
}

/** The answers the README documents for a request of this shape. */
function answers(s: Shape, strict: boolean): number[] {
  const limit = s.route === 'single' ? MAX_CALL : MAX_BATCH;
  if (s.body.length > limit) return [400, 413];
  if (!s.parses || s.key === 'none' || !s.batchOk) return [400];
  if (!strict) return [200];
  if (s.key === 'unknown') return [401];
  return s.valid === true ? [200] : s.valid === false ? [400] : [200, 400];
}

const text = (s: string) => Buffer.from(s, 'utf8');

/** A generated request, with either its shape (the expectation follows from it and the phase) or a fixed expectation. */
type Made = Omit<FuzzRequest, 'n' | 'strict' | 'expect'> & ({ shape: Shape } | { expect: number[] });

export function generateRequests(seed: number, count: number, keys: { hooks: string; quiet: string }): FuzzRequest[] {
  const g = new Gen(mulberry32(seed), keys);
  const out: FuzzRequest[] = [];
  // Weighted kinds; each builds a body and says what it is.
  const kinds: [number, () => Made][] = [
    [16, () => plain(g, 'valid', (s) => s)],
    [14, () => plain(g, 'wrong type', (s) => ({ ...s, body: text(g.set(s.body.toString(), g.pick(FIELDS), g.pick(WEIRD))), valid: 'maybe' }))],
    [6, () => plain(g, 'hostile keys', (s) => ({ ...s, body: text(hostileKeys(g, s.body.toString(), s.route)), valid: 'maybe' }))],
    [8, () => plain(g, 'strings', (s) => strings(g, s))],
    [7, () => plain(g, 'deep', (s) => deep(g, s))],
    [2, () => plain(g, 'huge array', (s) => hugeArray(g, s))],
    [9, () => plain(g, 'bad json', (s) => badJson(g, s))],
    [8, () => plain(g, 'auth', (s) => s, { auth: true })],
    [6, () => plain(g, 'content type', (s) => s, { contentType: g.pick(ODD_TYPES) })],
    [5, () => plain(g, 'envelope', (s) => envelope(g, s))],
    [4, () => plain(g, 'large headers', (s) => s, { pad: g.int(1024, 12 * 1024) })],
    [4, () => chunkedRequest(g)],
    [3, () => rawRequest(g)],
    [3, () => oddRoute(g)],
    [2, () => plain(g, 'oversize', (s) => ({ ...s, body: text(oversize(g, s)) }))],
  ];
  const total = kinds.reduce((n, [w]) => n + w, 0);
  const strictFrom = Math.floor(count * 0.85);
  for (let n = 0; n < count; n++) {
    const strict = n >= strictFrom;
    let w = g.int(0, total - 1);
    const [, make] = kinds.find(([weight]) => (w -= weight) < 0)!;
    // The expectation is decided for the phase the request runs in.
    const { shape, expect, ...req } = { shape: undefined, expect: undefined, ...make() };
    out.push({ ...req, n, strict, expect: shape ? answers(shape, strict) : expect! });
  }
  return out;
}

/** A single call or a batch with a known key, changed by `change`, with the headers an option asks for. */
function plain(g: Gen, kind: string, change: (s: Shape) => Shape, o: { auth?: boolean; contentType?: string; pad?: number } = {}): Made & { shape: Shape } {
  let s = g.chance(0.5) ? single(g) : batch(g);
  s = change({ ...s, kind });
  const headers: Record<string, string> = { 'content-type': o.contentType ?? g.pick(['application/json', 'text/plain', 'application/json; charset=utf-8']) };
  let key: Shape['key'] = 'known';
  if (o.auth) {
    const v = authVariant(g);
    Object.assign(headers, v.headers);
    if (v.bodyKey !== undefined) s = { ...s, body: text(g.set(s.body.toString(), 'writeKey', v.bodyKey)) };
    key = v.key;
    s = { ...s, kind: `${kind} (${v.what})` };
  } else if (g.chance(0.25) && s.parses) {
    s = { ...s, body: text(g.set(s.body.toString(), 'writeKey', JSON.stringify(g.knownKey()))) };
  } else {
    headers.authorization = basic(g.knownKey());
  }
  if (o.contentType !== undefined) s = { ...s, kind: `${kind} (${JSON.stringify(o.contentType)})` };
  if (o.pad) {
    headers['x-fuzz-pad'] = 'p'.repeat(o.pad);
    headers['user-agent'] = `fuzz/${'u'.repeat(Math.min(o.pad, 2000))}`;
  }
  return { kind: s.kind, method: 'POST', path: s.path, headers, body: s.body, shape: { ...s, key } };
}

function single(g: Gen): Shape {
  const [route, type] = g.pick(SINGLE_ROUTES);
  return { kind: '', route: 'single', path: `/v1/${route}`, body: text(g.call(type)), key: 'known', parses: true, batchOk: true, valid: true };
}

function batch(g: Gen): Shape {
  const n = g.chance(0.97) ? g.int(1, 3) : g.int(6, 40);
  const items = Array.from({ length: n }, () => g.call(g.pick(SINGLE_ROUTES)[1]));
  return { kind: '', route: 'batch', path: `/v1/${g.pick(BATCH_ROUTES)}`, body: text(`{"batch":[${items.join(',')}]}`), key: 'known', parses: true, batchOk: true, valid: true };
}

const basic = (user: string) => `Basic ${Buffer.from(`${user}:`).toString('base64')}`;

function authVariant(g: Gen): { what: string; headers: Record<string, string>; bodyKey?: string; key: Shape['key'] } {
  const known = g.knownKey();
  switch (g.int(0, 11)) {
    case 0: return { what: 'no auth', headers: {}, key: 'none' };
    case 1: return { what: 'unknown key', headers: { authorization: basic(g.id('wk_nobody')) }, key: 'unknown' };
    case 2: return { what: 'key:password', headers: { authorization: `Basic ${Buffer.from(`${known}:secret`).toString('base64')}` }, key: 'known' };
    case 3: return { what: 'no colon', headers: { authorization: `basic ${Buffer.from(known).toString('base64')}` }, key: 'known' };
    case 4: return { what: 'empty Basic', headers: { authorization: 'Basic ' }, key: 'none' };
    case 5: return { what: 'password only', headers: { authorization: `Basic ${Buffer.from(':pw').toString('base64')}` }, key: 'none' };
    case 6: return { what: 'Bearer', headers: { authorization: `Bearer ${known}` }, key: 'none' };
    case 7: return { what: 'Bearer and body key', headers: { authorization: `Bearer x` }, bodyKey: JSON.stringify(known), key: 'known' };
    case 8: return { what: 'body key a number', headers: {}, bodyKey: '12345', key: 'none' };
    case 9: return { what: 'body key empty', headers: {}, bodyKey: '""', key: 'none' };
    case 10: return { what: 'not base64', headers: { authorization: 'Basic ***%%%' }, key: 'none' };
    default: return { what: 'unknown unicode key', headers: { authorization: basic('wk_ünïcødé_✓') }, key: 'unknown' };
  }
}

function hostileKeys(g: Gen, body: string, route: Shape['route']): string {
  const bad = g.pick(['__proto__', 'constructor', 'prototype']);
  const value = g.pick(['{"polluted":true,"Webhooks":false}', '{"prototype":{"polluted":true}}', '"x"', 'null', '[]']);
  const where = g.int(0, 3);
  if (where === 0) return g.set(body, bad, value);
  if (route === 'batch' && where === 1) {
    // An envelope context and integrations with the key too, merged under each item's own.
    return g.set(g.set(body, 'context', `{"${bad}":${value},"library":{"${bad}":1}}`), 'integrations', `{"${bad}":${value}}`);
  }
  return setInItem(g, route, body, g.pick(['properties', 'context', 'traits', 'integrations']), `{"${bad}":${value},"ok":{"${bad}":{"${bad}":1}}}`);
}

function strings(g: Gen, s: Shape): Shape {
  const body = s.body.toString();
  switch (g.int(0, 4)) {
    case 0: // escaped NUL and lone surrogates in ids and names: valid JSON
      return { ...s, body: text(g.set(g.set(body, 'userId', '"u\\u0000\\ud800"'), 'event', '"E\\udc00\\u0000"')), valid: 'maybe' };
    case 1: // invalid UTF-8 inside a string: read as U+FFFD, still JSON
      return { ...s, body: Buffer.concat([text(body.slice(0, -1)), text(',"properties":{"bytes":"'), Buffer.from([0xff, 0xc3, 0x28, 0xc0, 0xaf, 0xed, 0xa0, 0x80]), text('"}}')]) };
    case 2: // a raw NUL (a control character) inside a string: not JSON
      return { ...s, body: Buffer.concat([text(body.slice(0, -1)), text(',"p":"a'), Buffer.from([0]), text('b"}')]), parses: false };
    case 3: // a long string
      return { ...s, body: text(g.set(body, 'properties', `{"long":"${'x'.repeat(g.int(100, 20_000))}"}`)) };
    default: // a byte-order mark before the body: not JSON
      return { ...s, body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), s.body]), parses: false };
  }
}

const DEPTHS = [3, 30, 61, 62, 63, 64, 65, 100, 1000, 10_000, 30_000, 100_000];

function deep(g: Gen, s: Shape): Shape {
  const kind = g.pick(['array', 'object'] as const);
  let levels = g.pick(DEPTHS);
  // Within the body limits (a single call 32 KB, a batch 500 KB), most of the time.
  const perLevel = kind === 'array' ? 2 : 6;
  const room = (s.route === 'single' ? MAX_CALL : MAX_BATCH) - s.body.length - 1000;
  if (levels * perLevel > room && g.chance(0.9)) levels = Math.floor(room / perLevel);
  const where = g.pick(['properties', 'context', 'traits', 'type'] as const);
  const value = g.nested(levels, kind);
  const body = s.body.toString();
  // A single route names the type itself: a deep `type` in its body is not part of the call.
  if (where === 'type') return { ...s, body: text(setInItem(g, s.route, body, 'type', value)), valid: s.route === 'single' };
  // The call is level 1, the field's object level 2, and `v` holds `levels` more: levels + 2 in all.
  return { ...s, body: text(setInItem(g, s.route, body, where, `{"v":${value}}`)), valid: levels + 2 <= 64 };
}

/** Sets a member of the single call, or of a track call added first to the batch (a later key wins in JSON). */
function setInItem(g: Gen, route: Shape['route'], body: string, field: string, value: string): string {
  return route === 'single' ? g.set(body, field, value) : body.replace('{"batch":[', `{"batch":[${g.set(g.call('track'), field, value)},`);
}

function hugeArray(g: Gen, s: Shape): Shape {
  const n = g.int(1000, 60_000);
  const value = g.chance(0.5) ? `[${Array.from({ length: n }, (_, i) => i % 97).join(',')}]` : `[${'"xy",'.repeat(n)}"z"]`;
  if (s.route === 'batch' && g.chance(0.2)) {
    // More items than a batch may hold.
    return { ...s, body: text(`{"batch":[${'{},'.repeat(2500)}{}]}`), batchOk: false };
  }
  // An item over 32 KB in a batch is dropped (a single call over it is refused whole).
  const item = value.length + 600;
  const valid = s.route === 'single' || item < MAX_CALL ? true : value.length > MAX_CALL ? false : 'maybe';
  return { ...s, body: text(setInItem(g, s.route, s.body.toString(), 'properties', `{"list":${value}}`)), valid };
}

function badJson(g: Gen, s: Shape): Shape {
  const body = s.body.toString();
  const bad = [
    () => body.slice(0, g.int(0, body.length - 1)),
    () => '',
    () => ' \n\t ',
    () => 'null',
    () => '[]',
    () => '"just a string"',
    () => '12',
    () => `${body} trailing`,
    () => body.replace(/:/, ''),
    () => "{'single':'quotes'}",
    () => '{"batch":',
    () => '\u0000\u0001\u0002',
    () => `${body}${body}`,
    () => 'NaN',
  ];
  return { ...s, body: text(g.pick(bad)()), parses: false };
}

function envelope(g: Gen, s: Shape): Shape {
  if (s.route === 'single') {
    // A "batch" field on a single call is just a field; a number JSON cannot carry there drops the call (normalization version 2).
    const v = g.pick(WEIRD);
    return { ...s, body: text(g.set(s.body.toString(), 'batch', v)), ...(v === '1e400' || v === '-1e400' ? { valid: false } : {}) };
  }
  const body = s.body.toString();
  switch (g.int(0, 3)) {
    case 0: // not an array: refused
      return { ...s, body: text(g.set(body, 'batch', g.pick(['{}', '"x"', 'null', '5', 'true']))), batchOk: false };
    case 1: // envelope fields of the wrong type: ignored
      return { ...s, body: text(g.set(g.set(g.set(body, 'context', g.pick(WEIRD)), 'integrations', g.pick(WEIRD)), 'sentAt', g.pick(WEIRD))), valid: 'maybe' };
    case 2: // items that are not objects
      return { ...s, body: text(g.set(body, 'batch', `[${g.pick(WEIRD)},${g.call('track')}]`)), valid: false };
    default: // an empty batch
      return { ...s, body: text(g.set(body, 'batch', '[]')) };
  }
}

function oversize(g: Gen, s: Shape): string {
  const limit = s.route === 'single' ? MAX_CALL : MAX_BATCH;
  const pad = limit - s.body.length + g.int(1, s.route === 'single' ? 8000 : 2000);
  return g.set(s.body.toString(), 'padding', `"${'x'.repeat(pad)}"`);
}

function chunkedRequest(g: Gen): Made {
  const r = plain(g, 'chunked', (s) => (g.chance(0.1) && s.route === 'single' ? { ...s, body: text(oversize(g, s)) } : s));
  const body = r.body!;
  const chunks: Buffer[] = [];
  for (let at = 0; at < body.length; ) {
    const size = g.int(1, Math.max(1, Math.ceil(body.length / 3)));
    chunks.push(body.subarray(at, at + size));
    at += size;
  }
  return { ...r, body: undefined, chunks };
}

/** Requests written on a socket: framing the HTTP parser refuses, bodies cut by their Content-Length, pipelining. */
function rawRequest(g: Gen): Made {
  const key = g.knownKey();
  const body = g.call('track');
  const head = (path: string, extra: string[]) => [`POST ${path} HTTP/1.1`, 'Host: 127.0.0.1', `Authorization: ${basic(key)}`, ...extra, '', ''].join('\r\n');
  switch (g.int(0, 4)) {
    case 0: {
      // Content-Length shorter than the body: the call is cut (invalid JSON, 400); the rest is no request (400).
      const cut = g.int(1, body.length - 2);
      return { kind: 'raw: Content-Length short', method: 'POST', path: '/v1/track', headers: {}, raw: text(head('/v1/track', [`Content-Length: ${cut}`]) + body), expect: [400] };
    }
    case 1:
      return { kind: 'raw: Content-Length not a number', method: 'POST', path: '/v1/track', headers: {}, raw: text(head('/v1/track', ['Content-Length: 1x']) + body), expect: [400] };
    case 2:
      return {
        kind: 'raw: Content-Length and chunked',
        method: 'POST',
        path: '/v1/track',
        headers: {},
        raw: text(head('/v1/track', [`Content-Length: ${body.length}`, 'Transfer-Encoding: chunked']) + `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`),
        expect: [400],
      };
    case 3: {
      // Two calls pipelined on one connection, the second closing it: both answered, in order.
      const second = g.call('identify');
      const bytes = head('/v1/track', [`Content-Length: ${Buffer.byteLength(body)}`]) + body + head('/v1/identify', [`Content-Length: ${Buffer.byteLength(second)}`, 'Connection: close']) + second;
      return { kind: 'raw: pipelined', method: 'POST', path: '/v1/track', headers: {}, raw: text(bytes), expect: [200] };
    }
    default:
      // HTTP/1.0 without keep-alive.
      return { kind: 'raw: HTTP/1.0', method: 'POST', path: '/v1/t', headers: {}, raw: text(head('/v1/t', [`Content-Length: ${Buffer.byteLength(body)}`]).replace('HTTP/1.1', 'HTTP/1.0') + body), expect: [200] };
  }
}

function oddRoute(g: Gen): Made {
  const body = text(g.call('track'));
  const headers = { 'content-type': 'application/json', authorization: basic(g.knownKey()) };
  const [path, method, expect] = g.pick<[string, 'POST' | 'GET', number[]]>([
    ['/v1/nope', 'POST', [404]],
    ['/v2/track', 'POST', [404]],
    ['/v1/TRACK', 'POST', [404]],
    ['/v1/track?utm=1&x', 'POST', [200]],
    ['/v1/track', 'GET', [404]],
    ['/v1//track', 'POST', [404]],
    ['/', 'POST', [404]],
    ['/v1/track/', 'POST', [404]],
  ]);
  return { kind: 'route', method, path, headers, body: method === 'GET' ? undefined : body, expect };
}
