import { describe, expect, it } from 'vitest';
import { webhookSource } from '../helpers/engine';
import type { TestReceiver } from '../helpers/receiver';
import { testLab } from '../helpers/test-lab';

// Editing an audience (issue 14): the edit re-syncs at once and, as SPEC §6 says of every sync after
// creation, only users whose membership (or value) changed get an identify call.
const lab = testLab();

const plan = (value: string) => ({ combine: 'and' as const, conditions: [{ kind: 'trait' as const, trait: 'plan', op: 'eq' as const, value }] });

async function setup() {
  const receiver = await lab.receiver();
  const t = await lab.start({ config: { sources: [{ name: 'app', writeKey: 'wk_app' }, webhookSource('crm', 'wk_crm', [`${receiver.url}/crm`])] } });
  const ids = Object.fromEntries((await t.call('listSources', {})).map((s) => [s.name, s.id]));
  for (const [userId, p] of [['u1', 'pro'], ['u2', 'pro'], ['u3', 'free'], ['u4', 'team']]) {
    expect((await t.post('/v1/identify', { userId, traits: { plan: p } }, { writeKey: 'wk_app' })).status).toBe(200);
  }
  return { t, r: receiver, ids };
}

const identifies = (r: TestReceiver, from: number) =>
  Object.fromEntries(r.requests.slice(from).map((q) => JSON.parse(q.body.toString()) as { userId: string; traits: Record<string, unknown> }).map((b) => [b.userId, b.traits]));

describe('audience edit', () => {
  it('a new rule sends identify calls only to users whose membership changed, and the members list follows', async () => {
    const { t, r, ids } = await setup();
    const a = await t.call('createAudience', { name: 'Paying', rule: plan('pro'), sourceIds: [ids.crm] });
    await r.waitForRequests(2);
    expect(await t.call('listAudienceMembers', { id: a.id })).toEqual({ members: [{ userId: 'u1', value: true }, { userId: 'u2', value: true }], total: 2 });

    // pro or team: u4 enters; u1, u2 stay (no call); u3 stays out (no call).
    const edited = await t.call('updateAudience', { id: a.id, rule: { combine: 'or', conditions: [...plan('pro').conditions, ...plan('team').conditions] } });
    expect(edited).toMatchObject({ id: a.id, key: 'paying', memberCount: 3, sync: { entered: 1, exited: 0, changed: 0, sent: 1 } });
    expect(edited.rule?.combine).toBe('or');
    await r.waitForRequests(3);
    expect(identifies(r, 2)).toEqual({ u4: { paying: true } });
    expect((await t.call('listAudienceMembers', { id: a.id })).members.map((m) => m.userId)).toEqual(['u1', 'u2', 'u4']);

    // team only: u1 and u2 exit, u4 stays.
    const narrowed = await t.call('updateAudience', { id: a.id, rule: plan('team') });
    expect(narrowed.sync).toMatchObject({ entered: 0, exited: 2, sent: 2 });
    await r.waitForRequests(5);
    expect(identifies(r, 3)).toEqual({ u1: { paying: false }, u2: { paying: false } });
    expect(await t.call('listAudienceMembers', { id: a.id })).toEqual({ members: [{ userId: 'u4', value: true }], total: 1 });

    // An edit that changes no membership sends nothing.
    const same = await t.call('updateAudience', { id: a.id, syncIntervalMs: 60_000 });
    expect(same).toMatchObject({ syncIntervalMs: 60_000, sync: { sent: 0, entered: 0, exited: 0, changed: 0 } });
    expect((await t.call('updateAudience', { id: a.id, syncIntervalMs: null })).syncIntervalMs).toBeNull();
    expect(r.requests).toHaveLength(5);
  });

  it('a rename keeps the trait key; names stay unique; unknown ids and sources are refused', async () => {
    const { t, ids } = await setup();
    const a = await t.call('createAudience', { name: 'Paying', rule: plan('pro'), sourceIds: [ids.crm] });
    await t.call('createAudience', { name: 'Free', rule: plan('free'), sourceIds: [ids.crm] });
    const renamed = await t.call('updateAudience', { id: a.id, name: 'Paying customers' });
    expect(renamed).toMatchObject({ name: 'Paying customers', key: 'paying', sync: { sent: 0 } });
    await expect(t.call('updateAudience', { id: a.id, name: 'Free' })).rejects.toMatchObject({ status: 409 });
    await expect(t.call('updateAudience', { id: 'nope', name: 'x' })).rejects.toMatchObject({ status: 404 });
    await expect(t.call('updateAudience', { id: a.id, sourceIds: ['nope'] })).rejects.toMatchObject({ status: 404 });
    await expect(t.call('listAudienceMembers', { id: 'nope' })).rejects.toMatchObject({ status: 404 });
    await expect(t.call('updateAudience', { id: a.id, type: 'computed_trait' })).rejects.toMatchObject({ fields: [{ path: 'compute' }] });
    expect((await t.call('listAudiences', {})).find((x) => x.id === a.id)?.name).toBe('Paying customers');
  });
});
