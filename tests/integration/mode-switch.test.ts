import { describe, expect, it } from 'vitest';
import { waitFor, type TestEngine } from '../helpers/engine';
import { testLab } from '../helpers/test-lab';

// Issue 26: switching a source's mode stops the side it no longer sends. Its unfinished deliveries of
// that side end canceled with the reason (as turning Webhooks off cancels all of them); the other
// side's go on. Through the API (updateSource) and a config import alike.
const lab = testLab();
const KEY = 'wk_mode';
const SLOW_RETRY = { retrySchedule: { preset: 'custom', delaysMs: [3_600_000], jitter: 0, windowMs: 14_400_000 } };

async function setup() {
  const down = await lab.receiver((_req, res) => void res.writeHead(503).end('down'));
  const webhooks = {
    enabled: true, mode: 'both' as const,
    urls: [{ url: `${down.url}/classic`, headers: {} }],
    mappings: [{ name: 'm', trigger: {}, url: `${down.url}/actions`, method: 'POST' as const, headers: {} }],
  };
  const t = await lab.start({ config: { sources: [{ name: 'app', writeKey: KEY, webhooks }], settings: SLOW_RETRY } });
  await t.post('/v1/track', { userId: 'u1', event: 'E' }, { writeKey: KEY });
  const both = async () => {
    const [c] = (await t.call('listMessages', { limit: 1 })).items;
    if (!c) return null;
    const m = await t.call('getMessage', { id: c.id });
    return m.deliveries.length === 2 && m.deliveries.every((d) => d.state === 'retrying') ? m : null;
  };
  const m = await waitFor(both, 'Classic and Actions deliveries retrying');
  const source = (await t.call('listSources', {}))[0];
  return { t, callId: m.call.id, source, webhooks };
}

async function states(t: TestEngine, callId: number) {
  const m = await t.call('getMessage', { id: callId });
  return m.deliveries.map((d) => [d.kind, d.state, d.state === 'canceled' ? d.lastError : null]);
}

describe('switching a source between Classic and Actions', () => {
  it('to actions cancels its unfinished Classic deliveries, and to classic its Actions ones (updateSource)', async () => {
    const { t, callId, source, webhooks } = await setup();
    await t.call('updateSource', { id: source.id, webhooks: { ...webhooks, mode: 'actions' } });
    expect(await states(t, callId)).toEqual([
      ['classic', 'canceled', "canceled: its source's mode no longer sends Classic requests"],
      ['actions', 'retrying', null],
    ]);
    await t.call('updateSource', { id: source.id, webhooks: { ...webhooks, mode: 'classic' } });
    expect(await states(t, callId)).toEqual([
      ['classic', 'canceled', "canceled: its source's mode no longer sends Classic requests"],
      ['actions', 'canceled', "canceled: its source's mode no longer sends Actions requests"],
    ]);
  });

  it('a config import that switches the mode does the same', async () => {
    const { t, callId, webhooks } = await setup();
    await t.call('importConfig', { sources: [{ name: 'app', writeKey: KEY, webhooks: { ...webhooks, mode: 'classic' } }] });
    expect(await states(t, callId)).toEqual([
      ['classic', 'retrying', null],
      ['actions', 'canceled', "canceled: its source's mode no longer sends Actions requests (config file)"],
    ]);
  });
});
