import { afterAll, describe, expect, it, vi } from 'vitest';
import { CheckPool } from '../../src/main/engine/tracking-plans/check-pool';
import { PlanChecks } from '../../src/main/engine/tracking-plans/plan-checks';
import { checkCall, compilePlan, sharedBody, withEnvelope, type Enforcement } from '../../src/main/engine/tracking-plans/check';
import { requestItems } from '../../src/shared/normalize';
import type { TrackingPlanRule } from '../../src/shared/tracking-plan.schema';
import { HEAVY_RULE, heavyItems } from '../helpers/heavy-rule';

// A request's calls checked in a real check worker from the request's body (issue 38: the bench's
// 50-rule row, the second core carrying the checks): the verdicts are the ones the loop gives the
// same calls (checkCall over each item with the envelope's context merged), in order, and a call that
// runs past its budget there is unfinished while the others keep theirs.

const wrap = (props: Record<string, unknown>) => ({ type: 'object', properties: { properties: { type: 'object', ...props } } });
const RULES: TrackingPlanRule[] = [
  { type: 'TRACK', key: 'Cheap', version: 1, jsonSchema: wrap({ properties: { n: { type: 'number' } }, required: ['n'] }) },
  // The newest version is the default; the envelope's context asks for 1: the worker must merge it as the loop does.
  { type: 'TRACK', key: 'Cheap', version: 2, jsonSchema: wrap({ properties: { n: { type: 'string' } }, required: ['n'] }) },
  HEAVY_RULE,
  { type: 'IDENTIFY', version: 1, jsonSchema: { type: 'object', properties: { traits: { type: 'object', properties: { email: { type: 'string', format: 'email' } } } } } },
];
const SETTINGS: Enforcement = { unplannedEvents: 'allow', unplannedProperties: 'allow', violations: 'block' };
const plan = { key: 'p:1', id: 'p', name: 'plan', rules: RULES };
const pool = new CheckPool({ threads: 1 });
afterAll(() => pool.close());

function request(batch: Record<string, unknown>[], context?: Record<string, unknown>) {
  const body = Buffer.from(JSON.stringify({ batch, ...(context ? { context } : {}) }));
  const { items, envelope } = requestItems(JSON.parse(body.toString()) as Record<string, unknown>, 'batch');
  const calls = items.map((item) => withEnvelope(item as Record<string, unknown>, envelope));
  return { body, calls };
}

describe('a request checked in a worker from its body', () => {
  it('gives the verdicts the loop gives, in order, the envelope merged; only chosen items are checked', async () => {
    const batch = [
      { type: 'track', event: 'Cheap', properties: { n: 1 } },
      { type: 'track', event: 'Cheap', properties: { n: 'one' } },
      { type: 'track', event: 'Cheap', properties: {} },
      { type: 'track', event: 'Unplanned', properties: { x: 1 } },
      { type: 'identify', traits: { email: 'not an email' } },
      { type: 'track', event: 'Cheap', properties: { n: 2 }, context: { protocols: { event_version: 1 } } },
      { type: 'identify', traits: { email: 'a@b.co' } },
      { type: 'track', event: 'Cheap', properties: { n: '3' } },
      { type: 'track', event: 'Cheap', properties: { n: 4 } },
    ];
    for (const context of [undefined, { protocols: { event_version: 1 } }]) {
      const { body, calls } = request(batch, context);
      const compiled = compilePlan(plan.id, plan.name, RULES);
      const indices = [0, 1, 2, 3, 4, 5, 7, 8];
      const expected = indices.map((i) => checkCall(compiled, SETTINGS, calls[i]!));
      const outcome = await pool.checkRequest(plan, SETTINGS, { body: sharedBody(body), route: 'batch', indices });
      expect(outcome.ok).toBe(true);
      const got = outcome.ok ? outcome.verdicts : [];
      expect(got).toEqual(expected);
      // The case is not empty: some pass, some do not, and the envelope changes which.
      expect(got.filter((v) => v.violations.length > 0).length).toBeGreaterThan(1);
      expect(got.filter((v) => v.violations.length === 0).length).toBeGreaterThan(0);
    }
    const [plain, versioned] = [undefined, { protocols: { event_version: 1 } }].map((c) => request(batch, c));
    const compiled = compilePlan(plan.id, plan.name, RULES);
    expect(checkCall(compiled, SETTINGS, plain!.calls[0]!).violations).not.toEqual([]);
    expect(checkCall(compiled, SETTINGS, versioned!.calls[0]!).violations).toEqual([]);
  });

  it('calls past their budget are unfinished, the others keep the verdicts the loop gives them, however many ran out (the old way after the first)', async () => {
    // Found by a review: after 3 calls of a request ran out of budget, the cheap ones after them were
    // "not tried" (blocked, with violations: block) when the request had gone to a worker, though the
    // loop's way checks them: a verdict must not depend on which way a batch went.
    // Handing every request over (0): the way a plan measured slow on the loop goes.
    const checks = new PlanChecks(() => pool, () => undefined, () => undefined, { handoverCallUs: 0 });
    const compiled = compilePlan(plan.id, plan.name, RULES);
    const toCheck = { id: plan.id, name: plan.name, rules: RULES, updatedAt: 1, settings: SETTINGS, compiled };
    const heavyAt = new Set([0, 2, 4, 8]);
    const batch = Array.from({ length: 11 }, (_, i) =>
      heavyAt.has(i) ? { type: 'track', event: 'Heavy', properties: { a: heavyItems() } } : { type: 'track', event: 'Cheap', properties: i % 3 === 0 ? { n: String(i) } : {} },
    );
    const { body, calls } = request(batch);
    const indices = batch.map((_, i) => i);
    const got = await checks.requestVerdicts(toCheck, { body, route: 'batch', indices }, () => calls);
    indices.forEach((i) => {
      if (heavyAt.has(i)) expect(got[i]!.violations.map((x) => x.kind), `call ${i}`).toEqual(['check_timeout']);
      else expect(got[i], `call ${i}`).toEqual(checkCall(compiled, SETTINGS, calls[i]!));
    });
    expect(got[0]!.blocked).toMatch(/its check ran past its budget of 250 ms/);
    expect(pool.stats().timeouts).toBeGreaterThanOrEqual(3);
  });

  it('a plan cheap to check on the loop is checked there; one measured costly there, or whose calls go to the workers one by one, is handed over, a sample measured again one request in 32', async () => {
    // The hand-over costs the loop more than a cheap plan's checks (docs/performance.md): which way a
    // request goes follows what its plan's calls were measured to cost on the loop. The checks are
    // timed with the test's own clock, each taking `stepMs`: what is judged is the rule, not the machine.
    const rules: TrackingPlanRule[] = [
      { type: 'TRACK', key: 'A', version: 1, jsonSchema: wrap({ properties: { n: { type: 'number' } } }) },
      RULES[2]!, // 'Heavy': estimated over the loop's limit for a call of a few kilobytes
    ];
    const compiled = compilePlan('q', 'q', rules);
    const toCheck = { id: 'q', name: 'q', rules, updatedAt: 1, settings: SETTINGS, compiled };
    let now = 0;
    let stepMs = 0.001;
    const checks = new PlanChecks(() => pool, () => undefined, () => undefined, { clock: () => (now += stepMs) });
    const handed = vi.spyOn(pool, 'checkRequest');
    const onLoop = vi.spyOn(checks, 'verdicts');
    try {
      const send = async (event: string, props: Record<string, unknown>, size = 20) => {
        const { body, calls } = request(Array.from({ length: size }, () => ({ type: 'track', event, properties: props })));
        const got = await checks.requestVerdicts(toCheck, { body, route: 'batch', indices: calls.map((_, i) => i) }, () => calls);
        calls.forEach((c, i) => expect(got[i]).toEqual(checkCall(compiled, SETTINGS, c)));
      };
      // 1 µs a check: on the loop, every time.
      for (let i = 0; i < 5; i++) await send('A', { n: i });
      expect(handed).not.toHaveBeenCalled();
      expect(onLoop).toHaveBeenCalledTimes(5);
      // 50 µs a check: measured once more on the loop, then handed over whole...
      stepMs = 0.05;
      await send('A', { n: 1 });
      expect(handed).not.toHaveBeenCalled();
      onLoop.mockClear();
      for (let i = 0; i < 40; i++) await send('A', { n: i });
      expect(handed).toHaveBeenCalledTimes(40);
      // ...but for the one request in 32 whose first 16 calls were checked on the loop, to be measured.
      expect(onLoop.mock.calls.map((c) => c[1].length)).toEqual([16]);
      expect(handed.mock.calls[31]![2].indices).toEqual([16, 17, 18, 19]);

      // A plan whose calls go to the workers one by one (estimated too costly for the loop) is handed over whole after its first request.
      const other = compilePlan('r', 'r', rules);
      const heavy = { ...toCheck, id: 'r', compiled: other };
      stepMs = 0.001;
      handed.mockClear();
      onLoop.mockClear();
      const a = { a: Array.from({ length: 60 }, (_, i) => `v${i + 1}`) };
      for (let i = 0; i < 3; i++) {
        const { body, calls } = request(Array.from({ length: 10 }, () => ({ type: 'track', event: 'Heavy', properties: a })));
        await checks.requestVerdicts(heavy, { body, route: 'batch', indices: calls.map((_, k) => k) }, () => calls);
      }
      expect(onLoop).toHaveBeenCalledTimes(1);
      expect(handed).toHaveBeenCalledTimes(2);
    } finally {
      handed.mockRestore();
      onLoop.mockRestore();
    }
  });
});
