import { describe, expect, it } from 'vitest';
import { waitFor, type TestEngine } from '../helpers/engine';
import { testLab } from '../helpers/test-lab';
import { sentBody } from '../../src/shared/attempt-body';

// Mock receivers through the engine's operations: one click to use one, what it saw vs what was sent.
const lab = testLab();

const FAST = { retrySchedule: { preset: 'custom', delaysMs: [100], jitter: 0, windowMs: 60_000 } };

async function lastDetail(e: TestEngine, state: string) {
  return waitFor(async () => {
    const c = (await e.call('listMessages', { limit: 1 })).items[0];
    return c?.deliveryState === state ? e.call('getMessage', { id: c.id }) : undefined;
  }, state).catch(async (err) => {
    const c = (await e.call('listMessages', { limit: 1 })).items[0];
    throw new Error(`${(err as Error).message}; last: ${JSON.stringify(c && (await e.call('getMessage', { id: c.id })).deliveries[0]?.attempts.map((a) => a.errorCode))}`);
  });
}

describe('mock receivers via the API', () => {
  it('failFirst 2 → two 500s then 200, every request recorded with a valid signature', async () => {
    const t = await lab.start({ config: { sources: [{ name: 'app', writeKey: 'wk' }], settings: FAST } });
    const r = await t.call('createReceiver', { name: 'flaky', path: '/flaky', secret: 'mock-secret', behavior: { failFirst: 2, status: 500 } });
    expect(r.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/flaky$/);
    const source = (await t.call('listSources', {}))[0];
    const attached = await t.call('attachReceiver', { id: r.id, sourceId: source.id });
    // One click: URL added, Webhooks enabled, the receiver's secret given to a source that had none.
    expect(attached.webhooks).toMatchObject({ enabled: true, sharedSecret: 'mock-secret', urls: [{ url: r.url }] });
    await t.post('/v1/track', { userId: 'u', event: 'Flaky' }, { writeKey: 'wk' });
    const d = await lastDetail(t, 'delivered');
    expect(d.deliveries[0].attempts.map((a) => a.responseStatus)).toEqual([500, 500, 200]);
    const requests = await waitFor(async () => {
      const list = await t.call('listReceiverRequests', { id: r.id });
      return list.length === 3 ? list : undefined;
    }, 'three recorded requests');
    expect(requests.map((q) => q.response.status).reverse()).toEqual([500, 500, 200]);
    expect(requests.every((q) => q.signature.state === 'valid')).toBe(true);
    // What the receiver got is byte for byte what the dispatcher recorded.
    expect(requests[0].body).toBe(sentBody(d.deliveries[0], d.deliveries[0].attempts[2]));
    expect((await t.call('listReceivers', {}))[0].requestCount).toBe(3);
  });

  it('attaching a receiver with a Standard Webhooks secret gives it to a source that has none, so its check (and enforceSignature) passes', async () => {
    const t = await lab.start({ config: { sources: [{ name: 'app', writeKey: 'wk' }], settings: FAST } });
    const key = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const r = await t.call('createReceiver', { name: 'sw', path: '/sw', standardWebhooksSecret: key, behavior: { enforceSignature: true } });
    const attached = await t.call('attachReceiver', { id: r.id, sourceId: (await t.call('listSources', {}))[0].id });
    expect(attached.webhooks.standardWebhooksSecret).toBe(key);
    expect(attached.secretVersions?.standardWebhooksSecret).toMatchObject({ version: 1 });
    await t.post('/v1/track', { userId: 'u', event: 'Standard' }, { writeKey: 'wk' });
    const d = await lastDetail(t, 'delivered');
    expect(d.deliveries[0].attempts.map((a) => a.responseStatus)).toEqual([200]);
    const [req] = await t.call('listReceiverRequests', { id: r.id });
    expect(req.standardWebhooks?.state).toBe('valid');
  });

  it('a signature mismatch is reported with both digests', async () => {
    const t = await lab.start({ config: { sources: [{ name: 'app', writeKey: 'wk', webhooks: { enabled: false, sharedSecret: 'source-secret' } }] } });
    const r = await t.call('createReceiver', { name: 'strict', path: '/strict', secret: 'receiver-secret' });
    await t.call('attachReceiver', { id: r.id, sourceId: (await t.call('listSources', {}))[0].id });
    await t.post('/v1/track', { userId: 'u', event: 'Mismatch' }, { writeKey: 'wk' });
    const [req] = await waitFor(async () => {
      const list = await t.call('listReceiverRequests', { id: r.id });
      return list.length ? list : undefined;
    }, 'a request');
    expect(req.signature.state).toBe('invalid');
    expect(req.signature.expected).not.toBe(req.signature.received);
  });

  it('an HTTPS mock receiver has a self-signed certificate: the dispatcher refuses it, nothing is received', async () => {
    const t = await lab.start({ config: { sources: [{ name: 'app', writeKey: 'wk' }], settings: FAST } });
    const r = await t.call('createReceiver', { name: 'tls', path: '/tls', tls: true });
    expect(r.url).toMatch(/^https:/);
    await t.call('attachReceiver', { id: r.id, sourceId: (await t.call('listSources', {}))[0].id });
    await t.post('/v1/track', { userId: 'u', event: 'Bad cert' }, { writeKey: 'wk' });
    const d = await lastDetail(t, 'failed');
    expect(d.deliveries[0].attempts[0].errorCode).toMatch(/SELF_SIGNED|DEPTH_ZERO/);
    expect(await t.call('listReceiverRequests', { id: r.id })).toEqual([]);
  });

  it('bad definitions are refused naming the field; names and paths are unique', async () => {
    const t = await lab.start();
    await expect(t.call('createReceiver', { name: 'x', path: 'no-slash' })).rejects.toMatchObject({ fields: [{ path: 'path' }] });
    await expect(t.call('createReceiver', { name: 'x', path: '/x', behavior: { failfirst: 1 } as never })).rejects.toMatchObject({
      fields: [{ path: 'behavior.failfirst', message: 'unknown key' }],
    });
    await t.call('createReceiver', { name: 'x', path: '/x' });
    await expect(t.call('createReceiver', { name: 'y', path: '/x' })).rejects.toMatchObject({ status: 409 });
  });
});

describe('config export and import', () => {
  it('the exported config imports back without changes, and config mock receivers are matched by name', async () => {
    const config = {
      sources: [{ name: 'checkout', writeKey: 'wk_checkout' }],
      mockReceivers: [{ name: 'flaky', path: '/flaky', behavior: { failFirst: 3, status: 500 } }],
      settings: { timeScale: 10 },
    };
    const t = await lab.start({ config });
    const exported = await t.call('getConfig', {});
    expect(exported.sources).toEqual([{ name: 'checkout', writeKey: 'wk_checkout', webhooks: { enabled: false, urls: [] } }]);
    expect(exported.mockReceivers).toMatchObject([{ name: 'flaky', path: '/flaky', behavior: { failFirst: 3, status: 500 } }]);
    expect(exported.settings.timeScale).toBe(10);
    const before = await t.call('listReceivers', {});
    await t.call('importConfig', exported as never);
    await t.call('importConfig', config as never);
    expect(await t.call('listReceivers', {})).toEqual(before);
    expect(await t.call('getConfig', {})).toEqual(exported);
  });
});

describe('updating a receiver', () => {
  it('secret: null stops the signature check; other fields are kept', async () => {
    const t = await lab.start();
    const r = await t.call('createReceiver', { name: 'sig', path: '/sig', secret: 's', behavior: { status: 202 } });
    const updated = await t.call('updateReceiver', { id: r.id, secret: null });
    expect(updated.tls).toBe(false);
    expect((await t.call('updateReceiver', { id: r.id, name: 'renamed' })).behavior).toEqual({ status: 202 });
    expect(updated.secret).toBeUndefined();
    expect(updated.behavior).toEqual({ status: 202 });
    expect((await t.call('updateReceiver', { id: r.id, secret: 'again' })).secret).toBe('again');
  });
});
