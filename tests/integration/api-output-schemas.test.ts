import { describe, expect, it } from 'vitest';
import { api, OP_NAMES, type OpName } from '../../src/shared/api.contract';
import { healthAnswer } from '../../src/shared/health.output';
import { callSummaryAnswer } from '../../src/shared/call-summary.output';
import { callDetailAnswer } from '../../src/shared/call-detail.output';
import { z } from 'zod';
import { testLab } from '../helpers/test-lab';
import { waitFor } from '../helpers/engine';

// The output schemas the API contract declares (issues 39 and 43) against what the engine answers: a
// drift between a schema and the handler fails here, not in an agent's or a pipeline's client. An
// answer must parse, and parsing must keep all of it: a field the handler added but the schema does
// not declare is stripped by zod's closed objects, and fails the comparison.

const lab = testLab();


describe("the contract's output schemas", () => {
  it('accept what the engine answers for every operation that declares one, with calls, deliveries and a probe in the lab', async () => {
    const rx = await lab.receiver();
    const t = await lab.start({
      config: {
        sources: [
          { name: 'checkout', writeKey: 'wk_out', webhooks: { enabled: true, sharedSecret: 's3cret', urls: [{ url: `${rx.url}/hook`, headers: { 'X-Env': 'qa' } }] } },
          {
            name: 'batched',
            writeKey: 'wk_batched',
            webhooks: { enabled: true, mode: 'actions', urls: [], mappings: [{ name: 'b', trigger: {}, url: `${rx.url}/batch`, method: 'POST', headers: {}, batchSize: 2 }] },
          },
        ],
      },
    });
    await t.post('/v1/batch', { batch: [{ type: 'track', userId: 'a', event: 'E' }, { type: 'track', userId: 'b', event: 'E' }] }, { writeKey: 'wk_batched' });
    await t.post('/v1/track', { userId: 'u_1', event: 'Order Completed', properties: { total: 42, cart: { items: [{ sku: 'a' }] } } }, { writeKey: 'wk_out' });
    await t.post('/v1/track', { event: 'no user' }, { writeKey: 'wk_out' });
    const [got] = await rx.waitForRequests(1, 20_000);
    const calls = await t.call('listMessages', {});
    const delivered = calls.items.find((c) => c.status === 'accepted')!;
    await waitFor(async () => (await t.call('getMessage', { id: delivered.id })).deliveries[0]?.state === 'delivered', 'the call delivered', 20_000);
    const probe = await t.call('startProbe', { url: `${rx.url}/hook`, secret: 's3cret', only: ['transport'] });
    await waitFor(async () => (await t.call('getProbe', { id: probe.id })).state === 'done', 'the probe done', 60_000);

    const batchMember = (await t.call('listMessages', { sourceId: (await t.call('listSources', {})).find((x) => x.name === 'batched')!.id })).items[0]!;
    const batch = await waitFor(async () => (await t.call('getMessage', { id: batchMember.id })).deliveries.find((d) => d.kind === 'actions'), 'the Actions batch', 20_000);
    const created: { id?: string; planId?: string; importedId?: string; checkedCallId?: number; receiverId?: string; audienceId?: string } = {};
    const checkout = (await t.call('listSources', {})).find((x) => x.name === 'checkout')!;
    const planRules = [
      { type: 'TRACK', key: 'Order Completed', version: 1, jsonSchema: { type: 'object', properties: { properties: { type: 'object', required: ['total'], properties: { total: { type: 'number' } } } } } },
      { type: 'IDENTIFY', version: 1, jsonSchema: {} },
    ];
    // Inputs are read when each operation runs: the mutating ones come last, in the order listed.
    const inputs: Partial<Record<OpName, () => unknown>> = {
      getMessage: () => ({ id: delivered.id }),
      replayMessage: () => ({ id: delivered.id }),
      retryMatching: () => ({ dryRun: true }),
      startProbe: () => ({ url: `${rx.url}/hook`, only: ['transport'] }),
      getProbe: () => ({ id: probe.id }),
      verifySignature: () => ({ body: got.body.toString('utf8'), xSignature: String(got.headers['x-signature']), source: 'checkout' }),
      getBatchItems: () => ({ id: batch.id }),
      listMessageDetails: () => ({ after: 0 }),
      clientSend: () => ({ type: 'track', userId: 'u', event: 'From the contract test' }),
      clientUpdateSettings: () => ({ flushAt: 5 }),
      updateSettings: () => ({ timeScale: 2 }),
      createSource: () => ({ name: 'created here', webhooks: { enabled: true, sharedSecret: 'x', urls: [{ url: `${rx.url}/new`, headers: {} }] } }),
      updateSource: () => ({ id: created.id, name: 'renamed here', collectorFaults: { mode: 'status', status: 503, rate: 1 } }),
      regenerateWriteKey: () => ({ id: created.id }),
      rotateSecret: () => ({ id: created.id, which: 'sharedSecret' }),
      sendTestCall: () => ({ id: created.id }),
      deleteSource: () => ({ id: created.id }),
      createTrackingPlan: () => ({ name: 'contract', rules: planRules }),
      connectTrackingPlan: () => ({ id: checkout.id, trackingPlan: { name: 'contract' } }),
      checkTrackingPlanCall: async () => {
        // A call checked as it arrives, with a violation: the plan's figures and the violations have something to count.
        await t.post('/v1/track', { userId: 'u_2', event: 'Order Completed', properties: { total: 'lots' } }, { writeKey: 'wk_out' });
        created.checkedCallId = (await t.call('listMessages', { sourceId: checkout.id })).items[0]!.id;
        return { call: { type: 'track', userId: 'u', event: 'Order Completed', properties: { total: 'x' } }, sourceId: checkout.id };
      },
      recheckTrackingPlanCalls: () => ({ callIds: [created.checkedCallId] }),
      getTrackingPlan: () => ({ id: created.planId }),
      getTrackingPlanStats: () => ({ id: created.planId }),
      draftTrackingPlan: () => ({ sourceId: checkout.id, name: 'drafted' }),
      importTrackingPlan: () => ({ file: planRules, name: 'imported' }),
      replaceTrackingPlan: () => ({ id: created.planId, name: 'contract', rules: [...planRules, { type: 'TRACK', key: 'Signed Up', version: 1, jsonSchema: {} }] }),
      deleteTrackingPlan: () => ({ id: created.importedId }),
      getViolations: () => ({}),
      previewActions: () => ({
        call: { type: 'track', event: 'E', userId: 'u', properties: { total: 3 } },
        mappings: [{ name: 'm', trigger: 'type = "track"', url: 'https://example.com/x', method: 'POST', headers: { 'X-Env': 'qa' } }],
      }),
      checkTrigger: () => ({ trigger: 'type = "track"', call: { type: 'track', event: 'E', userId: 'u' } }),
      createReceiver: () => ({ name: 'contract receiver', path: '/contract', secret: 's3cret' }),
      updateReceiver: () => ({ id: created.receiverId, behavior: { status: 202 } }),
      attachReceiver: () => ({ id: created.receiverId, sourceId: checkout.id }),
      listReceiverRequests: async () => {
        // A call to the source the receiver was attached to: the receiver has a request to list.
        await t.post('/v1/track', { userId: 'u_3', event: 'Signed Up' }, { writeKey: 'wk_out' });
        await waitFor(async () => (await t.call('listReceivers', {})).find((r) => r.id === created.receiverId)!.requestCount > 0, 'the mock receiver reached', 20_000);
        return { id: created.receiverId };
      },
      resetReceiver: () => ({ id: created.receiverId }),
      deleteReceiver: () => ({ id: created.receiverId, detach: 'true' }),
      createDeletion: () => ({ userId: 'u_1' }),
      createAudience: () => ({ name: 'Big spenders', rule: { combine: 'and', conditions: [{ kind: 'event', event: 'Order Completed', op: 'gte', count: 1 }] }, sourceIds: [checkout.id] }),
      updateAudience: () => ({ id: created.audienceId, name: 'Bigger spenders' }),
      listAudienceMembers: () => ({ id: created.audienceId }),
      // A last property's value may be any JSON: here an object.
      previewAudience: () => ({ type: 'computed_trait', compute: { kind: 'last_property', event: 'Order Completed', property: 'cart' } }),
      syncAudience: () => ({ id: created.audienceId }),
      deleteAudience: () => ({ id: created.audienceId }),
      startLoad: () => ({ rate: 20, total: 3, template: { type: 'track', event: 'Load', userId: '{{userId}}' }, sourceId: checkout.id }),
      exportDeliveries: () => ({ format: 'jsonl' }),
      importConfig: async () => t.call('getConfig', {}),
      clearCalls: () => ({}),
    };
    const last = [
      'createTrackingPlan',
      'connectTrackingPlan',
      'checkTrackingPlanCall',
      'recheckTrackingPlanCalls',
      'getTrackingPlan',
      'getTrackingPlanStats',
      'listTrackingPlanStats',
      'listTrackingPlans',
      'draftTrackingPlan',
      'importTrackingPlan',
      'replaceTrackingPlan',
      'deleteTrackingPlan',
      'getViolations',
      'previewActions',
      'checkTrigger',
      'createReceiver',
      'updateReceiver',
      'attachReceiver',
      'listReceiverRequests',
      'listReceivers',
      'resetReceiver',
      'deleteReceiver',
      'createDeletion',
      'listDeletions',
      'createAudience',
      'updateAudience',
      'listAudienceMembers',
      'previewAudience',
      'syncAudience',
      'listAudiences',
      'deleteAudience',
      'startLoad',
      'getLoad',
      'stopLoad',
      'exportDeliveries',
      'getConfig',
      'importConfig',
      'createDemo',
      'getDemo',
      'removeDemo',
      'clientSend', 'clientFlush', 'clientUpdateSettings', 'updateSettings', 'createSource', 'updateSource', 'regenerateWriteKey', 'rotateSecret', 'sendTestCall', 'deleteSource', 'clearCalls'];
    // Every operation declares its answer (OpDef requires it); the mutating ones run last.
    const order = [...OP_NAMES.filter((n) => !last.includes(n)), ...(last as OpName[])];
    // A dropped call's detail too (no normalized form, no delivery).
    const dropped = calls.items.find((c) => c.status === 'dropped')!;
    expect(api.getMessage.output.safeParse(JSON.parse(JSON.stringify(await t.call('getMessage', { id: dropped.id })))).success).toBe(true);
    const ran: string[] = [];
    for (const name of order) {
      ran.push(name);
      const out = await t.call(name, ((await inputs[name]?.()) ?? {}) as never);
      if (name === 'createSource') created.id = (out as { id: string }).id;
      if (name === 'createTrackingPlan') created.planId = (out as { id: string }).id;
      if (name === 'importTrackingPlan') created.importedId = (out as { plan: { id: string } }).plan.id;
      if (name === 'createReceiver') created.receiverId = (out as { id: string }).id;
      if (name === 'createAudience') created.audienceId = (out as { id: string }).id;
      const answer = JSON.parse(JSON.stringify(out));
      const parsed = api[name].output.safeParse(answer);
      expect(parsed.success ? null : parsed.error.issues, name).toBeNull();
      expect(parsed.data, `${name}: every field of the answer declared`).toEqual(answer);
      // The nested lists held to their schemas too, not only empty ones.
      if (name === 'getViolations') expect(answer.items.length).toBeGreaterThan(0);
      if (name === 'getTrackingPlanStats') expect(answer.length).toBeGreaterThan(0);
      if (name === 'checkTrackingPlanCall') expect(answer.violations.length).toBeGreaterThan(0);
      if (name === 'listReceiverRequests' || name === 'previewActions') expect(answer.length).toBeGreaterThan(0);
      if (name === 'deleteReceiver') expect(answer.detached.length).toBeGreaterThan(0);
      if (name === 'createDemo') expect(answer.source).not.toBeNull();
      if (name === 'previewAudience') expect(answer.members).toEqual([{ userId: 'u_1', value: { items: [{ sku: 'a' }] } }]);
      // A call's summary and detail held to this lab's whole declaration (the readers' schemas are looser, for older labs).
      const whole = (schema: z.ZodType, value: unknown, what: string) => {
        const held = schema.safeParse(value);
        expect(held.success ? null : held.error.issues, what).toBeNull();
        expect(held.data, `${what}: every field declared in its .output.ts`).toEqual(value);
      };
      if (name === 'listMessages') {
        whole(z.array(callSummaryAnswer), answer.items, 'listMessages, whole');
        expect(answer.items.some((c: { urls: { via?: unknown }[] }) => c.urls.some((u) => u.via)), 'an Actions outcome among them').toBe(true);
      }
      if (name === 'getMessage') whole(callDetailAnswer, answer, 'getMessage, whole');
      if (name === 'listMessageDetails') whole(z.array(callDetailAnswer), answer.items, 'listMessageDetails, whole');
      // Health's answer held to this lab's whole declaration (the output schema reads older labs too, so is looser).
      if (name === 'health') {
        const whole = healthAnswer.safeParse(answer);
        expect(whole.success ? null : whole.error.issues, 'health, whole').toBeNull();
        expect(whole.data, 'health: every field declared in health.output.ts').toEqual(answer);
        expect(Object.keys(answer.eventLoop.slices).length).toBeGreaterThan(0);
      }
    }
    // Every operation of the contract ran above.
    expect(ran.sort()).toEqual([...OP_NAMES].sort());

  }, 300_000);
});
