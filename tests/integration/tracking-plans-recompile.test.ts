import { afterEach, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../helpers/engine';
import type { TrackingPlans } from '../../src/main/engine/tracking-plans/service';

// Saving a plan compiles only the rules that changed (Ajv takes about a millisecond a rule: a 1,000-rule
// plan edited one rule at a time held the collector for about a second at every save). A rule's
// compiled validator is the same function after a save that left it as it was.

const KEY = 'wk_recompile';
const rule = (key: string, type: string) => ({
  type: 'TRACK' as const,
  key,
  version: 1,
  jsonSchema: { type: 'object', properties: { properties: { type: 'object', properties: { n: { type } } } } },
});

let engine: TestEngine | undefined;
afterEach(async () => {
  await engine?.stop();
  engine = undefined;
});

async function lab() {
  let madePlans: TrackingPlans | undefined;
  engine = await startTestEngine({
    config: { sources: [{ name: 'app', writeKey: KEY, trackingPlan: { name: 'p' } }], trackingPlans: [{ name: 'p', rules: [rule('A', 'string'), rule('B', 'string')] }] },
    onStore: (_s, p) => void (madePlans = p),
  });
  const plans = madePlans!;
  const sourceId = (await engine.call('listSources', {})).find((s) => s.name === 'app')!.id;
  const validators = () => {
    const plan = plans.forSource(sourceId)!.plan;
    return { A: plan.rules.get('TRACK')?.get('A')?.[0]?.validate, B: plan.rules.get('TRACK')?.get('B')?.[0]?.validate };
  };
  return { plans, validators, planId: plans.forSource(sourceId)!.plan.id };
}

describe('a tracking plan saved again', () => {
  it('keeps the compiled validators of the rules it did not change, and compiles the one that changed', async () => {
    const { plans, validators, planId } = await lab();
    const before = validators();
    expect(before.A).toBeTypeOf('function');
    plans.replace(planId, { name: 'p', rules: [rule('A', 'string'), rule('B', 'number')] }, Date.now());
    const after = validators();
    expect(after.A).toBe(before.A);
    expect(after.B).not.toBe(before.B);
    // And the new rule is the one that checks: a string n now violates B.
    expect((await engine!.post('/v1/track', { userId: 'u', event: 'B', properties: { n: 'x' } }, { writeKey: KEY })).status).toBe(200);
    const [call] = (await engine!.call('listMessages', { limit: 1 })).items;
    expect(call!.violations).toBe(1);
  });

  it('a config import that leaves a plan as it was keeps its validators', async () => {
    const { validators } = await lab();
    const before = validators();
    const config = await engine!.call('getConfig', {});
    await engine!.call('importConfig', { ...config, settings: { ...config.settings, retentionCalls: 1234 } });
    expect(validators()).toEqual(before);
    expect(validators().A).toBe(before.A);
  });
});
