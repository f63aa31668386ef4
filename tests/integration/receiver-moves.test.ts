import { describe, expect, it } from 'vitest';
import { testLab } from '../helpers/test-lab';
import { waitFor, type TestEngine } from '../helpers/engine';

// A mock receiver's URL changes when a restart finds its remembered port taken, or when a config file
// gives it another path: the sources sending to it follow it, as they do when it is edited (PATCH),
// instead of sending to whatever now answers at the old URL.

const lab = testLab();

const sourceUrls = async (t: TestEngine, name: string) => (await t.call('listSources', {})).find((s) => s.name === name)!.webhooks.urls.map((u) => u.url);

describe('a source keeps sending to a mock receiver that moved', () => {
  it('restart with the remembered port taken by another program: the sources follow the receiver to its new port', async () => {
    const dataDir = lab.dataDir();
    const first = await lab.start({ dataDir, rememberedReceiverPorts: true });
    await first.call('importConfig', {
      mockReceivers: [{ name: 'ok', path: '/ok' }],
      sources: [
        { name: 's', writeKey: 'wk_s', webhooks: { enabled: true, urls: [{ mockReceiver: 'ok' }] } },
        // With a query string: the receiver routes on the path, so this URL sends to it too.
        { name: 'q', writeKey: 'wk_q', webhooks: { enabled: true, urls: [{ mockReceiver: 'ok' }] } },
      ],
    });
    const q = (await first.call('listSources', {})).find((s) => s.name === 'q')!;
    const old = q.webhooks.urls[0].url;
    await first.call('updateSource', { id: q.id, webhooks: { ...q.webhooks, urls: [{ url: `${old}?from=q`, headers: {} }] } });
    expect(await sourceUrls(first, 's')).toEqual([old]);
    await first.stop({ keepData: true });

    // Another program now holds the port the lab remembered.
    const foreign = await lab.receiver(undefined, Number(new URL(old).port));
    const log: string[] = [];
    const t = await lab.start({ dataDir, rememberedReceiverPorts: true, log: (l) => log.push(l) });
    const receiver = (await t.call('listReceivers', {})).find((r) => r.name === 'ok')!;
    expect(receiver.url).not.toBe(old);
    expect(await sourceUrls(t, 's')).toEqual([receiver.url]);
    expect(await sourceUrls(t, 'q')).toEqual([`${receiver.url}?from=q`]);
    const line = log.find((l) => l.includes('is taken'));
    expect(line).toContain(`source "s" → ${receiver.url} (receiver "ok")`);
    expect(line).toContain('source "q"');

    expect((await t.post('/v1/track', { userId: 'u', event: 'x' }, { writeKey: 'wk_s' })).status).toBe(200);
    expect((await t.post('/v1/track', { userId: 'u', event: 'y' }, { writeKey: 'wk_q' })).status).toBe(200);
    const got = await waitFor(async () => {
      const r = await t.call('listReceiverRequests', { id: receiver.id, limit: 10 });
      return r.length >= 2 ? r : undefined;
    }, 'both calls at the receiver');
    expect(got.map((r) => r.path).sort()).toEqual(['/ok', '/ok?from=q']);
    expect(foreign.requests).toEqual([]);
  });

  it('restart with the port taken: a delivery retrying since before the restart retries at the receiver, not at the old port', async () => {
    const dataDir = lab.dataDir();
    // One retry 3 s after the first attempt: due after the restart.
    const overrides = { retrySchedule: { preset: 'custom' as const, delaysMs: [3_000], jitter: 0, windowMs: 3_600_000 } };
    const first = await lab.start({ dataDir, rememberedReceiverPorts: true, overrides });
    await first.call('importConfig', {
      mockReceivers: [{ name: 'flaky', path: '/flaky', behavior: { failFirst: 1, status: 503 } }],
      sources: [{ name: 's', writeKey: 'wk_s', webhooks: { enabled: true, urls: [{ mockReceiver: 'flaky' }] } }],
    });
    const old = (await sourceUrls(first, 's'))[0]!;
    expect((await first.post('/v1/track', { userId: 'u', event: 'retried' }, { writeKey: 'wk_s' })).status).toBe(200);
    await waitFor(async () => (await first.call('listMessages', { limit: 1 })).items[0]?.deliveryState === 'retrying' || undefined, 'a retry scheduled');
    await first.stop({ keepData: true });

    const foreign = await lab.receiver(undefined, Number(new URL(old).port));
    const log: string[] = [];
    const t = await lab.start({ dataDir, rememberedReceiverPorts: true, overrides, log: (l) => log.push(l) });
    const [call] = await waitFor(async () => {
      const items = (await t.call('listMessages', { limit: 1 })).items;
      return items[0]?.deliveryState === 'delivered' ? items : undefined;
    }, 'the retry delivered', 15_000);
    expect(foreign.requests).toEqual([]);
    expect(call!.urls[0]!.url).not.toBe(old);
    expect(log.find((l) => l.includes('is taken'))).toContain('1 unfinished delivery follows too');
  });

  it('a config import giving a receiver a new path: stored sources follow it; a source whose URLs the file gives keeps them', async () => {
    const t = await lab.start();
    await t.call('importConfig', {
      mockReceivers: [{ name: 'ok', path: '/ok' }],
      sources: [
        { name: 's', writeKey: 'wk_s', webhooks: { enabled: true, urls: [{ mockReceiver: 'ok' }] } },
        { name: 'given', writeKey: 'wk_g', webhooks: { enabled: true, urls: [{ mockReceiver: 'ok' }] } },
      ],
    });
    const before = (await t.call('listReceivers', {}))[0];
    const given = `${before.url}?kept=1`;

    const applied = await t.call('importConfig', {
      mockReceivers: [{ name: 'ok', path: '/ok2' }],
      sources: [{ name: 'given', webhooks: { enabled: true, urls: [{ url: given, headers: {} }] } }],
    });
    const after = (await t.call('listReceivers', {}))[0];
    expect(after.url).toBe(before.url.replace(/\/ok$/, '/ok2'));
    expect(await sourceUrls(t, 's')).toEqual([after.url]);
    expect(await sourceUrls(t, 'given')).toEqual([given]);
    expect(applied.warnings).toContainEqual(expect.objectContaining({ path: 'mockReceivers[0].path', message: expect.stringContaining(`source "s" → ${after.url}`) }));

    expect((await t.post('/v1/track', { userId: 'u', event: 'x' }, { writeKey: 'wk_s' })).status).toBe(200);
    const got = await waitFor(async () => (await t.call('listReceiverRequests', { id: after.id, limit: 10 }))[0], 'the call at the receiver');
    expect(got.path).toBe('/ok2');
  });

  it('a config file at start giving a receiver TLS and a new path: the stored sources follow it, and the start says so', async () => {
    const dataDir = lab.dataDir();
    // The remembered ports, as serve has them (the test lab's are free ones at each start).
    const first = await lab.start({ dataDir, rememberedReceiverPorts: true });
    await first.call('importConfig', {
      mockReceivers: [{ name: 'ok', path: '/ok' }],
      sources: [{ name: 's', writeKey: 'wk_s', webhooks: { enabled: true, urls: [{ mockReceiver: 'ok' }] } }],
    });
    await first.stop({ keepData: true });

    const log: string[] = [];
    const t = await lab.start({ dataDir, rememberedReceiverPorts: true, config: { mockReceivers: [{ name: 'ok', path: '/ok3', tls: true }] }, log: (l) => log.push(l) });
    const receiver = (await t.call('listReceivers', {}))[0];
    expect(receiver.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/ok3$/);
    expect(await sourceUrls(t, 's')).toEqual([receiver.url]);
    expect(log).toContainEqual(expect.stringContaining(`config: note: mockReceivers[0].path: source "s" → ${receiver.url}`));
  });
});
