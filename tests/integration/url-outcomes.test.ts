import { describe, expect, it } from 'vitest';
import type { ServerResponse } from 'node:http';
import { waitFor, webhookSource, type TestEngine } from '../helpers/engine';
import type { ReceiverHandler } from '../helpers/receiver';
import { testLab } from '../helpers/test-lab';
import { selfSignedCert } from '../helpers/tls';
import type { CallSummary } from '../../src/shared/types';

// Per-URL outcomes (issue 14, "the inspector never hides a failure"): each call summary carries its
// URLs' states, the list filters on them, and an attempt still out shows as in flight.
const KEY = 'wk_urls';
const lab = testLab();

const receiver = (handler?: ReceiverHandler) => lab.receiver(handler);

/** A schedule whose first retry is 30 min away: a retrying call cannot move under the test. */
const SLOW = { retrySchedule: { preset: 'custom', delaysMs: [1_800_000], jitter: 0, windowMs: 4 * 3_600_000 } };

async function onlyCall(t: TestEngine, done: (c: CallSummary) => boolean, what: string): Promise<CallSummary> {
  return waitFor(async () => {
    const c = (await t.call('listMessages', { limit: 1 })).items[0];
    return c && done(c) ? c : undefined;
  }, what);
}

const ids = async (t: TestEngine, urlState: string) => (await t.call('listMessages', { urlState } as never)).items.map((c) => c.id);
const states = (c: CallSummary) => c.urls.map((u) => u.state);

describe('per-URL outcome in the call summary', () => {
  it('one URL delivered, one 500, one self-signed TLS: delivered, with two URLs failed, and urlState=failed finds it', async () => {
    const ok = await receiver();
    const bad = await receiver((_req, res) => void res.writeHead(500).end('boom'));
    const tls = await lab.httpsReceiver(await selfSignedCert());
    const urls = [`${ok.url}/ok`, `${bad.url}/fail`, `${tls.url}/tls`];
    const t = await lab.start({ config: { sources: [webhookSource('app', KEY, urls)], settings: SLOW } });
    expect((await t.post('/v1/track', { userId: 'u1', event: 'Mixed' }, { writeKey: KEY })).status).toBe(200);

    const c = await onlyCall(t, (x) => x.deliveryState === 'delivered', 'the call delivered');
    expect(c.urls).toEqual([
      { url: urls[0], state: 'delivered', lastStatus: 200, attempts: 1, startedAt: null },
      { url: urls[1], state: 'failed', lastStatus: 500, attempts: 1, startedAt: null },
      { url: urls[2], state: 'failed', lastStatus: null, attempts: 1, startedAt: null },
    ]);
    expect(await ids(t, 'failed')).toEqual([c.id]);
    expect(await ids(t, 'delivered')).toEqual([c.id]);
    expect(await ids(t, 'retrying')).toEqual([]);
    expect(await ids(t, 'pending')).toEqual([]);
    // The detail and the live events carry the same outcomes.
    expect((await t.call('getMessage', { id: c.id })).urls).toEqual(c.urls);
    const updated = await waitFor(() => t.events.flatMap((e) => (e.type === 'calls.updated' ? e.calls : [])).findLast((x) => x.id === c.id && x.deliveryState === 'delivered'), 'the calls.updated event');
    expect(updated.urls).toEqual(c.urls);
  });

  it('a stored call starts with every URL pending; a 500 alone is retrying, and a call not forwarded has no URLs', async () => {
    const bad = await receiver((_req, res) => void res.writeHead(503).end());
    const t = await lab.start({
      config: { sources: [webhookSource('app', KEY, [`${bad.url}/a`]), { name: 'off', writeKey: 'wk_off', webhooks: { enabled: false, urls: [] } }], settings: SLOW },
    });
    await t.post('/v1/track', { userId: 'u1', event: 'E' }, { writeKey: KEY });
    const stored = await waitFor(() => t.events.flatMap((e) => (e.type === 'calls.stored' ? e.calls : []))[0], 'the calls.stored event');
    expect(stored.urls).toEqual([{ url: `${bad.url}/a`, state: 'pending', lastStatus: null, attempts: 0, startedAt: null }]);
    const c = await onlyCall(t, (x) => x.deliveryState === 'retrying', 'the call retrying');
    expect(states(c)).toEqual(['retrying']);
    expect(c.urls[0].lastStatus).toBe(503);
    expect(await ids(t, 'retrying')).toEqual([c.id]);
    expect(await ids(t, 'failed')).toEqual([]);

    await t.post('/v1/track', { userId: 'u1', event: 'E' }, { writeKey: 'wk_off' });
    const off = await onlyCall(t, (x) => x.id !== c.id, 'the second call');
    expect(off.deliveryState).toBeNull();
    expect(off.urls).toEqual([]);
  });

  it('expired: the URL whose retries ran out is expired, one that failed for good stays failed', async () => {
    const flaky = await receiver((_req, res) => void res.writeHead(500).end());
    const gone = await receiver((_req, res) => void res.writeHead(404).end());
    // One retry 100 ms later, then the 300 ms window is over.
    const settings = { retrySchedule: { preset: 'custom', delaysMs: [100, 1_000], jitter: 0, windowMs: 300 } };
    const t = await lab.start({ config: { sources: [webhookSource('app', KEY, [`${flaky.url}/a`, `${gone.url}/b`])], settings } });
    await t.post('/v1/track', { userId: 'u1', event: 'E' }, { writeKey: KEY });
    const c = await onlyCall(t, (x) => x.deliveryState === 'expired', 'the call expired');
    expect(c.urls.map((u) => [u.state, u.lastStatus, u.attempts])).toEqual([
      ['expired', 500, 2],
      ['failed', 404, 1],
    ]);
    expect(await ids(t, 'expired')).toEqual([c.id]);
    expect(await ids(t, 'failed')).toEqual([c.id]);
  });

  it('a replay of one URL of a call that was never forwarded: that URL delivered, the other not attempted', async () => {
    const ok = await receiver();
    const urls = [`${ok.url}/a`, `${ok.url}/b`];
    const t = await lab.start({ config: { sources: [{ ...webhookSource('app', KEY, urls), webhooks: { enabled: false, urls: urls.map((url) => ({ url, headers: {} })) } }] } });
    await t.post('/v1/track', { userId: 'u1', event: 'E' }, { writeKey: KEY });
    const c = await onlyCall(t, () => true, 'the call');
    await t.call('replayMessage', { id: c.id, urlIndex: 0 });
    const after = await onlyCall(t, (x) => x.deliveryState === 'delivered', 'the replayed call delivered');
    expect(states(after)).toEqual(['delivered', 'not_attempted']);
    expect(await ids(t, 'not_attempted')).toEqual([c.id]);
  });
});

describe('in flight', () => {
  it('while one URL holds its answer, the call and that URL read in flight (the other URL answered); then delivered', async () => {
    const held: ServerResponse[] = [];
    const fast = await receiver();
    const slow = await receiver((_req, res) => void held.push(res));
    const urls = [`${fast.url}/fast`, `${slow.url}/slow`];
    const t = await lab.start({ config: { sources: [webhookSource('app', KEY, urls)], settings: SLOW } });
    await t.post('/v1/track', { userId: 'u1', event: 'Slow' }, { writeKey: KEY });
    await slow.waitForRequests(1);

    const c = await onlyCall(t, (x) => x.urls[0]?.state === 'delivered' && x.urls[1]?.state === 'in_flight', 'URL 2 in flight, URL 1 answered');
    expect(c.deliveryState).toBe('in_flight');
    expect(c.urls[0]).toMatchObject({ lastStatus: 200, attempts: 1, startedAt: null });
    expect(c.urls[1]).toMatchObject({ lastStatus: null, attempts: 0 });
    expect(Date.parse(c.urls[1].startedAt!)).toBeLessThanOrEqual(Date.now());
    expect(await ids(t, 'in_flight')).toEqual([c.id]);
    expect((await t.call('listMessages', { status: 'in_flight' })).items.map((x) => x.id)).toEqual([c.id]);
    expect((await t.call('listMessages', { status: 'pending' })).items).toEqual([]);
    expect((await t.call('getMessage', { id: c.id })).urls[1].state).toBe('in_flight');
    // The live events said so too, without waiting for the round to end.
    await waitFor(
      () => t.events.some((e) => e.type === 'calls.updated' && e.calls.some((x) => x.id === c.id && x.urls[1]?.state === 'in_flight')),
      'an in-flight calls.updated event',
    );

    held[0].writeHead(200).end('late');
    const done = await onlyCall(t, (x) => x.deliveryState === 'delivered', 'the call delivered');
    expect(done.urls.map((u) => [u.state, u.lastStatus, u.attempts, u.startedAt])).toEqual([
      ['delivered', 200, 1, null],
      ['delivered', 200, 1, null],
    ]);
    expect(await ids(t, 'in_flight')).toEqual([]);
  });
});
