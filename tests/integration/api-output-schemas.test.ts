import { describe, expect, it } from 'vitest';
import { api, OP_NAMES, type OpName } from '../../src/shared/api.contract';
import { testLab } from '../helpers/test-lab';
import { waitFor } from '../helpers/engine';

// The output schemas the API contract declares (issue 39: the operations the MCP tools answer with)
// against what the engine answers: a drift between a schema and the handler fails here, not in an
// agent's client.

const lab = testLab();

describe("the contract's output schemas", () => {
  it('accept what the engine answers for every operation that declares one, with calls, deliveries and a probe in the lab', async () => {
    const rx = await lab.receiver();
    const t = await lab.start({
      config: { sources: [{ name: 'checkout', writeKey: 'wk_out', webhooks: { enabled: true, sharedSecret: 's3cret', urls: [{ url: `${rx.url}/hook`, headers: { 'X-Env': 'qa' } }] } }] },
    });
    await t.post('/v1/track', { userId: 'u_1', event: 'Order Completed', properties: { total: 42 } }, { writeKey: 'wk_out' });
    await t.post('/v1/track', { event: 'no user' }, { writeKey: 'wk_out' });
    const [got] = await rx.waitForRequests(1, 20_000);
    const calls = await t.call('listMessages', {});
    const delivered = calls.items.find((c) => c.status === 'accepted')!;
    await waitFor(async () => (await t.call('getMessage', { id: delivered.id })).deliveries[0]?.state === 'delivered', 'the call delivered', 20_000);
    const probe = await t.call('startProbe', { url: `${rx.url}/hook`, secret: 's3cret', only: ['transport'] });
    await waitFor(async () => (await t.call('getProbe', { id: probe.id })).state === 'done', 'the probe done', 60_000);

    const inputs: Partial<Record<OpName, unknown>> = {
      getMessage: { id: delivered.id },
      replayMessage: { id: delivered.id },
      retryMatching: { dryRun: true },
      startProbe: { url: `${rx.url}/hook`, only: ['transport'] },
      getProbe: { id: probe.id },
      verifySignature: { body: got.body.toString('utf8'), xSignature: String(got.headers['x-signature']), source: 'checkout' },
    };
    const declared = OP_NAMES.filter((name) => api[name].output !== undefined);
    expect(declared.sort()).toEqual(['getMessage', 'getProbe', 'health', 'listMessages', 'listSources', 'replayMessage', 'retryMatching', 'startProbe', 'verifySignature']);
    for (const name of declared) {
      const out = await t.call(name, (inputs[name] ?? {}) as never);
      const parsed = api[name].output!.safeParse(JSON.parse(JSON.stringify(out)));
      expect(parsed.success ? null : parsed.error.issues, name).toBeNull();
    }
    // A dropped call's detail too (no normalized form, no delivery).
    const dropped = calls.items.find((c) => c.status === 'dropped')!;
    expect(api.getMessage.output!.safeParse(JSON.parse(JSON.stringify(await t.call('getMessage', { id: dropped.id })))).success).toBe(true);
  }, 120_000);
});
