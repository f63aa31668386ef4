import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { startControlServer } from '../../src/main/server/control-server';
import { formatSummary, runCheck } from '../../src/main/cli-check';
import type { ViolationSummary } from '../../src/shared/tracking-plans.contract';
import type { PlanVerdict } from '../../src/shared/tracking-plan.schema';
import type { CallSummary, Page, Source } from '../../src/shared/types';
import type { ReplayResult } from '../../src/shared/api.contract';
import type { CallStats } from '../../src/shared/call-stats';
import { testLab } from '../helpers/test-lab';
import { waitFor, type TestEngine } from '../helpers/engine';

// Tracking plans (issue 24), what a review found, over real sockets and a real SQLite file: a replay
// forwards what ingest would have (the omitted properties left out); duplicate messageIds, dropped
// before the plan is asked, count nowhere in violations; a summary item counts calls and says how many
// violations they had; `check` of a source without a plan answers null; ?violations=false lists the
// clean checked calls.

const TOKEN = 'tracking-plans-review-token';
const lab = testLab();
let server: { app: FastifyInstance; url: string } | undefined;
afterEach(async () => {
  await server?.app.close();
  server = undefined;
});

async function start(config: unknown): Promise<TestEngine> {
  const t = await lab.start({ config });
  server = await startControlServer({ engine: t.engine, host: '127.0.0.1', port: 0, token: TOKEN });
  return t;
}

async function api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(server!.url + path, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}

/** A rule planning only `total` (a number), refusing any other property. */
const ONLY_TOTAL = {
  type: 'TRACK',
  key: 'A',
  version: 1,
  jsonSchema: { type: 'object', properties: { properties: { type: 'object', properties: { total: { type: 'number' } }, additionalProperties: false } } },
};

const list = async (query: string) => (await api<Page<CallSummary>>('GET', `/api/messages?${query}`)).body.items;

describe('replay forwards what ingest would have', () => {
  it('a call whose plan omitted properties, not forwarded when it arrived, is replayed without them', async () => {
    const receiver = await lab.receiver();
    const urls = [{ url: `${receiver.url}/hook`, headers: {} }];
    const t = await start({
      sources: [{ name: 'app', writeKey: 'wk_app', webhooks: { enabled: false, urls }, trackingPlan: { name: 'p', unplannedProperties: 'omit' } }],
      trackingPlans: [{ name: 'p', rules: [ONLY_TOTAL] }],
    });
    expect((await t.post('/v1/track', { type: 'track', userId: 'u', event: 'A', properties: { total: 1, secret: 'LEAK' } }, { writeKey: 'wk_app' })).status).toBe(200);
    const [c] = await waitFor(async () => ((await list('limit=1')).length ? list('limit=1') : null), 'the call');
    const source = (await api<Source[]>('GET', '/api/sources')).body[0]!;
    expect((await api<Source>('PATCH', `/api/sources/${source.id}`, { webhooks: { ...source.webhooks, enabled: true } })).status).toBe(200);
    const r = await api<ReplayResult>('POST', `/api/messages/${c!.id}/replay`, {});
    expect(r.status).toBe(200);
    const [hook] = await receiver.waitForRequests(1);
    const body = JSON.parse(hook!.body.toString()) as Record<string, unknown>;
    expect(body.properties).toEqual({ total: 1 });
    expect(hook!.body.toString()).not.toContain('LEAK');
    // The stored call keeps what arrived, and says what was left out.
    const detail = await t.call('getMessage', { id: c!.id });
    expect(detail.call.raw).toMatchObject({ properties: { total: 1, secret: 'LEAK' } });
    expect(detail.planCheck?.omitted).toEqual(['/properties/secret']);
    // An edited replay sends what was typed, as typed.
    await api('POST', `/api/messages/${c!.id}/replay`, { body: JSON.stringify({ ...body, properties: { total: 1, typed: 'yes' } }) });
    const [, edited] = await receiver.waitForRequests(2);
    expect(JSON.parse(edited!.body.toString()).properties).toEqual({ total: 1, typed: 'yes' });
  });

  it('an Actions request, and its replay, carry the call without the omitted properties', async () => {
    const receiver = await lab.receiver();
    const t = await start({
      sources: [{
        name: 'act', writeKey: 'wk_act', trackingPlan: { name: 'p', unplannedProperties: 'omit' },
        webhooks: { enabled: true, mode: 'actions', mappings: [{ name: 'all', trigger: {}, url: `${receiver.url}/act`, method: 'POST', headers: {} }] },
      }],
      trackingPlans: [{ name: 'p', rules: [ONLY_TOTAL] }],
    });
    await t.post('/v1/track', { userId: 'u', event: 'A', properties: { total: 1, secret: 'LEAK' } }, { writeKey: 'wk_act' });
    const [sent] = await receiver.waitForRequests(1);
    expect(JSON.parse(sent!.body.toString()).properties).toEqual({ total: 1 });
    const [c] = await list('limit=1');
    expect((await api<ReplayResult>('POST', `/api/messages/${c!.id}/replay`, {})).status).toBe(200);
    const [, replayed] = await receiver.waitForRequests(2);
    expect(replayed!.body.toString()).not.toContain('LEAK');
    expect(JSON.parse(replayed!.body.toString()).properties).toEqual({ total: 1 });
  });
});

describe('duplicate messageIds', () => {
  it('are dropped before the plan is asked: blocked 1 everywhere, the event counted once, its example the blocked call', async () => {
    const t = await start({
      sources: [{ name: 'shop', writeKey: 'wk_shop', trackingPlan: { name: 'p', unplannedEvents: 'block' } }],
      trackingPlans: [{ name: 'p', rules: [ONLY_TOTAL] }],
    });
    for (let i = 0; i < 3; i++) {
      expect((await t.post('/v1/track', { userId: 'u', event: 'Nope', messageId: 'm-1' }, { writeKey: 'wk_shop' })).status).toBe(200);
    }
    const all = await list('limit=10');
    expect(all.map((c) => [c.status, c.dropReason, c.violations])).toEqual([
      ['dropped', 'duplicate messageId', null],
      ['dropped', 'duplicate messageId', null],
      ['blocked', 'blocked by tracking plan: unplanned event "Nope"', 1],
    ]);
    const first = all[2]!;
    expect((await list('status=blocked')).map((c) => c.id)).toEqual([first.id]);
    expect((await list('violations=true')).map((c) => c.id)).toEqual([first.id]);
    expect((await api<CallStats>('GET', '/api/stats')).body).toMatchObject({ calls: 3, blocked: 1, dropped: 2 });
    const v = (await api<ViolationSummary>('GET', '/api/violations')).body;
    expect(v).toMatchObject({ checked: 1, withViolations: 1, blocked: 1 });
    expect(v.items.map((i) => [i.event, i.kind, i.count, i.violations, i.exampleCallId])).toEqual([['Nope', 'unplanned_event', 1, 1, first.id]]);
    const stats = (await api<{ key: string | null; matched: number; failed: number }[]>('GET', `/api/tracking-plans/${(await t.call('listTrackingPlans', {}))[0]!.id}/stats`)).body;
    expect(stats.map((s) => [s.key, s.matched, s.failed])).toEqual([['A', 0, 0]]);
  });
});

describe('violations per call, and what check prints', () => {
  it('a summary item counts calls, and its violations apart; check says "in 3 calls, 6 violations"', async () => {
    const t = await start({
      sources: [{ name: 'web', writeKey: 'wk_web', trackingPlan: { name: 'p' } }],
      trackingPlans: [{ name: 'p', rules: [ONLY_TOTAL] }],
    });
    const batch = [1, 2, 3].map((n) => ({ type: 'track', userId: 'u', event: 'A', properties: { total: n, x: 1, y: 2 } }));
    expect((await t.post('/v1/batch', { batch }, { writeKey: 'wk_web' })).status).toBe(200);
    const v = (await api<ViolationSummary>('GET', '/api/violations')).body;
    expect(v).toMatchObject({ checked: 3, withViolations: 3, blocked: 0 });
    expect(v.items.map((i) => [i.event, i.kind, i.count, i.violations])).toEqual([['A', 'unplanned_property', 3, 6]]);
    const args = { api: server!.url, token: TOKEN, timeoutMs: 5_000, json: false, failOnViolations: false };
    const r = await runCheck(args, undefined);
    expect(r.violations?.items[0]).toMatchObject({ count: 3, violations: 6 });
    expect(formatSummary(r)).toMatch(/^ {2}web track "A": unplanned property in 3 calls, 6 violations \(e\.g\. call \d+\)$/m);
  });
});

describe('a summary of many kinds of violation', () => {
  it('lists the 500 most frequent with how many there are; check prints 10 and says how many more', async () => {
    // 20,000 distinct unplanned events made a 5.4 MB answer (review).
    const t = await start({ sources: [{ name: 'web', writeKey: 'wk_many', trackingPlan: { name: 'p' } }], trackingPlans: [{ name: 'p', rules: [ONLY_TOTAL] }] });
    const batch = Array.from({ length: 502 }, (_, i) => ({ type: 'track', userId: 'u', event: i < 2 ? 'Twice' : `E${i}`, properties: {} }));
    expect((await t.post('/v1/batch', { batch }, { writeKey: 'wk_many' })).status).toBe(200);
    const v = (await api<ViolationSummary>('GET', '/api/violations')).body;
    expect([v.items.length, v.itemsTotal, v.withViolations]).toEqual([500, 501, 502]);
    expect(v.items[0]).toMatchObject({ event: 'Twice', count: 2 });
    const r = await runCheck({ api: server!.url, token: TOKEN, timeoutMs: 5_000, json: false, failOnViolations: false }, undefined);
    expect(formatSummary(r)).toMatch(/^ {2}… and 491 more kinds of violation by event \(--json lists the 500 most frequent\)$/m);
  });
});

describe('what check prints of names anyone can send', () => {
  it('shows newlines, terminal escapes and bidi controls in event and source names escaped: no forged line', async () => {
    // Found by a review: an event named "x\nOK: nothing failed…" printed an OK line under FAILED, and ESC sequences reached the CI log.
    const source = 'web\u001b[31m\u202e';
    const t = await start({ sources: [{ name: source, writeKey: 'wk_esc', trackingPlan: { name: 'p' } }], trackingPlans: [{ name: 'p', rules: [ONLY_TOTAL] }] });
    const event = 'x"\nOK: nothing failed, expired or was dropped\n\u001b[2K\u001b[1Afoo\u2028\u061c\u200e\u200f';
    expect((await t.post('/v1/track', { userId: 'u', event, properties: {} }, { writeKey: 'wk_esc' })).status).toBe(200);
    const r = await runCheck({ api: server!.url, token: TOKEN, timeoutMs: 5_000, json: false, failOnViolations: true }, undefined);
    const text = formatSummary(r);
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e]/);
    expect(text.split('\n')).not.toContain('OK: nothing failed, expired or was dropped');
    expect(text).toMatch(/^FAILED: 1 with tracking plan violations$/m);
    expect(text).toContain('  web\\u001b[31m\\u202e track "x"\\u000aOK: nothing failed, expired or was dropped\\u000a\\u001b[2K\\u001b[1Afoo\\u2028\\u061c\\u200e\\u200f": unplanned event in 1 call');
  });
});

describe('smaller answers', () => {
  it('POST /api/tracking-plans/check for a source without a plan answers null', async () => {
    await start({ sources: [{ name: 'bare', writeKey: 'wk_bare' }] });
    const source = (await api<Source[]>('GET', '/api/sources')).body[0]!;
    const r = await api<PlanVerdict | null>('POST', '/api/tracking-plans/check', { sourceId: source.id, call: { type: 'track', event: 'X' } });
    expect(r).toEqual({ status: 200, body: null });
  });

  it('GET /api/messages?violations=false lists the calls checked and found clean (not those unchecked, dropped or with violations)', async () => {
    const t = await start({
      sources: [{ name: 'web', writeKey: 'wk_web', trackingPlan: { name: 'p' } }, { name: 'bare', writeKey: 'wk_bare' }],
      trackingPlans: [{ name: 'p', rules: [ONLY_TOTAL] }],
    });
    await t.post('/v1/batch', { batch: [
      { type: 'track', userId: 'u', event: 'A', properties: { total: 1 } },
      { type: 'track', userId: 'u', event: 'A', properties: { total: 'x' } },
      { type: 'track', event: 'A', properties: { total: 2 } },
    ] }, { writeKey: 'wk_web' });
    await t.post('/v1/track', { userId: 'u', event: 'A', properties: { total: 3 } }, { writeKey: 'wk_bare' });
    const all = await list('limit=10');
    expect(all.map((c) => [c.status, c.violations])).toEqual([['accepted', null], ['dropped', null], ['accepted', 1], ['accepted', 0]]);
    expect((await list('violations=false')).map((c) => c.id)).toEqual([all[3]!.id]);
    expect((await list('violations=0')).map((c) => c.id)).toEqual([all[3]!.id]);
    expect((await list('violations=true')).map((c) => c.id)).toEqual([all[2]!.id]);
  });
});
