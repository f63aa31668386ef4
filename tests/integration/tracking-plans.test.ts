import { describe, expect, it } from 'vitest';
import { testLab } from '../helpers/test-lab';
import { waitFor, webhookSource, type TestEngine } from '../helpers/engine';
import type { TrackingPlanRule } from '../../src/shared/tracking-plan.schema';
import { openDbFile } from '../helpers/db-file';

/** One number read from the lab's SQLite file (read-only, beside the running engine). */
function sqlite(dataDir: string, sql: string): number {
  const db = openDbFile(dataDir);
  try {
    return db.prepare(sql).pluck().get() as number;
  } finally {
    db.close();
  }
}

// Tracking plans (issue 24), end to end in the engine: calls sent over real sockets to the collector,
// checked at ingest against the source's plan, stored in a real SQLite file with what was found;
// enforcement (block, omit) changes what the receiver gets.

const lab = testLab();

const ORDER_COMPLETED: TrackingPlanRule = {
  type: 'TRACK',
  key: 'Order Completed',
  version: 1,
  jsonSchema: {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: {
      properties: {
        type: 'object',
        properties: { total: { type: 'number' }, currency: { type: 'string', pattern: '^[A-Z]{3}$' } },
        required: ['total'],
      },
    },
    required: ['properties'],
  },
};

async function labWithPlan(trackingPlan: Record<string, unknown>): Promise<{ t: TestEngine }> {
  const receiver = await lab.receiver();
  const t = await lab.start({
    config: {
      sources: [{ ...webhookSource('shop-web', 'wk_shop', [receiver.url + '/hook']), trackingPlan: { name: 'shop', ...trackingPlan } }],
      trackingPlans: [{ name: 'shop', rules: [ORDER_COMPLETED] }],
    },
  });
  return { t };
}

async function newestCall(t: TestEngine, event: string) {
  const page = await t.call('listMessages', { q: event, limit: 1 });
  const summary = page.items[0];
  if (!summary) throw new Error(`no call ${event}`);
  return t.call('getMessage', { id: summary.id });
}

describe('checking at ingest', () => {
  it('a call breaking its rule is stored with its violations (kind, JSON pointer, message, value, rule), and still forwarded when violations are allowed', async () => {
    const { t } = await labWithPlan({});
    const r = await t.post('/v1/track', { userId: 'u1', event: 'Order Completed', properties: { total: '42', currency: 'euro' } }, { writeKey: 'wk_shop' });
    expect(r.status).toBe(200);
    const detail = await newestCall(t, 'Order Completed');
    expect(detail.call.status).toBe('accepted');
    expect(detail.violations).toEqual([
      { kind: 'wrong_type', path: '/properties/total', message: 'The value at /properties/total must be a number but it was a string.', value: '42', rule: { type: 'TRACK', key: 'Order Completed', version: 1 } },
      {
        kind: 'schema',
        path: '/properties/currency',
        message: 'The value at /properties/currency is an invalid string: it must match the pattern ^[A-Z]{3}$.',
        value: 'euro',
        rule: { type: 'TRACK', key: 'Order Completed', version: 1 },
      },
    ]);
    expect(detail.planCheck).toMatchObject({ planName: 'shop', blocked: null, omitted: [] });
    await waitFor(async () => (await t.call('getMessage', { id: detail.call.id })).deliveries[0]?.state === 'delivered', 'the call delivered');
  });

  it('a clean call has violations [] and a call of a source without a plan has null', async () => {
    const { t } = await labWithPlan({});
    await t.call('createSource', { name: 'other', writeKey: 'wk_other' });
    await t.post('/v1/track', { userId: 'u1', event: 'Order Completed', properties: { total: 42, currency: 'EUR' } }, { writeKey: 'wk_shop' });
    await t.post('/v1/track', { userId: 'u1', event: 'Other Event' }, { writeKey: 'wk_other' });
    expect((await newestCall(t, 'Order Completed')).violations).toEqual([]);
    const other = await newestCall(t, 'Other Event');
    expect(other.violations).toBeNull();
    expect(other.planCheck).toBeNull();
  });

  it('a missing required property, and an unplanned event, are named', async () => {
    const { t } = await labWithPlan({});
    await t.post('/v1/batch', { batch: [
      { type: 'track', userId: 'u1', event: 'Order Completed', properties: {} },
      { type: 'track', userId: 'u1', event: 'Checkout Stared' },
    ] }, { writeKey: 'wk_shop' });
    const missing = await newestCall(t, 'Order Completed');
    expect(missing.violations).toEqual([
      { kind: 'required_missing', path: '/properties/total', message: "The value at /properties is missing the required field 'total'.", rule: { type: 'TRACK', key: 'Order Completed', version: 1 } },
    ]);
    const unplanned = await newestCall(t, 'Checkout Stared');
    expect(unplanned.violations).toEqual([{ kind: 'unplanned_event', path: '/event', message: 'Event "Checkout Stared" is not in the tracking plan "shop".', value: 'Checkout Stared', rule: null }]);
    expect(unplanned.call.status).toBe('accepted');
  });
});

describe('hostile patterns', () => {
  it('a pattern that backtracks exponentially in JavaScript, against a 30 KB property, is answered and judged, and the collector stays free', async () => {
    const rule: TrackingPlanRule = { type: 'TRACK', key: 'Evil', version: 1, jsonSchema: { type: 'object', properties: { properties: { type: 'object', properties: { s: { type: 'string', pattern: '^(a|aa)+$' } } } } } };
    const t = await lab.start({ config: { sources: [{ name: 'shop', writeKey: 'wk_shop', trackingPlan: { name: 'shop' } }], trackingPlans: [{ name: 'shop', rules: [rule] }] } });
    const evil = 'a'.repeat(30_000) + '!';
    const r = await t.post('/v1/track', { userId: 'u1', event: 'Evil', properties: { s: evil } }, { writeKey: 'wk_shop' });
    expect(r.status).toBe(200);
    expect((await t.post('/v1/track', { userId: 'u1', event: 'Evil', properties: { s: 'aaaa' } }, { writeKey: 'wk_shop' })).status).toBe(200);
    const page = await t.call('listMessages', { q: 'Evil', limit: 2 });
    const [clean, bad] = await Promise.all(page.items.map((c) => t.call('getMessage', { id: c.id })));
    expect(clean.violations).toEqual([]);
    expect(bad.violations?.map((v) => [v.kind, v.path])).toEqual([['schema', '/properties/s']]);
  });
});

describe('enforcement', () => {
  it('unplannedEvents: block stores the call as blocked with the reason and never forwards it; planned calls go on', async () => {
    const receiver = await lab.receiver();
    const t = await lab.start({
      config: {
        sources: [{ ...webhookSource('shop-web', 'wk_shop', [receiver.url + '/hook']), trackingPlan: { name: 'shop', unplannedEvents: 'block' } }],
        trackingPlans: [{ name: 'shop', rules: [ORDER_COMPLETED] }],
      },
    });
    expect((await t.post('/v1/track', { userId: 'u1', event: 'Checkout Stared' }, { writeKey: 'wk_shop' })).status).toBe(200);
    await t.post('/v1/track', { userId: 'u1', event: 'Order Completed', properties: { total: 1 } }, { writeKey: 'wk_shop' });
    const [hook] = await receiver.waitForRequests(1);
    expect(JSON.parse(hook!.body.toString()).event).toBe('Order Completed');
    const blocked = await newestCall(t, 'Checkout Stared');
    expect(blocked.call.status).toBe('blocked');
    expect(blocked.call.dropReason).toBe('blocked by tracking plan: unplanned event "Checkout Stared"');
    expect(blocked.deliveries).toEqual([]);
    expect(blocked.planCheck?.blocked).toBe('unplanned event "Checkout Stared"');
    const summary = (await t.call('listMessages', { q: 'Checkout Stared' })).items[0];
    expect(summary?.status).toBe('blocked');
    // Not by a replay either: the plan decided.
    await expect(t.call('replayMessage', { id: blocked.call.id })).rejects.toMatchObject({ status: 409, message: `message ${blocked.call.id} was blocked by tracking plan: unplanned event "Checkout Stared"; it is not sent` });
    expect(receiver.requests).toHaveLength(1);
  });

  it('violations: block stops a call that breaks its rule, with the first violation as the reason', async () => {
    const { t } = await labWithPlan({ violations: 'block' });
    await t.post('/v1/track', { userId: 'u1', event: 'Order Completed', properties: { total: 'x' } }, { writeKey: 'wk_shop' });
    const d = await newestCall(t, 'Order Completed');
    expect(d.call.status).toBe('blocked');
    expect(d.call.dropReason).toBe('blocked by tracking plan: The value at /properties/total must be a number but it was a string.');
    expect(d.deliveries).toEqual([]);
  });

  it('unplannedProperties: omit removes them from the forwarded body; the stored call keeps what arrived', async () => {
    const receiver = await lab.receiver();
    const t = await lab.start({
      config: {
        sources: [{ ...webhookSource('shop-web', 'wk_shop', [receiver.url + '/hook']), trackingPlan: { name: 'shop', unplannedProperties: 'omit' } }],
        trackingPlans: [{ name: 'shop', rules: [ORDER_COMPLETED] }],
      },
    });
    await t.post('/v1/track', { userId: 'u1', event: 'Order Completed', properties: { total: 3, coupon: 'SPRING', 'a/b': 1 } }, { writeKey: 'wk_shop' });
    const [hook] = await receiver.waitForRequests(1);
    expect(JSON.parse(hook!.body.toString()).properties).toEqual({ total: 3 });
    const d = await newestCall(t, 'Order Completed');
    expect(d.call.raw).toMatchObject({ properties: { total: 3, coupon: 'SPRING', 'a/b': 1 } });
    expect(d.planCheck?.omitted).toEqual(['/properties/coupon', '/properties/a~1b']);
    expect(d.violations?.map((v) => [v.kind, v.path])).toEqual([
      ['unplanned_property', '/properties/coupon'],
      ['unplanned_property', '/properties/a~1b'],
    ]);
    expect(d.call.status).toBe('accepted');
  });
});

describe('in lists, filters and counts', () => {
  it('summaries carry the violation count (null without a plan), in the list and in calls.stored; ?violations=true and status=blocked filter; stats count blocked apart', async () => {
    const { t } = await labWithPlan({ unplannedEvents: 'block' });
    await t.call('createSource', { name: 'other', writeKey: 'wk_other' });
    await t.post('/v1/batch', { batch: [
      { type: 'track', userId: 'u1', event: 'Order Completed', properties: { total: 'x', currency: 'no' } },
      { type: 'track', userId: 'u1', event: 'Order Completed', properties: { total: 1 } },
      { type: 'track', userId: 'u1', event: 'Unplanned' },
    ] }, { writeKey: 'wk_shop' });
    await t.post('/v1/track', { userId: 'u1', event: 'Elsewhere' }, { writeKey: 'wk_other' });
    const all = (await t.call('listMessages', {})).items;
    expect(all.map((c) => [c.label, c.status, c.violations])).toEqual([
      ['Elsewhere', 'accepted', null],
      ['Unplanned', 'blocked', 1],
      ['Order Completed', 'accepted', 0],
      ['Order Completed', 'accepted', 2],
    ]);
    // Events are gathered for up to 100 ms: wait for the four.
    const storedEvents = () => t.events.flatMap((e) => (e.type === 'calls.stored' ? e.calls : []));
    const stored = await waitFor(() => (storedEvents().length >= 4 ? storedEvents() : null), 'four calls.stored');
    expect(stored.map((c) => [c.label, c.violations])).toEqual([
      ['Order Completed', 2],
      ['Order Completed', 0],
      ['Unplanned', 1],
      ['Elsewhere', null],
    ]);
    expect((await t.call('listMessages', { violations: true })).items.map((c) => c.violations)).toEqual([1, 2]);
    expect((await t.call('listMessages', { status: 'blocked' })).items.map((c) => c.label)).toEqual(['Unplanned']);
    expect((await t.call('listMessages', { status: 'not_forwarded' })).items.map((c) => c.label)).toEqual(['Elsewhere']);
    const stats = await t.call('getStats', {});
    expect(stats).toMatchObject({ calls: 4, dropped: 0, blocked: 1, notForwarded: 1 });
  });
});

describe('what is stored', () => {
  it('a clean call has no row of its own (one per checked request); deleting calls takes their violations and checks with them', async () => {
    const { t } = await labWithPlan({});
    await t.post('/v1/batch', { batch: [
      { type: 'track', userId: 'u1', event: 'Order Completed', properties: { total: 1 } },
      { type: 'track', userId: 'u1', event: 'Order Completed', properties: { total: 2 } },
      { type: 'track', userId: 'u1', event: 'Nope' },
      { type: 'track', event: 'Dropped: no user' },
    ] }, { writeKey: 'wk_shop' });
    expect((await t.call('listMessages', {})).items.map((c) => [c.label, c.status, c.violations])).toEqual([
      ['Dropped: no user', 'dropped', null],
      ['Nope', 'accepted', 1],
      ['Order Completed', 'accepted', 0],
      ['Order Completed', 'accepted', 0],
    ]);
    expect(await t.call('getViolations', {})).toMatchObject({ checked: 3, withViolations: 1, blocked: 0 });
    const rows = (sql: string) => sqlite(t.dataDir, sql);
    expect(rows('SELECT COUNT(*) FROM call_violations')).toBe(1);
    expect(rows('SELECT COUNT(*) FROM checked_requests')).toBe(1);
    await t.call('clearCalls', {});
    expect(await t.call('getViolations', {})).toMatchObject({ checked: 0, withViolations: 0, blocked: 0, items: [] });
    expect(rows('SELECT COUNT(*) FROM call_violations') + rows('SELECT COUNT(*) FROM checked_requests')).toBe(0);
  });
});
