import { describe, expect, it } from 'vitest';
import { waitFor, webhookSource, type TestEngine } from '../helpers/engine';
import { testLab } from '../helpers/test-lab';
import { forwardingText } from '../../src/shared/forwarding';
import type { CallDetail } from '../../src/shared/types';

// Issue 26: why a call was or was not forwarded is a field of the call detail (`forwarding`), judged
// by the engine; the inspector and Compose say it with one function (shared/forwarding.ts). Each
// reason over real sockets: calls posted to the collector, the detail read through the control API.
const lab = testLab();

async function newest(t: TestEngine, q: string): Promise<CallDetail> {
  const page = await waitFor(async () => {
    const p = await t.call('listMessages', { q, limit: 1 });
    return p.items.length ? p : null;
  }, `the call ${q}`);
  return t.call('getMessage', { id: page.items[0].id });
}

describe('forwarding: why a call was or was not forwarded', () => {
  it('forwarded; dropped; integrations; Webhooks off; no Actions mapping matched (with the mappings and their triggers)', async () => {
    const receiver = await lab.receiver();
    const hook = `${receiver.url}/hook`;
    const t = await lab.start({
      config: {
        sources: [
          webhookSource('classic', 'wk_classic', [hook]),
          { name: 'off', writeKey: 'wk_off', webhooks: { enabled: false, urls: [{ url: hook, headers: {} }] } },
          {
            name: 'actions',
            writeKey: 'wk_actions',
            webhooks: {
              enabled: true,
              mode: 'actions',
              urls: [],
              mappings: [
                { name: 'orders', trigger: { type: 'track', event: 'Order Completed' }, url: `${receiver.url}/orders`, method: 'POST', headers: {} },
                { name: 'signups', trigger: 'type = "identify"', url: `${receiver.url}/signups`, method: 'POST', headers: {} },
              ],
            },
          },
        ],
      },
    });

    expect((await t.post('/v1/track', { userId: 'u1', event: 'Sent' }, { writeKey: 'wk_classic' })).status).toBe(200);
    await receiver.waitForRequests(1);
    const sent = await newest(t, 'Sent');
    expect(sent.forwarding).toEqual({ forwarded: true });
    expect(forwardingText(sent.forwarding)).toBeNull();

    await t.post('/v1/track', { userId: 'u1', event: 'Told off', integrations: { All: false } }, { writeKey: 'wk_classic' });
    const integrations = await newest(t, 'Told off');
    expect(integrations.deliveries).toEqual([]);
    expect(integrations.forwarding).toEqual({ forwarded: false, reason: 'integrations' });
    expect(forwardingText(integrations.forwarding)).toContain("the call's integrations turned Webhooks off");

    await t.post('/v1/track', { userId: 'u1', event: 'Switched off' }, { writeKey: 'wk_off' });
    expect((await newest(t, 'Switched off')).forwarding).toEqual({ forwarded: false, reason: 'webhooks_off' });

    // Valid JSON, but no userId or anonymousId: stored dropped.
    await t.post('/v1/track', { event: 'Anonymous nobody' }, { writeKey: 'wk_classic' });
    const dropped = await newest(t, 'Anonymous nobody');
    expect(dropped.call.status).toBe('dropped');
    expect(dropped.forwarding).toEqual({ forwarded: false, reason: 'dropped' });
    expect(forwardingText(dropped.forwarding, dropped.call.dropReason)).toBe(`Dropped, not forwarded: ${dropped.call.dropReason}`);

    await t.post('/v1/track', { userId: 'u1', event: 'Page Viewed' }, { writeKey: 'wk_actions' });
    const unmatched = await newest(t, 'Page Viewed');
    expect(unmatched.forwarding).toEqual({
      forwarded: false,
      reason: 'no_mapping_matched',
      mappings: [
        { name: 'orders', trigger: 'type = "track" and event = "Order Completed"' },
        { name: 'signups', trigger: 'type = "identify"' },
      ],
    });
    expect(forwardingText(unmatched.forwarding)).toBe(
      'Not forwarded: no Actions mapping matched it. Not matching: orders (type = "track" and event = "Order Completed"); signups (type = "identify").',
    );

    // A call one mapping takes is forwarded.
    await t.post('/v1/track', { userId: 'u1', event: 'Order Completed' }, { writeKey: 'wk_actions' });
    await waitFor(() => receiver.requests.some((r) => r.url === '/orders') || null, 'the Actions request');
    expect((await newest(t, 'Order Completed')).forwarding).toEqual({ forwarded: true });
  });

  it('blocked by its source\'s tracking plan', async () => {
    const receiver = await lab.receiver();
    const t = await lab.start({
      config: {
        sources: [{ ...webhookSource('shop', 'wk_shop', [`${receiver.url}/hook`]), trackingPlan: { name: 'shop', unplannedEvents: 'block' } }],
        trackingPlans: [{ name: 'shop', rules: [] }],
      },
    });
    await t.post('/v1/track', { userId: 'u1', event: 'Unplanned' }, { writeKey: 'wk_shop' });
    const blocked = await newest(t, 'Unplanned');
    expect(blocked.call.status).toBe('blocked');
    expect(blocked.forwarding).toEqual({ forwarded: false, reason: 'blocked' });
    expect(forwardingText(blocked.forwarding, blocked.planCheck?.blocked)).toBe('Blocked by tracking plan, not forwarded: unplanned event "Unplanned"');
  });
});
