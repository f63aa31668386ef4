import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { startControlServer } from '../../src/main/server/control-server';
import type { ApiErrorBody } from '../../src/shared/api.contract';
import type { ImportedTrackingPlan, OffPlanStats, ViolationSummary, DraftTrackingPlan } from '../../src/shared/tracking-plans.contract';
import type { PlanVerdict, TrackingPlan } from '../../src/shared/tracking-plan.schema';
import type { CallDetail, Page, CallSummary, Source } from '../../src/shared/types';
import { testLab } from '../helpers/test-lab';
import type { TestEngine } from '../helpers/engine';

// Tracking plans through the control API over a real socket (issue 24): create, replace, delete,
// list, import a Typewriter plan.json, connect a source, check a call without storing it, draft a plan
// from calls, and the violations summary; each change takes effect on the next call the collector gets.

const TOKEN = 'tracking-plans-token';
const lab = testLab();
let server: { app: FastifyInstance; url: string } | undefined;
afterEach(async () => {
  await server?.app.close();
  server = undefined;
});

async function start(config: unknown = {}): Promise<TestEngine> {
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

const rule = (key: string, properties: Record<string, unknown>, required: string[] = []) => ({
  type: 'TRACK',
  key,
  version: 1,
  jsonSchema: { type: 'object', properties: { properties: { type: 'object', properties, required } } },
});

async function newest(t: TestEngine, q: string): Promise<CallDetail> {
  const page = (await api<Page<CallSummary>>('GET', `/api/messages?q=${encodeURIComponent(q)}&limit=1`)).body;
  return (await api<CallDetail>('GET', `/api/messages/${page.items[0]!.id}`)).body;
}

describe('plans over the control API', () => {
  it('create, list, connect, replace (the next call is checked against the new rules), delete (calls are no longer checked)', async () => {
    const t = await start({ sources: [{ name: 'web', writeKey: 'wk_web' }] });
    const source = (await api<Source[]>('GET', '/api/sources')).body[0]!;
    const created = await api<TrackingPlan>('POST', '/api/tracking-plans', { name: 'shop', rules: [rule('Signed Up', { plan: { type: 'string' } }, ['plan'])] });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ name: 'shop', rules: [{ type: 'TRACK', key: 'Signed Up', version: 1 }], sources: [] });
    const connected = await api<TrackingPlan>('PUT', `/api/sources/${source.id}/tracking-plan`, { trackingPlan: { name: 'shop' } });
    expect(connected.body.sources).toEqual([{ sourceId: source.id, sourceName: 'web', unplannedEvents: 'allow', unplannedProperties: 'allow', violations: 'allow' }]);
    expect((await api<TrackingPlan[]>('GET', '/api/tracking-plans')).body.map((p) => p.name)).toEqual(['shop']);

    await t.post('/v1/track', { userId: 'u', event: 'Signed Up', properties: { seats: 2 } }, { writeKey: 'wk_web' });
    expect((await newest(t, 'Signed Up')).violations?.map((v) => v.kind)).toEqual(['required_missing']);

    // Replaced: "plan" no longer required, "seats" must be a string now.
    const replaced = await api<TrackingPlan>('PUT', `/api/tracking-plans/${created.body.id}`, { name: 'shop', rules: [rule('Signed Up', { seats: { type: 'string' } })] });
    expect(replaced.status).toBe(200);
    await t.post('/v1/track', { userId: 'u2', event: 'Signed Up', properties: { seats: 2 } }, { writeKey: 'wk_web' });
    const second = await newest(t, 'u2');
    expect(second.violations?.map((v) => [v.kind, v.path])).toEqual([['wrong_type', '/properties/seats']]);
    // The first call keeps what it had when it arrived.
    const all = (await api<Page<CallSummary>>('GET', '/api/messages?q=Signed%20Up')).body.items;
    const first = (await api<CallDetail>('GET', `/api/messages/${all[all.length - 1]!.id}`)).body;
    expect(first.violations?.map((v) => v.kind)).toEqual(['required_missing']);
    // Checked again against the plan as it is now: answered, the stored verdict left as it was.
    const again = await api<{ callId: number; verdict: PlanVerdict | null }[]>('POST', '/api/tracking-plans/recheck', { callIds: [first.call.id] });
    expect(again.body.map((a) => [a.callId, a.verdict?.violations.map((v) => [v.kind, v.path])])).toEqual([[first.call.id, [['wrong_type', '/properties/seats']]]]);
    expect((await api<CallDetail>('GET', `/api/messages/${first.call.id}`)).body.violations?.map((v) => v.kind)).toEqual(['required_missing']);

    expect((await api('DELETE', `/api/tracking-plans/${created.body.id}`)).status).toBe(200);
    expect((await api<TrackingPlan[]>('GET', '/api/tracking-plans')).body).toEqual([]);
    await t.post('/v1/track', { userId: 'u3', event: 'Signed Up', properties: { seats: 2 } }, { writeKey: 'wk_web' });
    expect((await newest(t, 'u3')).violations).toBeNull();
    expect((await api<{ verdict: unknown }[]>('POST', '/api/tracking-plans/recheck', { callIds: [first.call.id] })).body).toEqual([{ callId: first.call.id, verdict: null }]);
  });

  it('a rule whose schema does not compile is refused (400) naming the rule and Ajv\'s reason; a duplicate name is 409', async () => {
    await start();
    const bad = await api<ApiErrorBody>('POST', '/api/tracking-plans', { name: 'shop', rules: [rule('A', {}), { type: 'TRACK', key: 'B', version: 1, jsonSchema: { type: 'object', properties: { x: { type: 'nope' } } } }] });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_input');
    expect(bad.body.fields?.[0]?.path).toBe('rules[1].jsonSchema');
    expect(bad.body.error).toMatch(/^rule TRACK "B" version 1: its JSON Schema does not compile: schema is invalid: data\/properties\/x\/type must be equal to one of the allowed values/);
    const shape = await api<ApiErrorBody>('POST', '/api/tracking-plans', { name: 'shop', rules: [{ type: 'TRACK', version: 1, jsonSchema: {} }] });
    expect(shape.status).toBe(400);
    expect(shape.body.fields?.map((f) => f.path)).toEqual(['rules[0].key']);
    expect((await api('POST', '/api/tracking-plans', { name: 'shop', rules: [] })).status).toBe(200);
    const dup = await api<ApiErrorBody>('POST', '/api/tracking-plans', { name: 'shop', rules: [] });
    expect(dup.status).toBe(409);
    expect(dup.body.fields).toEqual([{ path: 'name', message: 'already used by another plan' }]);
    expect((await api<ApiErrorBody>('PUT', '/api/sources/nope/tracking-plan', { trackingPlan: null })).status).toBe(404);
  });

  it("imports Typewriter's plan.json (v8) by its name; importing again needs replace: true", async () => {
    const t = await start({ sources: [{ name: 'web', writeKey: 'wk_web' }] });
    const file = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'tracking-plans', 'typewriter-v8-plan.json'), 'utf8')) as unknown;
    const imported = await api<ImportedTrackingPlan>('POST', '/api/tracking-plans/import', { file });
    expect(imported.status).toBe(200);
    expect(imported.body).toMatchObject({ shape: 'typewriter-v8', replaced: false, plan: { name: 'Typewriter E2E' } });
    expect(imported.body.plan.rules).toHaveLength(25);
    expect((await api<ApiErrorBody>('POST', '/api/tracking-plans/import', { file })).status).toBe(409);
    expect((await api<ImportedTrackingPlan>('POST', '/api/tracking-plans/import', { file, replace: true })).body.replaced).toBe(true);
    const source = (await api<Source[]>('GET', '/api/sources')).body[0]!;
    await api('PUT', `/api/sources/${source.id}/tracking-plan`, { trackingPlan: { name: 'Typewriter E2E', unplannedEvents: 'block' } });
    await t.post('/v1/track', { userId: 'u', event: 'Custom Violation Handler', properties: { 'regex property': 'Rick' } }, { writeKey: 'wk_web' });
    const d = await newest(t, 'Custom Violation Handler');
    expect(d.violations?.map((v) => [v.kind, v.path])).toEqual([['schema', '/properties/regex property']]);
    const notAPlan = await api<ApiErrorBody>('POST', '/api/tracking-plans/import', { file: { hello: 1 } });
    expect(notAPlan.status).toBe(400);
    expect(notAPlan.body.error).toMatch(/^file: no rules/);
    // A name read from the file is held to a given name's rules: one with a lone surrogate made an export that did not import (review).
    const lone = await api<ApiErrorBody>('POST', '/api/tracking-plans/import', { file: { display_name: 'd\ud800', rules: { events: [] } } });
    expect(lone.status).toBe(400);
    expect(lone.body.fields).toEqual([{ path: 'file.name', message: expect.stringMatching(/lone surrogate/) }]);
    // Segment's rules files (an array) name no plan: refused on the field, so a screen can ask for it; given, imported.
    const rules = [{ type: 'TRACK', key: 'A', version: 1, jsonSchema: {} }];
    const unnamed = await api<ApiErrorBody>('POST', '/api/tracking-plans/import', { file: rules });
    expect(unnamed.status).toBe(400);
    expect(unnamed.body.fields).toEqual([{ path: 'name', message: 'the file names no plan; give one' }]);
    expect((await api<ImportedTrackingPlan>('POST', '/api/tracking-plans/import', { file: rules, name: 'rules' })).body).toMatchObject({ shape: 'segment-public-api', plan: { name: 'rules' } });
  });

  it('checks a call without storing it: against a source\'s plan, or against given rules', async () => {
    await start({ sources: [{ name: 'web', writeKey: 'wk_web', trackingPlan: { name: 'shop' } }], trackingPlans: [{ name: 'shop', rules: [rule('A', { n: { type: 'number' } })] }] });
    const source = (await api<Source[]>('GET', '/api/sources')).body[0]!;
    const bySource = await api<PlanVerdict>('POST', '/api/tracking-plans/check', { sourceId: source.id, call: { type: 'track', event: 'A', properties: { n: 'x' } } });
    expect(bySource.body.violations.map((v) => v.kind)).toEqual(['wrong_type']);
    const byRules = await api<PlanVerdict>('POST', '/api/tracking-plans/check', { rules: [rule('B', {}, ['must'])], call: { type: 'track', event: 'B', properties: {} } });
    expect(byRules.body.violations.map((v) => v.path)).toEqual(['/properties/must']);
    expect((await api<Page<CallSummary>>('GET', '/api/messages')).body.total).toBe(0);
    // 1e999 is Infinity to JSON.parse: a plan's `number` passed it, where the collector drops the call.
    const res = await fetch(`${server!.url}/api/tracking-plans/check`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: `{"sourceId":"${source.id}","call":{"type":"track","event":"A","properties":{"n":1e999}}}`,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { fields?: unknown }).fields).toEqual([{ path: 'call.properties.n', message: expect.stringMatching(/Infinity.*collector drops such a call/) }]);
  });

  it('GET /api/violations counts per source, event and kind with the newest example; a draft plan comes from observed calls', async () => {
    const t = await start({ sources: [{ name: 'web', writeKey: 'wk_web', trackingPlan: { name: 'shop' } }], trackingPlans: [{ name: 'shop', rules: [rule('A', { n: { type: 'number' } }, ['n'])] }] });
    await t.post('/v1/batch', { batch: [
      { type: 'track', userId: 'u', event: 'A', properties: { n: 'x' } },
      { type: 'track', userId: 'u', event: 'A', properties: { n: 'y' } },
      { type: 'track', userId: 'u', event: 'A', properties: { n: 1 } },
      { type: 'track', userId: 'u', event: 'Z', properties: { k: true } },
    ] }, { writeKey: 'wk_web' });
    const summary = (await api<ViolationSummary>('GET', '/api/violations')).body;
    expect(summary).toMatchObject({ checked: 4, withViolations: 3, blocked: 0 });
    expect(summary.items.map((i) => [i.sourceName, i.event, i.kind, i.count])).toEqual([
      ['web', 'A', 'wrong_type', 2],
      ['web', 'Z', 'unplanned_event', 1],
    ]);
    const example = (await api<CallDetail>('GET', `/api/messages/${summary.items[0]!.exampleCallId}`)).body;
    expect(example.call.raw).toMatchObject({ properties: { n: 'y' } });

    const source = (await api<Source[]>('GET', '/api/sources')).body[0]!;
    const draft = (await api<DraftTrackingPlan>('POST', '/api/tracking-plans/draft', { sourceId: source.id })).body;
    expect(draft.calls).toBe(4);
    expect(draft.name).toBe('web (draft)');
    expect(draft.rules.map((r) => r.key)).toEqual(['A', 'Z']);
    expect(draft.rules[0]!.jsonSchema.properties).toEqual({ properties: { type: 'object', properties: { n: { type: ['integer', 'string'] } }, required: ['n'] } });
    // The draft is a plan the API takes as it is.
    expect((await api('POST', '/api/tracking-plans', { name: draft.name, rules: draft.rules })).status).toBe(200);

    // Picked calls: only those, named after their source when they share one; a call that does not exist is a 404.
    const listed = (await api<{ items: { id: number; label: string | null }[] }>('GET', '/api/messages?limit=10')).body.items;
    const picked = listed.filter((c) => c.label === 'Z').map((c) => c.id);
    const fromPicked = (await api<DraftTrackingPlan>('POST', '/api/tracking-plans/draft', { callIds: picked })).body;
    expect(fromPicked).toMatchObject({ name: 'web (draft)', calls: 1 });
    expect(fromPicked.rules.map((r) => r.key)).toEqual(['Z']);
    await t.call('createSource', { name: 'app', writeKey: 'wk_app' });
    await t.post('/v1/track', { userId: 'u', event: 'B' }, { writeKey: 'wk_app' });
    const all = (await api<{ items: { id: number }[] }>('GET', '/api/messages?limit=10')).body.items.map((c) => c.id);
    expect((await api<DraftTrackingPlan>('POST', '/api/tracking-plans/draft', { callIds: all })).body).toMatchObject({ name: 'observed (draft)', calls: 5 });
    const missing = await api<ApiErrorBody>('POST', '/api/tracking-plans/draft', { callIds: [99_999] });
    expect(missing.status).toBe(404);
    // Calls sent to /v1/track and /v1/identify carry no type in their body: the path gave it.
    await t.post('/v1/track', { userId: 'u', event: 'Pathed', properties: { p: 1 } }, { writeKey: 'wk_app' });
    await t.post('/v1/identify', { userId: 'u', traits: { plan: 'pro' } }, { writeKey: 'wk_app' });
    const pathed = (await api<{ items: { id: number }[] }>('GET', '/api/messages?limit=2')).body.items.map((c) => c.id);
    const fromPaths = (await api<DraftTrackingPlan>('POST', '/api/tracking-plans/draft', { callIds: pathed })).body;
    expect(fromPaths.rules.map((r) => `${r.type}:${r.key ?? ''}`)).toEqual(['IDENTIFY:', 'TRACK:Pathed']);
  });

  it('a config file connecting to a plan that does not exist, or with a rule that does not compile, is refused whole', async () => {
    const t = await start();
    const res = await api<ApiErrorBody>('POST', '/api/config', {
      sources: [{ name: 'web', trackingPlan: { name: 'nope' } }],
      trackingPlans: [{ name: 'shop', rules: [{ type: 'TRACK', key: 'A', version: 1, jsonSchema: { required: 'x' } }] }],
    });
    expect(res.status).toBe(400);
    expect(res.body.fields?.map((f) => f.path).sort()).toEqual(['sources[0].trackingPlan.name', 'trackingPlans[0].rules[0].jsonSchema']);
    expect(await t.call('listSources', {})).toEqual([]);
    expect(await t.call('listTrackingPlans', {})).toEqual([]);
  });
});

describe('per rule', () => {
  it('GET /api/tracking-plans/:id/stats: calls each rule checked, passed and failed in the last hour, the worst first', async () => {
    const t = await start({
      sources: [{ name: 'web', writeKey: 'wk_web', trackingPlan: { name: 'shop' } }],
      trackingPlans: [{ name: 'shop', rules: [rule('A', { n: { type: 'number' } }, ['n']), rule('B', {}), { type: 'COMMON', version: 1, jsonSchema: { type: 'object', required: ['userId'] } }] }],
    });
    await t.post('/v1/batch', { batch: [
      { type: 'track', userId: 'u', event: 'A', properties: { n: 1 } },
      { type: 'track', userId: 'u', event: 'A', properties: { n: 'x' } },
      { type: 'track', anonymousId: 'a', event: 'B' },
      { type: 'track', userId: 'u', event: 'B' },
    ] }, { writeKey: 'wk_web' });
    const plan = (await api<TrackingPlan[]>('GET', '/api/tracking-plans')).body[0]!;
    const stats = await api<{ type: string; key: string | null; matched: number; passed: number; failed: number }[]>('GET', `/api/tracking-plans/${plan.id}/stats`);
    expect(stats.body.map((s) => [s.type, s.key, s.matched, s.passed, s.failed])).toEqual([
      ['TRACK', 'A', 2, 1, 1],
      ['COMMON', null, 4, 3, 1],
      ['TRACK', 'B', 2, 2, 0],
    ]);
    const later = new Date(Date.now() + 60_000).toISOString();
    expect((await api<{ matched: number }[]>('GET', `/api/tracking-plans/${plan.id}/stats?since=${encodeURIComponent(later)}`)).body.every((s) => s.matched === 0)).toBe(true);
  });

  it('GET /api/tracking-plans/stats: every plan with its figures in one read; a deleted plan is absent, never a 404', async () => {
    const t = await start({
      sources: [{ name: 'web', writeKey: 'wk_web', trackingPlan: { name: 'shop' } }],
      trackingPlans: [{ name: 'shop', rules: [rule('A', { n: { type: 'number' } }, ['n'])] }, { name: 'other', rules: [rule('B', {})] }],
    });
    await t.post('/v1/batch', { batch: [
      { type: 'track', userId: 'u', event: 'A', properties: { n: 1 } },
      { type: 'track', userId: 'u', event: 'A', properties: { n: 'x' } },
    ] }, { writeKey: 'wk_web' });
    // Blocked calls and unplanned events, per plan: what the plans screen's card shows.
    await api('PUT', `/api/sources/${(await api<Source[]>('GET', '/api/sources')).body[0]!.id}/tracking-plan`, { trackingPlan: { name: 'shop', unplannedEvents: 'block' } });
    await t.post('/v1/batch', { batch: [
      { type: 'track', userId: 'u', event: 'Z' },
      { type: 'track', userId: 'u', event: 'Z' },
      { type: 'track', userId: 'u', event: 'Y' },
    ] }, { writeKey: 'wk_web' });
    type Overview = { plans: TrackingPlan[]; stats: Record<string, { key: string | null; matched: number; failed: number }[]>; offPlan: Record<string, OffPlanStats> };
    const all = (await api<Overview>('GET', '/api/tracking-plans/stats')).body;
    expect(all.plans.map((p) => p.name)).toEqual(['other', 'shop']);
    for (const p of all.plans) expect(all.stats[p.id]).toEqual((await api('GET', `/api/tracking-plans/${p.id}/stats`)).body);
    const shop = all.plans.find((p) => p.name === 'shop')!;
    expect(all.stats[shop.id]!.map((s) => [s.key, s.matched, s.failed])).toEqual([['A', 2, 1]]);
    expect(all.offPlan[shop.id]).toEqual({ blocked: 3, unplannedEvents: [{ event: 'Z', calls: 2 }, { event: 'Y', calls: 1 }], more: 0 });
    expect(all.offPlan[all.plans.find((p) => p.name === 'other')!.id]).toEqual({ blocked: 0, unplannedEvents: [], more: 0 });
    // Past the ten shown: the commonest ten (ties by name), and how many others.
    await t.post('/v1/batch', { batch: Array.from({ length: 12 }, (_, i) => ({ type: 'track', userId: 'u', event: `E${String(i).padStart(2, '0')}` })) }, { writeKey: 'wk_web' });
    const more = (await api<Overview>('GET', '/api/tracking-plans/stats')).body.offPlan[shop.id]!;
    expect(more).toEqual({
      blocked: 15,
      unplannedEvents: [{ event: 'Z', calls: 2 }, ...['E00', 'E01', 'E02', 'E03', 'E04', 'E05', 'E06', 'E07', 'E08'].map((event) => ({ event, calls: 1 }))],
      more: 4,
    });
    const later = new Date(Date.now() + 60_000).toISOString();
    expect(Object.values((await api<Overview>('GET', `/api/tracking-plans/stats?since=${encodeURIComponent(later)}`)).body.stats).flat().every((s) => s.matched === 0)).toBe(true);
    expect((await api('GET', '/api/tracking-plans/stats?since=yesterday')).status).toBe(400);
    await api('DELETE', `/api/tracking-plans/${all.plans.find((p) => p.name === 'other')!.id}`);
    const after = (await api<Overview>('GET', '/api/tracking-plans/stats')).body;
    expect(after.plans.map((p) => p.name)).toEqual(['shop']);
    expect(Object.keys(after.stats)).toEqual([shop.id]);
  });
});
