import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { testLab } from '../helpers/test-lab';
import { HEAVY_RULE, heavyItems, LIGHT_VALUE } from '../helpers/heavy-rule';
import { waitFor, webhookSource, type TestEngine } from '../helpers/engine';
import type { Store } from '../../src/main/engine/store/store';
import type { TrackingPlans } from '../../src/main/engine/tracking-plans/service';
import { CheckPool, checkWorkerFile } from '../../src/main/engine/tracking-plans/check-pool';

// Tracking plans off the event loop (issue 38): checks that may be heavy run in worker threads with a
// budget of 250 ms a call, compiles with 5 s a rule, and what can be counted is refused when saved.
// Every hostile schema and call is made here. While they run, the engine's health is asked every
// 50 ms; a single wait between two answers over HEALTH_BOUND_MS fails the test. The bound is generous
// (the bench judges the 100 ms target): before this, these cases held the loop for 5-22 s.

const HEALTH_BOUND_MS = 5_000;
const lab = testLab();

const wrap = (props: Record<string, unknown>) => ({ type: 'object', properties: { properties: { type: 'object', ...props } } });
const strings = (n: number, prefix = 'v') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
/** Passes every save-time bound, yet a call of 16,000 items takes seconds of CPU (heavy-rule.ts). */
const HEAVY = HEAVY_RULE;
const heavyCall = (n: number) => ({ userId: 'u', event: 'Heavy', messageId: `heavy-${n}`, properties: { a: heavyItems() } });
const CHEAP = { type: 'TRACK' as const, key: 'Cheap', version: 1, jsonSchema: wrap({ properties: { n: { type: 'number' } }, required: ['n'] }) };

/** Asks for health every 50 ms until stopped; the longest wait from one answer to the next, less the pause. */
function watchHealth(t: TestEngine) {
  let running = true;
  let longest = 0;
  let answers = 0;
  const done = (async () => {
    let last = performance.now();
    while (running) {
      await t.call('health', {});
      const now = performance.now();
      longest = Math.max(longest, now - last);
      answers++;
      await new Promise((r) => setTimeout(r, 50));
      last = performance.now();
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
      const figures = (await t.call('health', {})).eventLoop;
      // Printed for the record, not asserted: a machine's speed is no test's business.
      console.log(`health: ${answers} answers, longest wait ${Math.round(longest)} ms; eventLoop ${JSON.stringify(figures)}`);
      expect(longest).toBeLessThan(HEALTH_BOUND_MS);
    },
  };
}

async function labWith(plan: Record<string, unknown>, o: { onStore?: (s: Store, plans: TrackingPlans) => void } = {}) {
  const receiver = await lab.receiver();
  const t = await lab.start({
    onStore: o.onStore,
    config: {
      sources: [
        { ...webhookSource('flagged', 'wk_allow', [`${receiver.url}/hook`]), trackingPlan: { name: 'plan', violations: 'allow', ...plan } },
        { name: 'strict', writeKey: 'wk_block', trackingPlan: { name: 'plan', violations: 'block', ...plan } },
      ],
      trackingPlans: [{ name: 'plan', rules: [HEAVY, CHEAP] }],
    },
  });
  return { t, receiver };
}

const byMessageId = async (t: TestEngine, messageId: string) => {
  const page = await t.call('listMessages', { q: messageId, limit: 1 });
  return page.items[0] ? t.call('getMessage', { id: page.items[0].id }) : undefined;
};

describe('hostile plans do not hold the event loop', () => {
  it('the issue\'s rules are refused when saved, at once, with the path and the product', async () => {
    const { t } = await labWith({});
    const health = watchHealth(t);
    const hostile = {
      enum: wrap({ properties: { a: { type: 'array', items: { enum: strings(25_000) } } } }),
      objects: wrap({ properties: { a: { type: 'array', maxItems: 3_000, items: { enum: Array.from({ length: 8_000 }, (_, i) => ({ k: i })) } } } }),
      patterns: wrap({ patternProperties: Object.fromEntries(strings(1_000, '^p').map((p) => [p, { type: 'string' }])), additionalProperties: false }),
      anyOf: wrap({ properties: { a: { anyOf: strings(5_000, '^x').map((pattern) => ({ pattern })) } } }),
    };
    const product = { enum: /409,600,000 comparisons/, objects: /96,000,000 comparisons/, patterns: /5,461,000 pattern tests/, anyOf: /5,000 branches; at most 500 along one path/ };
    for (const [name, jsonSchema] of Object.entries(hostile)) {
      const rules = [CHEAP, { type: 'TRACK' as const, key: name, version: 1, jsonSchema }];
      await expect(t.call('createTrackingPlan', { name: `hostile ${name}`, rules })).rejects.toMatchObject({
        status: 400,
        fields: [{ path: 'rules[1].jsonSchema', message: expect.stringMatching(product[name as keyof typeof product]) }],
      });
      // A config file is refused the same way, naming the plan's rule.
      await expect(t.call('importConfig', { trackingPlans: [{ name: `hostile ${name}`, rules }] })).rejects.toThrow(/trackingPlans\[0\]\.rules\[1\]\.jsonSchema/);
    }
    expect((await t.call('listTrackingPlans', {})).map((p) => p.name)).toEqual(['plan']);
    await health.stop();
  });

  it('a call whose check runs past 250 ms gets check_timeout: blocked under "violations: block", forwarded under "allow"; a flood of them leaves the loop free', async () => {
    const { t, receiver } = await labWith({});
    const health = watchHealth(t);
    // A flood: heavy calls to both sources, cheap ones between them.
    const sends: Promise<{ status: number }>[] = [];
    for (let n = 0; n < 6; n++) {
      sends.push(t.post('/v1/track', heavyCall(n), { writeKey: n % 2 === 0 ? 'wk_allow' : 'wk_block' }));
      sends.push(t.post('/v1/track', { userId: 'u', event: 'Cheap', messageId: `cheap-${n}`, properties: { n: 'not a number' } }, { writeKey: 'wk_block' }));
    }
    // A batch: the calls of one request keep their order, a heavy one among them.
    sends.push(
      t.post('/v1/batch', { batch: [{ type: 'track', userId: 'u', event: 'Cheap', messageId: 'b-0', properties: { n: 1 } }, { type: 'track', ...heavyCall(100), messageId: 'b-1' }, { type: 'track', userId: 'u', event: 'Cheap', messageId: 'b-2', properties: {} }] }, { writeKey: 'wk_block' }),
    );
    expect((await Promise.all(sends)).map((r) => r.status)).toEqual(sends.map(() => 200));

    const flagged = await byMessageId(t, 'heavy-0');
    expect(flagged!.call.status).toBe('accepted');
    expect(flagged!.violations).toEqual([{ kind: 'check_timeout', path: '', rule: null, message: expect.stringMatching(/^The call was not checked against the tracking plan "plan": its check ran past its budget of 250 ms of CPU time and was stopped\.$/) }]);
    await waitFor(() => receiver.requests.some((r) => JSON.parse(r.body.toString()).messageId === 'heavy-0'), 'heavy-0 forwarded');

    const blocked = await byMessageId(t, 'heavy-1');
    expect(blocked!.call.status).toBe('blocked');
    expect(blocked!.call.dropReason).toMatch(/^blocked by tracking plan: The call was not checked against the tracking plan "plan": its check ran past/);
    // The cheap calls beside them were checked as ever, on the loop.
    expect((await byMessageId(t, 'cheap-0'))!.violations).toEqual([expect.objectContaining({ kind: 'wrong_type', path: '/properties/n' })]);
    expect((await byMessageId(t, 'b-0'))!.violations).toEqual([]);
    expect((await byMessageId(t, 'b-1'))!.violations!.map((v) => v.kind)).toEqual(['check_timeout']);
    expect((await byMessageId(t, 'b-2'))!.violations!.map((v) => v.kind)).toEqual(['required_missing']);

    // Shown wherever violations are: summaries, the CI summary.
    const list = await t.call('listMessages', { q: 'heavy-0', limit: 1 });
    expect(list.items[0]!.violations).toBe(1);
    const summary = await t.call('getViolations', {});
    expect(summary.items.filter((i) => i.kind === 'check_timeout').reduce((n, i) => n + i.count, 0)).toBe(7);
    await health.stop();
  });

  it('a worker that crashes is replaced and its call still gets a verdict; a compile past 5 s is refused naming the rule', async () => {
    // A worker that wraps the real one: it ends its thread on a call named "Crash", and never ends a compile of a rule named "Slow".
    const real = await checkWorkerFile();
    const wrapper = join(dirname(real), `crashing-worker-${process.pid}.cjs`);
    onTestFinished(() => rmSync(wrapper, { force: true }));
    writeFileSync(
      wrapper,
      `const real = require(${JSON.stringify(real)});
const run = real.default ?? real;
module.exports = function (task) {
  if (task.kind === 'check' && task.calls.some((c) => c.event === 'Crash')) process.exit(3);
  if (task.kind === 'compile' && task.rules.some((r) => r.key === 'Slow')) {
    const p = new Int32Array(task.progress);
    Atomics.store(p, 2, Math.round(performance.timeOrigin + performance.now() - task.epoch));
    Atomics.store(p, 1, task.rules.findIndex((r) => r.key === 'Slow'));
    Atomics.store(p, 0, 1);
    for (;;);
  }
  return run(task);
};
`,
    );
    const crashRule = { type: 'TRACK' as const, key: 'Crash', version: 1, jsonSchema: { type: 'object', properties: { properties: { type: 'object', properties: { a: { type: 'array', items: { type: 'string' } } } } } } };
    const { t } = await labWith({}, { onStore: (_s, plans) => plans.useCheckPool(new CheckPool({ workerFile: async () => wrapper })) });
    const health = watchHealth(t);
    const plan = (await t.call('listTrackingPlans', {}))[0]!;
    await t.call('replaceTrackingPlan', { id: plan.id, name: 'plan', rules: [HEAVY, CHEAP, crashRule] });
    // A big call, so it is checked in a worker (a small one is checked on the loop, where nothing crashes).
    const crash = { userId: 'u', event: 'Crash', messageId: 'crash-1', properties: { a: new Array(5_000).fill('x') } };
    expect((await t.post('/v1/track', crash, { writeKey: 'wk_block' })).status).toBe(200);
    const crashed = await byMessageId(t, 'crash-1');
    expect(crashed!.violations).toEqual([expect.objectContaining({ kind: 'check_timeout', message: expect.stringMatching(/its check worker stopped/) })]);
    expect(crashed!.call.status).toBe('blocked');
    // The next call is checked by a new worker.
    const next = { userId: 'u', event: 'Heavy', messageId: 'after-crash', properties: { a: new Array(2_000).fill(LIGHT_VALUE) } };
    expect((await t.post('/v1/track', next, { writeKey: 'wk_block' })).status).toBe(200);
    expect((await byMessageId(t, 'after-crash'))!.violations).toEqual([]);

    const slow = { type: 'TRACK' as const, key: 'Slow', version: 1, jsonSchema: { type: 'object' } };
    await expect(t.call('createTrackingPlan', { name: 'slow', rules: [CHEAP, slow] })).rejects.toMatchObject({
      status: 400,
      fields: [{ path: 'rules[1].jsonSchema', message: expect.stringMatching(/took over 5 s to compile/) }],
    });
    await health.stop();
  });
});
