import { describe, expect, it } from 'vitest';
import { signBody } from '../../src/main/engine/dispatcher/sign';
import { waitFor } from '../helpers/engine';
import { testLab } from '../helpers/test-lab';
import { sentBody } from '../../src/shared/attempt-body';

// The first-run demo (issue 14): one operation from an empty lab to a delivered, signed call the
// mock receiver verified; idempotent; removable without touching anything the user made.
const lab = testLab();

describe('demo', () => {
  it('creates one source and one receiver with a secret, and a call delivered signed that verifies at the receiver', async () => {
    const t = await lab.start();
    expect(await t.call('getDemo', {})).toBeNull();
    const demo = await t.call('createDemo', {});
    expect(demo.created).toBe(true);
    expect(await t.call('listSources', {})).toHaveLength(1);
    const receivers = await t.call('listReceivers', {});
    expect(receivers).toHaveLength(1);
    const [source, receiver] = [demo.source!, receivers[0]];
    expect(receiver.id).toBe(demo.receiver!.id);
    expect(receiver.secret).toMatch(/^whsec_demo_/);
    expect(source.webhooks).toMatchObject({ enabled: true, sharedSecret: receiver.secret, urls: [{ url: receiver.url }] });
    expect(demo.callIds).toHaveLength(1);

    const detail = await waitFor(async () => {
      const d = await t.call('getMessage', { id: demo.callIds[0] });
      return d.deliveries[0]?.state === 'delivered' ? d : null;
    }, 'the demo call delivered');
    const attempt = detail.deliveries[0].attempts[0];
    expect(attempt.responseStatus).toBe(200);
    expect(attempt.signature).toBe(signBody(receiver.secret!, Buffer.from(sentBody(detail.deliveries[0], attempt))));
    const requests = await waitFor(async () => {
      const r = await t.call('listReceiverRequests', { id: receiver.id });
      return r.length > 0 ? r : null;
    }, 'the receiver to record it');
    expect(requests).toHaveLength(1);
    expect(requests[0].signature.state).toBe('valid');
    expect(requests[0].signature.received).toBe(signBody(receiver.secret!, Buffer.from(sentBody(detail.deliveries[0], attempt))));
  });

  it('a second create returns the same demo; remove deletes only what the demo created', async () => {
    const t = await lab.start();
    const mine = await t.call('createSource', { name: 'Demo source' }); // the user's, with the demo's name
    const myReceiver = await t.call('createReceiver', { name: 'mine', path: '/demo' });
    const myCall = await t.post('/v1/track', { userId: 'u1', event: 'Mine' }, { writeKey: mine.writeKey });
    expect(myCall.status).toBe(200);

    const [a, b] = await Promise.all([t.call('createDemo', {}), t.call('createDemo', {})]);
    expect([a.created, b.created].sort()).toEqual([false, true]);
    expect(b.source!.id).toBe(a.source!.id);
    expect(b.receiver!.id).toBe(a.receiver!.id);
    expect(b.callIds).toEqual(a.callIds);
    expect(a.source!.name).toBe('Demo source 2');
    expect(a.receiver!.path).toBe('/demo-2');
    expect(await t.call('listSources', {})).toHaveLength(2);
    expect(await t.call('listReceivers', {})).toHaveLength(2);
    expect((await t.call('getDemo', {}))?.callIds).toEqual(a.callIds);
    const before = await t.call('listMessages', {});
    expect(before.items).toHaveLength(2);

    expect(await t.call('removeDemo', {})).toEqual({ sourceRemoved: true, receiverRemoved: true, callsRemoved: 1 });
    expect((await t.call('listSources', {})).map((s) => s.id)).toEqual([mine.id]);
    expect((await t.call('listReceivers', {})).map((r) => r.id)).toEqual([myReceiver.id]);
    const after = await t.call('listMessages', {});
    expect(after.items.map((c) => c.sourceId)).toEqual([mine.id]);
    expect(await t.call('getDemo', {})).toBeNull();
    // Nothing left to remove is not an error.
    expect(await t.call('removeDemo', {})).toEqual({ sourceRemoved: false, receiverRemoved: false, callsRemoved: 0 });
  });

  it('a demo whose receiver was deleted by hand is made again on create', async () => {
    const t = await lab.start();
    const first = await t.call('createDemo', {});
    await t.call('deleteReceiver', { id: first.receiver!.id, detach: true });
    expect(await t.call('getDemo', {})).toMatchObject({ receiver: null, source: { id: first.source!.id } });
    const again = await t.call('createDemo', {});
    expect(again.created).toBe(true);
    expect(again.source!.id).not.toBe(first.source!.id);
    expect((await t.call('listSources', {})).map((s) => s.id)).toEqual([again.source!.id]);
    expect(await t.call('listReceivers', {})).toHaveLength(1);
  });
});
