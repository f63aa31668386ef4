import { describe, expect, it } from 'vitest';
import { resolveTarget } from '../../src/main/engine/actions/target';
import type { NormalizedCall, WebhookSettings } from '../../src/shared/types';
import { waitFor } from '../helpers/engine';
import { testLab } from '../helpers/test-lab';

// Issue 37, item 2: a mapping's URL and header values may be directives, resolved per call as
// Segment's webhook destination resolves them (its differential test: tests/fidelity). Here: what a
// directive resolves to decides where each call goes, batches keep calls going to different places
// apart (Segment batches on url, method and headers), and what cannot be sent is not, saying why.
const lab = testLab();

const call = (over: Partial<NormalizedCall> = {}) => ({ type: 'track', event: 'E', userId: 'u-1', properties: { total: 5, text: 'é' }, ...over }) as unknown as NormalizedCall;

describe('resolveTarget', () => {
  it('literal text is used as written; directives are resolved on the call', () => {
    expect(resolveTarget({ url: 'https://r.example/a', headers: { 'X-A': 'a' } }, call())).toEqual({ url: 'https://r.example/a', headers: { 'X-A': 'a' } });
    const m = { url: { '@template': 'https://r.example/u/{{userId}}' }, headers: { 'X-User': { '@path': '$.userId' }, 'X-None': { '@path': '$.nope' }, 'X-Total': { '@path': '$.properties.total' }, Lit: 'l' } };
    expect(resolveTarget(m, call())).toEqual({ url: 'https://r.example/u/u-1', headers: { 'X-User': 'u-1', 'X-Total': '5', Lit: 'l' } });
  });

  it("what Segment's validation refuses, or the lab cannot send, throws a reason (nothing sent)", () => {
    expect(() => resolveTarget({ url: { '@path': '$.nope' }, headers: {} }, call())).toThrow(/the mapping's URL resolved to nothing for this call, and Segment's payload validation refuses it: The root value is missing the required field 'url'\./);
    expect(() => resolveTarget({ url: { '@template': 'https://r.example/{{properties.text}}' }, headers: {} }, call())).toThrow(/URL must be a valid URI string/);
    expect(() => resolveTarget({ url: { '@template': 'ftp://r.example/{{userId}}' }, headers: {} }, call())).toThrow(/resolved to "ftp:\/\/r\.example\/u-1", which cannot be sent to \(must be an absolute http: or https: URL\)/);
    // Found by a review: a template of megabytes is told by its size, not a stack overflow.
    const big = { ...call(), properties: { s: 'x'.repeat(20_000) } } as unknown as NormalizedCall;
    expect(() => resolveTarget({ url: { '@template': `https://r.example/${'{{properties.s}}'.repeat(5)}` }, headers: {} }, big)).toThrow(/resolved to 100,0\d\d characters for this call; a URL is at most 2048/);
    expect(() => resolveTarget({ url: { '@path': '$.properties.total' }, headers: {} }, call())).toThrow(/resolved to number for this call, and Segment's payload validation refuses it/);
    expect(() => resolveTarget({ url: 'https://r.example/', headers: { 'X-L': { '@template': '{{properties.s}}' } } }, big)).toThrow(/headers come to 20,00\d bytes for this call; the lab sends at most 16,384/);
    expect(() => resolveTarget({ url: 'https://r.example/', headers: { 'X-T': { '@path': '$.properties.text' } } }, call())).toThrow(/header "X-T" resolved to "é", which Segment's request client cannot send/);
  });
});

describe('directives over the wire', () => {
  it('each call goes where its directives say; a batch carries only calls going to one place', async () => {
    const receiver = await lab.receiver();
    const webhooks: WebhookSettings = {
      enabled: true,
      mode: 'actions',
      urls: [],
      mappings: [
        { name: 'per-user', trigger: 'type = "track"', url: { '@template': `${receiver.url}/u/{{userId}}` }, method: 'POST', headers: { 'X-User': { '@path': '$.userId' } }, data: { e: { '@path': '$.event' } } },
        { name: 'batched', trigger: 'type = "track"', url: { '@template': `${receiver.url}/b/{{properties.team}}` }, method: 'POST', headers: {}, data: { n: { '@path': '$.properties.n' } }, batchSize: 3 },
      ],
    };
    const t = await lab.start({ config: { sources: [{ name: 'dir', writeKey: 'wk_dir', webhooks }] } });
    const teams = ['red', 'blue', 'red', 'red', 'blue', 'blue'];
    const batch = teams.map((team, n) => ({ type: 'track', event: `E${n}`, userId: `u-${n % 2}`, properties: { team, n } }));
    expect((await t.post('/v1/batch', { batch }, { writeKey: 'wk_dir' })).status).toBe(200);
    // 6 single requests and 2 full batches of 3, one per team.
    const got = await receiver.waitForRequests(8);
    const singles = got.filter((r) => r.url.startsWith('/u/'));
    expect(singles.map((r) => [r.url, r.headers['x-user']]).sort()).toEqual([0, 1, 2, 3, 4, 5].map((n) => [`/u/u-${n % 2}`, `u-${n % 2}`]).sort());
    const batches = got.filter((r) => r.url.startsWith('/b/')).map((r) => [r.url, JSON.parse(r.body.toString()) as { n: number }[]]);
    expect(batches.sort()).toEqual([
      ['/b/blue', [{ n: 1 }, { n: 4 }, { n: 5 }]],
      ['/b/red', [{ n: 0 }, { n: 2 }, { n: 3 }]],
    ]);
    // A call whose URL resolves to no valid URI (a space): failed unsent with Segment's reason.
    expect((await t.post('/v1/track', { userId: 'u-9', event: 'Spaced', properties: { n: 9, team: 'no team' } }, { writeKey: 'wk_dir' })).status).toBe(200);
    const id = (await waitFor(async () => (await t.call('listMessages', { limit: 1 })).items[0] ?? null, 'the call')).id;
    const d = await waitFor(async () => (await t.call('getMessage', { id })).deliveries.find((x) => x.mapping === 'batched' && x.state !== 'pending') ?? null, 'the batched delivery settled');
    expect(d.state).toBe('failed');
    expect(d.lastError).toMatch(/not sent: Segment's payload validation refuses the mapping's URL: URL must be a valid URI string/);
    // Found by a review: a replay with an edited body went to the directive's text. There is nowhere to send it.
    // The call's per-user request (to /u/u-9) is the 9th the receiver gets: counted before the replay,
    // or a slow machine delivering it meanwhile would look like the replay sent something.
    await receiver.waitForRequests(9, 20_000);
    const before = receiver.requests.length;
    await expect(t.call('replayMessage', { id, deliveryId: d.id, body: '{"a":1}' })).rejects.toThrow(/was never sent: its mapping's URL or headers did not resolve to something that can be sent for this call/);
    // The same call's per-user delivery resolved and went; the batched one is the directive kept as written.
    expect(d.urls[0].url).toBe(JSON.stringify(webhooks.mappings![1].url));
    expect(receiver.requests.length).toBe(before);
  }, 60_000);
});
