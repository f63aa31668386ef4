import { describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { waitFor, webhookSource } from '../helpers/engine';
import type { TestReceiver } from '../helpers/receiver';
import { testLab } from '../helpers/test-lab';

// Audience and computed-trait syncs end to end (SPEC §6): calls in through the collector, identify
// calls out through the chosen sources' Webhooks destinations to real receivers.
const SECRET = 'aud-s3cret';
const lab = testLab();

interface IdentifyBody {
  type: string;
  userId: string;
  traits: Record<string, unknown>;
  context: { personas: { computation_class: string; computation_key: string; computation_id: string } };
}
const bodies = (r: TestReceiver, from = 0) => r.requests.slice(from).map((q) => JSON.parse(q.body.toString()) as IdentifyBody);
/** userId → the trait value each received identify carried, for one key. */
const values = (r: TestReceiver, key: string, from = 0) => Object.fromEntries(bodies(r, from).filter((b) => b.type === 'identify').map((b) => [b.userId, b.traits[key]]));
const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000).toISOString();

/** Data comes in through `app` (no webhooks); syncs go out through `crm` and `ads`. */
async function setup() {
  const crm = await lab.receiver();
  const ads = await lab.receiver();
  const t = await lab.start({
    config: {
      sources: [{ name: 'app', writeKey: 'wk_app' }, webhookSource('crm', 'wk_crm', [`${crm.url}/crm`], SECRET), webhookSource('ads', 'wk_ads', [`${ads.url}/ads`])],
    },
  });
  const ids = Object.fromEntries((await t.call('listSources', {})).map((s) => [s.name, s.id]));
  const send = async (type: string, message: Record<string, unknown>) => {
    const res = await t.post(`/v1/${type}`, message, { writeKey: 'wk_app' });
    expect(res.status).toBe(200);
  };
  return { t, crm, ads, ids, send };
}

describe('audiences', () => {
  it('creation sends every member true; later syncs send only entries (true) and exits (false)', async () => {
    const { t, crm, ads, ids, send } = await setup();
    await send('identify', { userId: 'u1', traits: { plan: 'pro', seats: 5 } });
    await send('identify', { userId: 'u2', traits: { plan: 'free' } });
    await send('identify', { userId: 'u3', traits: { plan: 'pro' } });
    await send('identify', { anonymousId: 'anon-only', traits: { plan: 'pro' } });

    const rule = { combine: 'and' as const, conditions: [{ kind: 'trait' as const, trait: 'plan', op: 'eq' as const, value: 'pro' }] };
    const preview = await t.call('previewAudience', { rule });
    expect(preview).toEqual({ members: [{ userId: 'u1', value: true }, { userId: 'u3', value: true }], total: 2 });

    const a = await t.call('createAudience', { name: 'Pro Users', rule, sourceIds: [ids.crm, ids.ads] });
    expect(a).toMatchObject({ key: 'pro_users', type: 'audience', memberCount: 2, sync: { entered: 2, exited: 0, changed: 0, sent: 4 } });
    expect(a.lastSyncAt).not.toBeNull();
    await crm.waitForRequests(2);
    await ads.waitForRequests(2);
    for (const r of [crm, ads]) {
      expect(values(r, 'pro_users')).toEqual({ u1: true, u3: true });
      for (const b of bodies(r)) {
        expect(b.type).toBe('identify');
        expect(Object.keys(b.traits)).toEqual(['pro_users']);
        expect(b.context.personas).toEqual({ computation_class: 'audience', computation_key: 'pro_users', computation_id: a.id });
      }
    }
    // Signed with crm's secret like any delivery.
    for (const q of crm.requests) expect(q.headers['x-signature']).toBe(createHmac('sha1', SECRET).update(q.body).digest('hex'));
    const stored = await t.call('getMessage', { id: a.sync.callIds[0] });
    expect(stored.call).toMatchObject({ type: 'identify', status: 'accepted', request: { path: '/internal/audience' } });

    // u2 upgrades (enters), u3 downgrades (exits), u1 changes an unrelated trait (stays).
    await send('identify', { userId: 'u2', traits: { plan: 'pro' } });
    await send('identify', { userId: 'u3', traits: { plan: 'free' } });
    await send('identify', { userId: 'u1', traits: { seats: 9 } });
    const s = await t.call('syncAudience', { id: a.id });
    expect(s).toMatchObject({ entered: 1, exited: 1, changed: 0, sent: 4 });
    await crm.waitForRequests(4);
    await ads.waitForRequests(4);
    expect(values(crm, 'pro_users', 2)).toEqual({ u2: true, u3: false });
    expect(values(ads, 'pro_users', 2)).toEqual({ u2: true, u3: false });

    // Nothing changed: nothing sent.
    expect(await t.call('syncAudience', { id: a.id })).toMatchObject({ sent: 0, entered: 0, exited: 0, callIds: [] });
    const [listed] = await t.call('listAudiences', {});
    expect(listed).toMatchObject({ id: a.id, memberCount: 2, sourceIds: [ids.crm, ids.ads] });
    // The sync's own identify calls do not feed the profiles.
    expect((await t.call('previewAudience', { rule: { combine: 'and', conditions: [{ kind: 'trait', trait: 'pro_users', op: 'exists' }] } })).total).toBe(0);
    expect(t.events.some((e) => e.type === 'audiences.changed')).toBe(true);
    // A NEGATIVE check (no stray identify calls): nothing to wait on for a request never sent.
    await new Promise((r) => setTimeout(r, 200));
    expect([crm.requests.length, ads.requests.length]).toEqual([4, 4]);
  });

  it('members are listed in natural order: user_2 before user_10, in the preview and the stored list', async () => {
    const { t, send, ids } = await setup();
    for (const id of ['user_10', 'user_2', 'user_1', 'User_3', 'user_2b']) await send('identify', { userId: id, traits: { plan: 'pro' } });
    const rule = { combine: 'and' as const, conditions: [{ kind: 'trait' as const, trait: 'plan', op: 'eq' as const, value: 'pro' }] };
    const order = ['user_1', 'user_2', 'user_2b', 'User_3', 'user_10'];
    expect((await t.call('previewAudience', { rule })).members.map((m) => m.userId)).toEqual(order);
    const a = await t.call('createAudience', { name: 'Natural', rule, sourceIds: [ids.ads] });
    expect((await t.call('listAudienceMembers', { id: a.id })).members.map((m) => m.userId)).toEqual(order);
    expect(await t.call('listAudienceMembers', { id: a.id, limit: 2 })).toEqual({ members: [{ userId: 'user_1', value: true }, { userId: 'user_2', value: true }], total: 5 });
  });

  it('event counts within a time range, combined with or', async () => {
    const { t, crm, ids, send } = await setup();
    await send('track', { userId: 'old', event: 'Order Completed', timestamp: daysAgo(40) });
    await send('track', { userId: 'old', event: 'Order Completed', timestamp: daysAgo(45) });
    await send('track', { userId: 'recent', event: 'Order Completed', timestamp: daysAgo(2) });
    await send('track', { userId: 'recent', event: 'Order Completed' });
    await send('identify', { userId: 'vip', traits: { vip: true } });
    const a = await t.call('createAudience', {
      name: 'Frequent Buyers',
      sourceIds: [ids.crm],
      rule: {
        combine: 'or',
        conditions: [
          { kind: 'event', event: 'Order Completed', op: 'gte', count: 2, withinDays: 30 },
          { kind: 'trait', trait: 'vip', op: 'eq', value: true },
        ],
      },
    });
    expect(a.sync).toMatchObject({ entered: 2, sent: 2 });
    await crm.waitForRequests(2);
    expect(values(crm, 'frequent_buyers')).toEqual({ recent: true, vip: true });

    await send('track', { userId: 'old', event: 'Order Completed' });
    await send('track', { userId: 'old', event: 'Order Completed' });
    expect(await t.call('syncAudience', { id: a.id })).toMatchObject({ entered: 1, exited: 0, sent: 1 });
    await crm.waitForRequests(3);
    expect(values(crm, 'frequent_buyers', 2)).toEqual({ old: true });
  });

  it('computed traits send their values, then changed values, and null when the value is gone', async () => {
    const { t, crm, ads, ids, send } = await setup();
    await send('track', { userId: 'a', event: 'Order Completed', properties: { total: 10 } });
    await send('track', { userId: 'a', event: 'Order Completed', properties: { total: 25.5 } });
    await send('track', { userId: 'b', event: 'Order Completed', properties: { total: 7 } });
    await send('track', { userId: 'c', event: 'Viewed' });

    const count = await t.call('createAudience', { name: 'Orders (30d)', type: 'computed_trait', compute: { kind: 'event_count', event: 'Order Completed', withinDays: 30 }, sourceIds: [ids.crm] });
    const last = await t.call('createAudience', { name: 'lastOrderTotal', type: 'computed_trait', compute: { kind: 'last_property', event: 'Order Completed', property: 'total' }, sourceIds: [ids.ads] });
    expect(count).toMatchObject({ key: 'orders_30d', memberCount: 2, sync: { entered: 2 } });
    expect(last).toMatchObject({ key: 'last_order_total', memberCount: 2 });
    await crm.waitForRequests(2);
    await ads.waitForRequests(2);
    expect(values(crm, 'orders_30d')).toEqual({ a: 2, b: 1 });
    expect(values(ads, 'last_order_total')).toEqual({ a: 25.5, b: 7 });
    expect(bodies(crm)[0].context.personas).toEqual({ computation_class: 'trait', computation_key: 'orders_30d', computation_id: count.id });

    // b orders again (changed), c orders for the first time (entered), a is deleted and purged (gone).
    await send('track', { userId: 'b', event: 'Order Completed', properties: { total: 99 } });
    await send('track', { userId: 'c', event: 'Order Completed', properties: { total: 1 } });
    // crm and ads received identify calls about a, so each also gets a delete notice.
    const del = await t.call('createDeletion', { userId: 'a', purge: true });
    expect(del.notifications.map((n) => n.sourceName).sort()).toEqual(['ads', 'crm']);
    expect(await t.call('syncAudience', { id: count.id })).toMatchObject({ entered: 1, changed: 1, exited: 1, sent: 3 });
    expect(await t.call('syncAudience', { id: last.id })).toMatchObject({ entered: 1, changed: 1, exited: 1, sent: 3 });
    await crm.waitForRequests(6);
    await ads.waitForRequests(6);
    expect(bodies(crm, 2).filter((b) => b.type === 'delete').map((b) => b.userId)).toEqual(['a']);
    expect(values(crm, 'orders_30d', 2)).toEqual({ a: null, b: 2, c: 1 });
    expect(values(ads, 'last_order_total', 2)).toEqual({ a: null, b: 99, c: 1 });
    expect((await t.call('listAudiences', {})).map((x) => x.memberCount)).toEqual([2, 2]);
  });

  it('syncs on its interval without being asked', async () => {
    const { t, crm, ids, send } = await setup();
    await send('identify', { userId: 'first', traits: { beta: true } });
    const rule = { combine: 'and' as const, conditions: [{ kind: 'trait' as const, trait: 'beta', op: 'eq' as const, value: true }] };
    const a = await t.call('createAudience', { name: 'Beta Testers', rule, sourceIds: [ids.crm], syncIntervalMs: 1000 });
    await crm.waitForRequests(1);
    await send('identify', { userId: 'second', traits: { beta: true } });
    await send('identify', { userId: 'first', traits: { beta: false } });
    await crm.waitForRequests(3, 5000);
    expect(values(crm, 'beta_testers', 1)).toEqual({ second: true, first: false });
    const [listed] = await t.call('listAudiences', {});
    expect(listed).toMatchObject({ id: a.id, syncIntervalMs: 1000, memberCount: 1 });
    expect(Date.parse(listed.lastSyncAt!)).toBeGreaterThan(Date.parse(a.lastSyncAt!));
    // Once caught up, later ticks send nothing more. A NEGATIVE check, made after a later tick has
    // run (not after a guess at when one would), plus a moment for anything it sent to arrive.
    await waitFor(async () => (await t.call('listAudiences', {}))[0].lastSyncAt !== listed.lastSyncAt, 'a later tick');
    await new Promise((r) => setTimeout(r, 200));
    expect(crm.requests.length).toBe(3);
  });

  it('refuses unknown sources (404 naming the entry), duplicate names and keys; deletes', async () => {
    const { t, ids, crm } = await setup();
    const rule = { combine: 'and' as const, conditions: [{ kind: 'trait' as const, trait: 'x', op: 'exists' as const }] };
    await expect(t.call('createAudience', { name: 'X', rule, sourceIds: [ids.crm, 'nope'] })).rejects.toMatchObject({
      status: 404,
      message: expect.stringContaining('sourceIds[1]'),
      fields: [{ path: 'sourceIds[1]', message: 'no source with id "nope"' }],
    });
    expect(await t.call('listAudiences', {})).toEqual([]);
    const a = await t.call('createAudience', { name: 'High Value', rule, sourceIds: [ids.crm] });
    expect(a.sync).toMatchObject({ sent: 0, entered: 0 });
    await expect(t.call('createAudience', { name: 'High Value', rule, sourceIds: [ids.crm] })).rejects.toMatchObject({ status: 409 });
    await expect(t.call('createAudience', { name: 'high-value', rule, sourceIds: [ids.crm] })).rejects.toMatchObject({ status: 409, message: expect.stringContaining('high_value') });
    await expect(t.call('createAudience', { name: 'Y', type: 'computed_trait', rule, sourceIds: [ids.crm] })).rejects.toMatchObject({ status: 400 });
    expect(await t.call('deleteAudience', { id: a.id })).toEqual({ ok: true });
    await expect(t.call('deleteAudience', { id: a.id })).rejects.toMatchObject({ status: 404 });
    await expect(t.call('syncAudience', { id: a.id })).rejects.toMatchObject({ status: 404 });
    expect(crm.requests.length).toBe(0);
  });

  it('config audiences are applied by name: created and synced once, updated when changed, unknown sources named', async () => {
    const { t, crm, send } = await setup();
    await send('identify', { userId: 'u1', traits: { plan: 'pro' } });
    const sources = (await t.call('getConfig', {})).sources;
    const entry = { name: 'Pro', rule: { combine: 'and', conditions: [{ kind: 'trait', trait: 'plan', op: 'eq', value: 'pro' }] }, sources: ['crm'] };
    await t.call('importConfig', { sources, audiences: [entry] });
    await t.call('importConfig', { sources, audiences: [entry] });
    await crm.waitForRequests(1);
    const [a] = await t.call('listAudiences', {});
    expect(a).toMatchObject({ name: 'Pro', key: 'pro', memberCount: 1 });

    await t.call('importConfig', { sources, audiences: [{ ...entry, syncIntervalMs: 60_000 }] });
    expect((await t.call('listAudiences', {}))[0]).toMatchObject({ id: a.id, syncIntervalMs: 60_000 });

    await expect(t.call('importConfig', { sources, audiences: [entry, { ...entry, name: 'Other', sources: ['crm', 'missing'] }] })).rejects.toMatchObject({
      status: 400,
      fields: [{ path: 'audiences[1].sources[1]', message: 'no source named "missing"' }],
    });
    expect((await t.call('listAudiences', {})).length).toBe(1);
    // A NEGATIVE check (the refused import synced nothing): nothing to wait on for a request never sent.
    await new Promise((r) => setTimeout(r, 200));
    expect(crm.requests.length).toBe(1);
  });

  it('a config file\'s audiences are created at start; after a restart nothing is re-sent and the interval resumes', async () => {
    const crm = await lab.receiver();
    const dataDir = lab.dataDir();
    const rule = { combine: 'and', conditions: [{ kind: 'trait', trait: 'plan', op: 'eq', value: 'pro' }] };
    const config = {
      sources: [{ name: 'app', writeKey: 'wk_app' }, webhookSource('crm', 'wk_crm', [`${crm.url}/crm`])],
      audiences: [{ name: 'Pro', rule, sources: ['crm'], syncIntervalMs: 1000 }],
    };
    const first = await lab.start({ config, dataDir });
    await first.post('/v1/identify', { userId: 'u1', traits: { plan: 'pro' } }, { writeKey: 'wk_app' });
    await crm.waitForRequests(1, 5000); // the first interval sync picks u1 up

    const t = await lab.start({ config, dataDir }); // stops the first, as a restart
    const [a] = await t.call('listAudiences', {});
    expect(a).toMatchObject({ name: 'Pro', memberCount: 1, syncIntervalMs: 1000 });
    await t.post('/v1/identify', { userId: 'u2', traits: { plan: 'pro' } }, { writeKey: 'wk_app' });
    await crm.waitForRequests(2, 5000);
    expect(values(crm, 'pro')).toEqual({ u1: true, u2: true });
    // A NEGATIVE check (nothing is re-sent), made after a later tick has run, plus a moment for
    // anything it sent to arrive.
    const synced = (await t.call('listAudiences', {}))[0].lastSyncAt;
    await waitFor(async () => (await t.call('listAudiences', {}))[0].lastSyncAt !== synced, 'a later tick');
    await new Promise((r) => setTimeout(r, 200));
    expect(crm.requests.length).toBe(2);
  });
});
