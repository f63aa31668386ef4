import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/main/engine/seeded-random';
import type { Store } from '../../src/main/engine/store/store';
import type { Source } from '../../src/shared/types';
import { startTestEngine, waitWhileProgressing, type TestEngine } from '../helpers/engine';
import { FuzzDraws } from '../helpers/fuzz-draws';

// Issue 37, "Accuracy, shown": search with "in bodies" (`body=1`) checked against a brute force.
// Thousands of calls generated from a seed (FUZZ_SEED, printed so a failure can be replayed) go
// through the real collector into a real SQLite file; random terms (cut from the stored bodies, cut
// across their values, mutated, or made of nothing stored) are searched page by page and compared
// with a scan of every stored body read straight from the file: 0 misses, 0 false hits. The same
// after inserts, retention, clear and a restart, each with the body index part built (the rest read
// from the bodies) and then caught up by its own background indexer.
//
// The rule the brute force follows is the documented one (docs/decisions.md, Search): the term is
// trimmed (nothing left: no filter), then it and each text are lowercased by JavaScript's
// toLowerCase, a lone surrogate counting as U+FFFD. A call matches when the term is part of its
// userId, anonymousId, messageId, event/name, groupId or previousId (one per line, so only a line
// break spans two), or (body=1) of one of the keys or string values of the call's own JSON as
// received: its batch item, not the envelope nor its neighbours; numbers, booleans and punctuation
// are not searched. Terms of one or two characters are searched the same way (read from the bodies
// rather than the index: the same answers), so the brute force does not treat them apart.

const SEED = Number(process.env.FUZZ_SEED ?? 20260837);
const CALLS = Number(process.env.FUZZ_CALLS ?? 5000);
/** Random terms per check, besides the fixed ones. */
const TERMS = Number(process.env.FUZZ_TERMS ?? 80);
/** At most this many of them under three code points (each reads every body, per page). */
const SHORT_MAX = 6;

// ---------- what the calls are made of ----------

const WORDS = ['alpha', 'Needle', 'haystack', 'Straße', 'café', 'CAFÉ', 'naïve', 'ΣΟΦΊΑ', 'ὈΔΥΣΣΕΎΣ', 'İstanbul', 'Kelvin', 'ﬃx', '漢字テキスト', 'שלום', 'مرحبا', 'of', 'a', 'the', 'NEAR', 'AND', 'OR', 'NOT', 'user', 'text', 'body_index', 'rowid', 'null', 'true', '123'];
/** Pieces of text, most rare enough to matter: each one or a few code points. */
const ATOMS = [
  '\u0000', '\u0000\u0000', 'e\u0301', 'E\u0301', '\u00e9', '\u0301', '\u0308', '\u20dd', 'a\u0308', 'n\u0303',
  '\u{1F600}', '\u{1F44D}\u{1F3FD}', '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}', '\u{1F3F3}\uFE0F\u200D\u{1F308}', '\u{1F1EB}\u{1F1F7}', '\u200D', '\uFE0F',
  '"', '""', '*', '(', ')', ':', '^', '-', '+', '{', '}', '[', ']', ',', 'NEAR(', 'NEAR/2', ' AND ', ' OR ', ' NOT ', 'text:', '"*"',
  "'", '`', '\u201c', '\u201d', '\\', '\\\\', '\\"', '\\n', '\\u0000', '\\ud83d', '/', '%', '_', '|', '%_|',
  '\n', '\r', '\r\n', '\t', '\u2028', '\u2029', '\u0085', ' ', '  ', '\u00a0', '\ufeff',
  '\u0130', '\u212a', '\u00df', '\u1e9e', '\u03a3', '\u03c2', '\u03c3', 'I', 'i', '\u0131',
  '\ufffd', '\ufffe', '\uffff', '\u{10FFFF}', '\u{1D400}',
];
const LOWER = 'abcdefghijklmnopqrstuvwxyz';

class Gen extends FuzzDraws {
  /** A float in [0, 1): one draw, for a choice among several weighted outcomes. */
  unit(): number {
    return this.r();
  }
  word(): string {
    if (this.chance(0.5)) return this.pick(WORDS);
    const len = this.chance(0.15) ? this.int(12, 40) : this.int(1, 8);
    let w = '';
    for (let i = 0; i < len; i++) w += LOWER[this.int(0, LOWER.length - 1)];
    return this.chance(0.2) ? w.toUpperCase() : w;
  }
  /** Words and atoms: a string a user's call could hold. */
  text(maxParts = 8): string {
    const parts = this.int(1, maxParts);
    let s = '';
    for (let i = 0; i < parts; i++) s += this.chance(0.55) ? this.word() + (this.chance(0.5) ? ' ' : '') : this.pick(ATOMS);
    return s;
  }
  key(): string {
    if (this.chance(0.7)) return this.pick(['note', 'name', 'Title', 'sku', 'tags', 'plan', 'éclair', 'a', 'text', 'rowid']);
    if (this.chance(0.05)) return '__proto__';
    return this.text(3);
  }
  value(depth: number): unknown {
    const r = this.r();
    if (r < 0.55 || depth >= 3) return this.chance(0.08) ? this.text(60) : this.text();
    if (r < 0.65) return this.int(-1000, 100000);
    if (r < 0.7) return this.chance(0.5);
    if (r < 0.73) return null;
    if (r < 0.86) return Array.from({ length: this.int(0, 4) }, () => this.value(depth + 1));
    return this.object(depth + 1);
  }
  object(depth: number): Record<string, unknown> {
    // No prototype: a key `__proto__` is then a key like any other, as JSON.parse makes it.
    const o = Object.create(null) as Record<string, unknown>;
    for (let i = this.int(0, 5); i > 0; i--) o[this.key()] = this.value(depth);
    return o;
  }
}

const TYPES = ['track', 'track', 'track', 'identify', 'page', 'screen', 'group', 'alias'] as const;

/** One call as a user's library would send it (now and then one the collector stores as dropped). */
function makeCall(g: Gen, n: number): Record<string, unknown> {
  const type = g.pick(TYPES);
  const c = Object.create(null) as Record<string, unknown>;
  c.type = type;
  const who = g.unit();
  if (who < 0.6) c.userId = `user-${g.int(1, 80)}`;
  else if (who < 0.75) c.userId = g.text(3);
  else if (who < 0.78) c.userId = g.int(1, 999);
  else c.anonymousId = g.chance(0.5) ? `anon-${g.int(1, 500)}` : g.text(3);
  if (g.chance(0.3) && c.userId !== undefined) c.anonymousId = `anon-${g.int(1, 500)}`;
  // Without a messageId the lab makes one: in the call's fields, not in its body.
  const id = g.unit();
  if (id < 0.85) c.messageId = `m-${SEED.toString(36)}-${n}`;
  else if (id < 0.9) c.messageId = `${g.text(2)}#${n}`;
  if (type === 'track') c.event = g.chance(0.97) ? g.text(4) : g.int(1, 9);
  if (type === 'page' || type === 'screen') c.name = g.text(3);
  if (type === 'group') c.groupId = g.chance(0.9) ? g.text(2) : `g-${g.int(1, 50)}`;
  if (type === 'alias') c.previousId = g.text(2);
  if (type === 'identify' || type === 'group') c.traits = g.object(1);
  else c.properties = g.object(1);
  if (g.chance(0.3)) c.context = { library: { name: g.pick(['analytics.js', 'analytics-node', g.text(2)]), version: '1.0.0' }, page: { title: g.text() } };
  if (g.chance(0.1)) c[g.key()] = g.value(1);
  return c;
}

// ---------- the engine ----------

let dataDir: string | undefined;
let te: TestEngine | undefined;
let store!: Store;

afterAll(async () => {
  await te?.stop({ keepData: true }).catch(() => undefined);
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** The indexer is held from the start: each check decides how far it has gone. */
async function start(): Promise<{ t: TestEngine; sources: Source[] }> {
  const t = await startTestEngine({ dataDir, onStore: (s) => ((store = s), s.calls.bodyIndex.pause()) });
  te = t;
  const have = await t.call('listSources', {});
  const sources: Source[] = [];
  for (const name of ['prop-a', 'prop-b']) {
    sources.push(have.find((s) => s.name === name) ?? (await t.call('createSource', { name, webhooks: { enabled: false, sharedSecret: '', urls: [] } })));
  }
  return { t, sources };
}

const SINGLE_ROUTES = new Set(['track', 'identify', 'page', 'screen', 'group', 'alias']);

/** Sends `count` generated calls through the collector: batches of 1 to 120 (with an envelope of their own), now and then a single call. */
async function send(t: TestEngine, sources: Source[], g: Gen, count: number, first: number): Promise<void> {
  let n = first;
  const end = first + count;
  while (n < end) {
    const source = g.pick(sources);
    if (g.chance(0.05)) {
      const c = makeCall(g, n++);
      const route = SINGLE_ROUTES.has(c.type as string) ? (c.type as string) : 'track';
      const res = await t.post(`/v1/${route}`, c, { writeKey: source.writeKey });
      expect(res.status, `seed ${SEED}: single call ${JSON.stringify(c)}: ${JSON.stringify(res.json)}`).toBe(200);
      continue;
    }
    const size = Math.min(end - n, g.int(1, 120));
    const batch = Array.from({ length: size }, () => makeCall(g, n++));
    // The envelope's text is nobody's body: a term only it holds finds nothing.
    const body: Record<string, unknown> = { batch, sentAt: new Date().toISOString() };
    if (g.chance(0.5)) body.context = { note: g.text(), envelopeOnly: `envelope-${g.int(1, 1e9)}` };
    const res = await t.post('/v1/batch', body, { writeKey: source.writeKey });
    expect(res.status, `seed ${SEED}: batch: ${JSON.stringify(res.json)}`).toBe(200);
  }
}

/** Parts of messageIds the lab made, copied into other calls' bodies (see echo). */
const echoed: string[] = [];

/**
 * Sends `count` calls whose body holds part of a messageId the lab made for another call (in upper
 * case): a term that finds one call by its fields and others by their bodies, where body=1 once
 * dropped the first (issue 37, item 9). Returns how many it sent.
 */
async function echo(t: TestEngine, sources: Source[], g: Gen, count: number, first: number): Promise<number> {
  const made = snapshot(t.dataDir).filter((c) => c.madeId !== null);
  if (made.length === 0) return 0;
  const batch = Array.from({ length: count }, (_, i) => {
    const part = cutByCodePoints(g, g.pick(made).madeId!, g.int(3, 8));
    echoed.push(part);
    return { type: 'track', userId: `user-${g.int(1, 80)}`, messageId: `m-${SEED.toString(36)}-${first + i}`, event: 'Echo', properties: { note: `${g.text(2)}${part.toUpperCase()}${g.text(2)}` } };
  });
  const res = await t.post('/v1/batch', { batch }, { writeKey: g.pick(sources).writeKey });
  expect(res.status, `seed ${SEED}: echo batch: ${JSON.stringify(res.json)}`).toBe(200);
  return count;
}

/** `count` generated calls with a few echoes amid them (indexed before the newest calls are); returns how many were sent. */
async function insert(t: TestEngine, sources: Source[], g: Gen, count: number, first: number): Promise<number> {
  const half = Math.floor(count / 2);
  await send(t, sources, g, half, first);
  const echoes = await echo(t, sources, g, Math.ceil(count / 100), first + half);
  await send(t, sources, g, count - half, first + half + echoes);
  return count + echoes;
}

// ---------- the brute force: every stored body, read from the file ----------

interface StoredCall {
  id: number;
  type: string;
  /** The searched fields, folded, one per line (searchText's rule, written again here). */
  fields: string;
  /** The call's keys and string values as received, in document order. */
  texts: string[];
  /** Its string values alone. */
  values: string[];
  /** The messageId the lab made for it (sent without one): in its fields, not in its body. */
  madeId: string | null;
  folded: string[];
  raw: string;
}

const fold = (s: string) => s.toLowerCase().toWellFormed();

function bodyTexts(v: unknown, out: string[], values: string[]): void {
  if (typeof v === 'string') {
    out.push(v);
    values.push(v);
  } else if (Array.isArray(v)) for (const x of v) bodyTexts(x, out, values);
  else if (typeof v === 'object' && v !== null) {
    for (const [k, x] of Object.entries(v)) {
      out.push(k);
      bodyTexts(x, out, values);
    }
  }
}

/** Every stored call with its body, read straight from the SQLite file (a connection of its own). */
function snapshot(dir: string): StoredCall[] {
  const db = new Database(join(dir, 'webhook-lab.db'), { readonly: true, fileMustExist: true });
  try {
    const bodies = new Map<number, unknown>();
    for (const r of db.prepare('SELECT id, body FROM requests').all() as { id: number; body: string }[]) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(r.body);
      } catch {
        parsed = r.body;
      }
      bodies.set(r.id, parsed);
    }
    const rows = db
      .prepare('SELECT id, type, request_id, batch_index, user_id, anonymous_id, message_id, label, group_id, previous_id FROM calls ORDER BY id')
      .all() as { id: number; type: string; request_id: number; batch_index: number | null; [k: string]: unknown }[];
    return rows.map((r) => {
      const body = bodies.get(r.request_id);
      expect(body, `seed ${SEED}: call ${r.id}: its request ${r.request_id} is stored`).not.toBeUndefined();
      const item = r.batch_index === null ? body : ((body as { batch?: unknown[] } | null)?.batch?.[r.batch_index] ?? null);
      const texts: string[] = [];
      const values: string[] = [];
      bodyTexts(item, texts, values);
      const fields = ['user_id', 'anonymous_id', 'message_id', 'label', 'group_id', 'previous_id']
        .map((k) => r[k])
        .filter((v): v is string => typeof v === 'string' && v !== '')
        .join('\n');
      const messageId = typeof r.message_id === 'string' ? r.message_id : null;
      const madeId = messageId !== null && !values.includes(messageId) ? messageId : null;
      return { id: r.id, type: r.type, fields: fold(fields), texts, values, madeId, folded: texts.map(fold), raw: JSON.stringify(item) ?? 'null' };
    });
  } finally {
    db.close();
  }
}

/** The calls a search for `q` lists, newest first: by their fields alone (body=0), with their bodies too (body=1), and body=1's tracks. */
function expected(calls: StoredCall[], q: string): { fields: number[]; body: number[]; bodyTracks: number[] } {
  const t = q.trim();
  const term = t === '' ? null : fold(t);
  const out = { fields: [] as number[], body: [] as number[], bodyTracks: [] as number[] };
  for (let i = calls.length - 1; i >= 0; i--) {
    const c = calls[i]!;
    const byFields = term === null || c.fields.includes(term);
    if (byFields) out.fields.push(c.id);
    if (byFields || c.folded.some((x) => x.includes(term!))) {
      out.body.push(c.id);
      if (c.type === 'track') out.bodyTracks.push(c.id);
    }
  }
  return out;
}

// ---------- the terms ----------

const FIXED = [
  '"', '""', '"""', '*', '***', '(', ')', ':', '^', '-', '+', 'NEAR', 'NEAR(', 'near(a b)', 'a OR b', 'AND', ' OR ', 'NOT', 'text:', 'body_index:', '"*"', '^a', 'a*',
  '\u0000', '\u0000\u0000', 'a\u0000', '\u0000\u0000\u0000', '\u0301', 'e\u0301', '\u00e9', 'caf\u00e9', 'cafe\u0301', '\u{1F600}', '\u{1F468}\u200D\u{1F469}', '\u200D',
  '\\', '\\\\', '\\"', '\\u0000', '\\n', '\n', '\r\n', '\u2028', '%', '_', '|', '%_|', "'", ' ',
  'user', 'user-1', 'anon-', 'm-', 'envelope-', 'sentAt', 'batch', 'type', 'track', 'null', 'true', '123', '12345',
  '\u0130', 'i\u0307', '\u212a', 'k', 'ß', 'ss', 'σ', 'ς', 'ΣΟΦ', 'ﬃ', 'ffi', '\ufffd', '\ufffe', '\uffff', 'a\ufffd', '\ufffd\ufffd\ufffd', '\ud83d', 'x\ud800y',
];

function cutByCodePoints(g: Gen, s: string, len: number): string {
  const cps = [...s];
  if (cps.length <= len) return s;
  const at = g.int(0, cps.length - len);
  return cps.slice(at, at + len).join('');
}

function cutByUnits(g: Gen, s: string, len: number): string {
  if (s.length <= len) return s;
  const at = g.int(0, s.length - len);
  return s.slice(at, at + len);
}

const TWINS: [RegExp, string[]][] = [
  [/[\ufffd\ufffe\uffff]/, ['\ufffd', '\ufffe', '\uffff']],
  [/\u00e9/, ['e\u0301']],
  [/e\u0301/, ['\u00e9']],
  [/\u0000/, ['', '\n', ' ']],
  [/\n/, ['', '\u0000', ' ']],
  [/ß/, ['ss', '\u1e9e']],
  [/ς/, ['σ', 'Σ']],
];

function mutate(g: Gen, s: string): string {
  const r = g.unit();
  if (r < 0.25) {
    // A character swapped for one the index might take for it.
    const twins = TWINS.filter(([re]) => re.test(s));
    if (twins.length > 0) {
      const [re, alts] = g.pick(twins);
      return s.replace(re, g.pick(alts));
    }
  }
  const cps = [...s];
  if (r < 0.45 && cps.length > 1) {
    cps.splice(g.int(0, cps.length - 1), 1);
    return cps.join('');
  }
  if (r < 0.6) {
    cps.splice(g.int(0, cps.length), 0, g.pick(ATOMS));
    return cps.join('');
  }
  if (r < 0.75) return s.toUpperCase();
  if (r < 0.85) return `${g.pick([' ', '\t', '\n', '\u00a0', '\ufeff'])}${s}${g.pick(['', ' ', '\n'])}`;
  return cps.reverse().join('');
}

/** A term and how it was made (for the failure message). */
type Term = { q: string; how: string };

/** Under three code points once trimmed and folded: never looked up in the index, each search reads every body. */
const isShort = (q: string) => [...fold(q.trim())].length < 3;

/**
 * The fixed terms, and `count` drawn from the calls stored now. Short terms cost a read of every
 * body per page whatever the index holds (documented as slow), so `full` checks take every fixed
 * one and the others only those of three code points or more, and at most SHORT_MAX drawn ones.
 */
function terms(g: Gen, calls: StoredCall[], count: number, full: boolean): Term[] {
  const out: Term[] = FIXED.filter((q) => full || !isShort(q)).map((q) => ({ q, how: 'fixed' }));
  const withTexts = calls.filter((c) => c.texts.length > 0);
  const madeIds = calls.filter((c) => c.madeId !== null);
  const lengths = [1, 2, 3, 3, 3, 3, 4, 4, 5, 6, 8, 12, 20];
  let short = 0;
  for (let i = 0; i < count && withTexts.length > 0; i++) {
    const c = g.pick(withTexts);
    // Values more often than keys: most keys are in most calls.
    const text = g.chance(0.75) && c.values.length > 0 ? g.pick(c.values) : g.pick(c.texts);
    const kind = g.unit();
    if (kind < 0.35) out.push({ q: cutByCodePoints(g, text, g.pick(lengths)), how: `cut from call ${c.id}` });
    else if (kind < 0.42) out.push({ q: cutByUnits(g, text, g.int(1, 5)), how: `cut (UTF-16) from call ${c.id}` });
    else if (kind < 0.52) out.push({ q: cutByCodePoints(g, c.raw, g.int(2, 10)), how: `cut from call ${c.id}'s JSON text` });
    else if (kind < 0.6 && c.texts.length > 1) {
      // Across two neighbouring texts: the end of one and the start of the next, as one term.
      const j = g.int(0, c.texts.length - 2);
      const a = [...c.texts[j]!];
      const b = [...c.texts[j + 1]!];
      out.push({ q: a.slice(-g.int(1, 3)).join('') + b.slice(0, g.int(1, 3)).join(''), how: `across two texts of call ${c.id}` });
    } else if (kind < 0.63) out.push({ q: cutByCodePoints(g, c.fields, g.int(3, 10)), how: `cut from call ${c.id}'s fields` });
    else if (kind < 0.68 && madeIds.length > 0) {
      // In one call's fields only (and, echoed, in other calls' bodies): body=1 must still list it (issue 37, item 9).
      if (echoed.length > 0 && g.chance(0.6)) out.push({ q: g.pick(echoed), how: 'a made messageId part echoed in bodies' });
      else {
        const m = g.pick(madeIds);
        out.push({ q: cutByCodePoints(g, m.madeId!, g.int(3, 12)), how: `cut from the messageId the lab made for call ${m.id}` });
      }
    }
    else if (kind < 0.9) out.push({ q: mutate(g, cutByCodePoints(g, text, g.pick(lengths))), how: `mutated from call ${c.id}` });
    else out.push({ q: Array.from({ length: g.int(1, 4) }, () => (g.chance(0.5) ? g.pick(ATOMS) : g.word())).join(''), how: 'random' });
    if (isShort(out[out.length - 1]!.q) && ++short > SHORT_MAX) out.pop();
  }
  // The API takes at most 200 characters.
  const seen = new Set<string>();
  return out.filter((t) => t.q.length > 0 && t.q.length <= 200 && !seen.has(t.q) && (seen.add(t.q), true));
}

// ---------- one check ----------

type Listed = { ids: number[]; totals: number[] };

async function list(t: TestEngine, q: string, body: boolean, limit: number, type?: string): Promise<Listed> {
  const ids: number[] = [];
  const totals: number[] = [];
  let before: number | undefined;
  for (;;) {
    const page = await t.call('listMessages', { q, body, limit, ...(type ? { type } : {}), ...(before === undefined ? {} : { before }) });
    ids.push(...page.items.map((c) => c.id));
    totals.push(page.total);
    if (page.next === null) break;
    before = page.next;
  }
  return { ids, totals };
}

const stats = { checks: 0, terms: 0, searches: 0, hits: 0, byLength: new Map<number, number>() };

function diff(want: number[], got: number[]): { missed: number[]; extra: number[]; repeated: number[]; order: boolean } {
  const w = new Set(want);
  const g = new Set<number>();
  const repeated: number[] = [];
  for (const id of got) {
    if (g.has(id)) repeated.push(id);
    else g.add(id);
  }
  return {
    missed: want.filter((id) => !g.has(id)),
    extra: [...g].filter((id) => !w.has(id)),
    repeated,
    order: got.every((id, i) => i === 0 || got[i - 1]! > id),
  };
}

/**
 * Every term searched with body=1 (page by page) and body=0, some also with another filter (the
 * index answering inside SQL), each compared with the brute force over the calls stored now.
 */
async function check(t: TestEngine, phase: string, g: Gen, o: { full?: boolean; count?: number } = {}): Promise<void> {
  const calls = snapshot(t.dataDir);
  const index = store.calls.bodyIndex;
  const state = `${phase} (${calls.length} calls, index up to call ${index.watermark}, ${index.behind()} behind)`;
  const failures: string[] = [];
  const show = (ids: number[]) => `[${ids.slice(0, 12).join(', ')}${ids.length > 12 ? `, … ${ids.length} in all` : ''}]`;
  const byId = new Map(calls.map((c) => [c.id, c]));
  for (const { q, how } of terms(g, calls, o.count ?? TERMS, o.full ?? false)) {
    const { body: want, fields: wantFields, bodyTracks: wantTyped } = expected(calls, q);
    // Now and then small pages, never more than three (a term the index cannot answer reads every body per page).
    const limit = g.chance(0.3) ? Math.min(500, Math.max(g.int(7, 60), Math.ceil((want.length + 1) / 3))) : 500;
    const got = await list(t, q, true, limit);
    const fieldsOnly = await list(t, q, false, 500);
    stats.searches += 2;
    stats.terms++;
    stats.hits += want.length > 0 ? 1 : 0;
    const cps = [...fold(q.trim())].length;
    stats.byLength.set(cps, (stats.byLength.get(cps) ?? 0) + 1);
    const name = `seed ${SEED}, ${state}: term ${JSON.stringify(q)} (${cps} code points once trimmed and folded; ${how})`;
    const d = diff(want, got.ids);
    if (d.missed.length || d.extra.length || d.repeated.length || !d.order) {
      const sample = [...d.missed, ...d.extra].slice(0, 2).map((id) => `call ${id}: fields ${JSON.stringify(byId.get(id)?.fields)}, body texts ${JSON.stringify(byId.get(id)?.texts)}`);
      failures.push(`${name}, body=1 (limit ${limit}): missed ${show(d.missed)}, false hits ${show(d.extra)}, repeated ${show(d.repeated)}${d.order ? '' : ', not newest first'}; ${sample.join('; ')}`);
    }
    if (got.totals.some((n) => n !== want.length)) failures.push(`${name}, body=1: totals ${JSON.stringify(got.totals)} where ${want.length} match`);
    const f = diff(wantFields, fieldsOnly.ids);
    if (f.missed.length || f.extra.length) failures.push(`${name}, body=0: missed ${show(f.missed)}, false hits ${show(f.extra)}`);
    // body=1 only widens.
    const widened = new Set(got.ids);
    const narrowed = fieldsOnly.ids.filter((id) => !widened.has(id));
    if (narrowed.length) failures.push(`${name}: body=1 dropped calls body=0 lists: ${show(narrowed)}`);
    // With another filter the index answers inside the query instead of beside it.
    if (g.chance(0.25) && wantTyped.length < 500) {
      const typed = await list(t, q, true, 500, 'track');
      stats.searches++;
      const ty = diff(wantTyped, typed.ids);
      if (ty.missed.length || ty.extra.length) failures.push(`${name}, body=1 type=track: missed ${show(ty.missed)}, false hits ${show(ty.extra)}`);
    }
  }
  stats.checks++;
  expect(failures, `${failures.length} disagreement(s) with the brute force; replay with FUZZ_SEED=${SEED}`).toEqual([]);
}

function cpuSeconds(since: NodeJS.CpuUsage): string {
  const d = process.cpuUsage(since);
  return ((d.user + d.system) / 1e6).toFixed(1);
}

/** Lets the background indexer run until it has every call, then holds it again. */
async function caughtUp(): Promise<void> {
  const index = store.calls.bodyIndex;
  index.resume();
  await waitWhileProgressing(() => index.behind() === 0, () => index.watermark, 'the body index to catch up');
  index.pause();
}

describe('body search against a brute force (issue 37)', () => {
  it(`finds exactly the calls a scan of every stored body finds: inserts, retention, clear, restart (seed ${SEED})`, { timeout: 600_000 }, async () => {
    console.log(`body-search property: FUZZ_SEED=${SEED}, ${CALLS} calls, ${TERMS} random terms per check`);
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const g = new Gen(mulberry32(SEED));
    dataDir = mkdtempSync(join(tmpdir(), 'wl-body-prop-'));
    let { t, sources } = await start();
    let sent = 0;

    // 1. Inserts: part indexed (the rest read from the bodies), then caught up in the background.
    sent += await insert(t, sources, g, CALLS, sent);
    expect(snapshot(t.dataDir)).toHaveLength(sent);
    // 100 to 600 calls behind, as right after a burst.
    store.calls.bodyIndex.step(60_000, sent - g.int(100, 600));
    await check(t, 'inserts, part indexed', g);
    await caughtUp();
    await check(t, 'inserts, indexed', g);

    // 2. Retention keeps the newest calls (its cut falls inside a batch: the batch's body stays for
    // the calls kept); calls arriving after it are read from their bodies until indexed.
    const keep = g.int(Math.floor(CALLS / 4), Math.floor(CALLS / 2));
    await t.call('updateSettings', { retentionCalls: keep });
    store.prune();
    expect(snapshot(t.dataDir)).toHaveLength(keep);
    // Back up, so the engine's own retention run does not take calls while the check reads.
    await t.call('updateSettings', { retentionCalls: 100_000_000 });
    sent += await insert(t, sources, g, 600, sent);
    await check(t, 'retention, new calls behind', g);
    await caughtUp();
    await check(t, 'retention, indexed', g);

    // 3. Clear: nothing is found; then calls stored again are indexed from scratch.
    await t.call('clearCalls', {});
    expect(snapshot(t.dataDir)).toHaveLength(0);
    await check(t, 'cleared', g, { full: true });
    const afterClear = await insert(t, sources, g, 1200, sent);
    sent += afterClear;
    store.calls.bodyIndex.step(60_000, afterClear - g.int(100, 600));
    await check(t, 'after clear, part indexed', g);
    await caughtUp();
    await check(t, 'after clear, indexed', g, { full: true });

    // 4. Restart on the same file with the index part built: it goes on from its mark.
    const beforeRestart = await insert(t, sources, g, 800, sent);
    sent += beforeRestart;
    store.calls.bodyIndex.step(60_000, beforeRestart - g.int(100, 600));
    const mark = store.calls.bodyIndex.watermark;
    await t.stop({ keepData: true });
    te = undefined;
    ({ t, sources } = await start());
    expect(store.calls.bodyIndex.watermark).toBe(mark);
    await check(t, 'restarted, part indexed', g);
    await caughtUp();
    await check(t, 'restarted, indexed', g);

    const lengths = [...stats.byLength].sort((a, b) => a[0] - b[0]).map(([n, k]) => `${n}:${k}`).join(' ');
    console.log(
      `body-search property: FUZZ_SEED=${SEED}: ${sent} calls sent, ${stats.checks} checks, ${stats.terms} terms (${stats.hits} with matches; by code points ${lengths}), ` +
        `${stats.searches} searches, 0 misses, 0 false hits, ${((performance.now() - t0) / 1000).toFixed(1)} s (${cpuSeconds(cpu0)} s of CPU)`,
    );
  });
});
