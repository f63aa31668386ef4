import { describe, expect, it } from 'vitest';
import { waitFor, type TestEngine } from '../helpers/engine';
import { testLab } from '../helpers/test-lab';
import { openDbFile } from '../helpers/db-file';
import type { Store } from '../../src/main/engine/store/store';
import { TrackingPlans } from '../../src/main/engine/tracking-plans/service';

// Plans stored before a start were compiled before the lab's first answer: a 1,000-rule plan held
// it ~0.6 s (Ajv takes about half a millisecond a rule). They are now compiled after the start, in
// slices of the event loop, and a call that needs a plan first gets it compiled at once: no call of a
// connected source goes unchecked. Each part is shown on a TrackingPlans made as the engine makes
// its own at start, over a lab's real SQLite file.

const KEY = 'wk_start';
const RULES = 400;
const bigPlan = (max: number) => [
  { type: 'TRACK' as const, key: 'M', version: 1, jsonSchema: { type: 'object', properties: { properties: { type: 'object', properties: { v: { type: 'number', maximum: max } } } } } },
  ...Array.from({ length: RULES - 1 }, (_, i) => ({
    type: 'TRACK' as const,
    key: `E${i}`,
    version: 1,
    jsonSchema: { type: 'object', properties: { properties: { type: 'object', properties: { a: { type: 'string', pattern: `^x${i}` }, b: { type: 'number', minimum: i } }, required: ['a'] } } },
  })),
];
const brokenRule = { type: 'TRACK' as const, key: 'N', version: 1, jsonSchema: { type: 'object', properties: { n: { maximum: null } } } };

const lab = testLab();
let engine: TestEngine | undefined;

/** A lab whose big plan P is connected to "app" (blocking) and plan Q, stored as an older lab stored it (not compiling), to "other"; restarted. */
async function restartedLab(restartConfig?: unknown) {
  const dataDir = lab.dataDir();
  const first = await lab.start({
    dataDir,
    config: {
      sources: [
        { name: 'app', writeKey: KEY, trackingPlan: { name: 'P', violations: 'block' } },
        { name: 'other', writeKey: 'wk_other', trackingPlan: { name: 'Q' } },
      ],
      trackingPlans: [
        { name: 'P', rules: bigPlan(10) },
        { name: 'Q', rules: [{ type: 'TRACK', key: 'N', version: 1, jsonSchema: { type: 'object' } }] },
      ],
    },
  });
  const before = new Map((await first.call('listTrackingPlans', {})).map((x) => [x.name, x.updatedAt]));
  await first.stop();
  const db = openDbFile(dataDir, { write: true });
  db.prepare("UPDATE tracking_plans SET rules = ? WHERE name = 'Q'").run(JSON.stringify([brokenRule]));
  db.close();
  let store: Store | undefined;
  const lines: string[] = [];
  engine = await lab.start({ dataDir, config: restartConfig, onStore: (s) => void (store = s), log: (l) => lines.push(l) });
  const sources = await engine.call('listSources', {});
  const plans = await engine.call('listTrackingPlans', {});
  return {
    before,
    store: store!,
    lines,
    app: sources.find((s) => s.name === 'app')!.id,
    other: sources.find((s) => s.name === 'other')!.id,
    p: plans.find((x) => x.name === 'P')!.id,
    q: plans.find((x) => x.name === 'Q')!.id,
  };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('tracking plans stored before a start', () => {
  it('are compiled after it, a slice at a time; a broken one is said once; the calls are checked', async () => {
    const lab = await restartedLab();
    const plans = new TrackingPlans(lab.store);
    expect(plans.isCompiled(lab.p)).toBe(false);
    const said: string[] = [];
    plans.startWarmUp((l) => said.push(l));
    const warmed = plans.whenWarm();
    expect(plans.isCompiled(lab.p)).toBe(false);
    // The first slice has run by the next turn, and 400 rules take more than a slice: others get the loop between.
    await turn();
    await turn();
    expect(plans.isCompiled(lab.p)).toBe(false);
    await warmed;
    expect(plans.isCompiled(lab.p)).toBe(true);
    expect(plans.forSource(lab.app)?.plan.id).toBe(lab.p);
    expect(plans.forSource(lab.other)).toBeUndefined();
    expect(said).toEqual([expect.stringMatching(/^tracking plan "Q": rule TRACK "N" version 1: its JSON Schema does not compile/)]);
    expect(plans.list().find((x) => x.id === lab.q)!.problem).toMatch(/does not compile/);

    // The engine's own instance did the same after its start: its warning logged once, its calls checked (50 > 10: blocked).
    await waitFor(() => lab.lines.find((l) => l.includes('tracking plan "Q"')), 'the warning');
    expect((await engine!.post('/v1/track', { userId: 'u', event: 'M', properties: { v: 50 } }, { writeKey: KEY })).status).toBe(200);
    const [call] = (await engine!.call('listMessages', { limit: 1 })).items;
    expect(call!.status).toBe('blocked');
  });

  it('a call that needs a plan before the slices reach it has it compiled at once', async () => {
    const lab = await restartedLab();
    // So does the question which sources go unchecked (check --fail-on-violations right after a start passed them: review).
    expect(new TrackingPlans(lab.store).uncheckedSources().map((u) => [u.sourceId, u.plan])).toEqual([[lab.other, 'Q']]);
    const plans = new TrackingPlans(lab.store);
    const checker = plans.forSource(lab.app);
    expect(checker?.plan.id).toBe(lab.p);
    expect(plans.isCompiled(lab.p)).toBe(true);
    expect(plans.check(checker!, { type: 'track', event: 'M', properties: { v: 50 } }, {}).blocked).toMatch(/v/);
    // Finished from where the slices were: a compile begun by the warm-up, then needed by a call.
    const warming = new TrackingPlans(lab.store);
    warming.startWarmUp(() => undefined);
    const warmed = warming.whenWarm();
    await turn();
    expect(warming.isCompiled(lab.p)).toBe(false);
    expect(warming.check(warming.forSource(lab.app)!, { type: 'track', event: 'M', properties: { v: 50 } }, {}).blocked).toMatch(/v/);
    expect(warming.isCompiled(lab.p)).toBe(true);
    await warmed;
  });

  it('a plan saved while the slices compile it keeps what was saved', async () => {
    const lab = await restartedLab();
    const plans = new TrackingPlans(lab.store);
    plans.startWarmUp(() => undefined);
    const warmed = plans.whenWarm();
    await turn();
    expect(plans.isCompiled(lab.p)).toBe(false);
    // Saved with v ≤ 100: the warm-up's compile of the old rules (v ≤ 10) must not replace it.
    plans.replace(lab.p, { name: 'P', rules: bigPlan(100) }, Date.now());
    await warmed;
    const verdict = plans.check(plans.forSource(lab.app)!, { type: 'track', event: 'M', properties: { v: 50 } }, {});
    expect(verdict.blocked ?? null).toBeNull();
    expect(verdict.violations).toEqual([]);
  });

  it('a config that gives a plan as it is stored (serve --config at every start) leaves it to the slices: not compiled, not written', async () => {
    const p = { name: 'P', rules: bigPlan(10) };
    // Q as stored, its rule not compiling: compiled at the import it was refused; now it is found after the start.
    const q = { name: 'Q', rules: [brokenRule] };
    const lab = await restartedLab({ sources: [{ name: 'app', writeKey: KEY, trackingPlan: { name: 'P', violations: 'block' } }], trackingPlans: [p, q] });
    const plans = await engine!.call('listTrackingPlans', {});
    expect(plans.find((x) => x.name === 'P')!.updatedAt).toBe(lab.before.get('P'));
    await waitFor(() => lab.lines.find((l) => l.includes('tracking plan "Q"')), 'the warning');
    expect((await engine!.post('/v1/track', { userId: 'u', event: 'M', properties: { v: 50 } }, { writeKey: KEY })).status).toBe(200);
    expect((await engine!.call('listMessages', { limit: 1 })).items[0]!.status).toBe('blocked');
    // Given as stored, a plan that does not compile still takes no new connection (review): only one already stored is repeated.
    await expect(engine!.call('importConfig', { sources: [{ name: 's2', writeKey: 'wk_s2', trackingPlan: { name: 'Q' } }], trackingPlans: [q] })).rejects.toThrow(
      /sources\[0\]\.trackingPlan\.name: tracking plan "Q" does not compile/,
    );
    await expect(engine!.call('importConfig', { sources: [{ name: 'other', writeKey: 'wk_other', trackingPlan: { name: 'Q', violations: 'block' } }], trackingPlans: [q] })).rejects.toThrow(/does not compile/);
    await engine!.call('importConfig', { sources: [{ name: 'other', writeKey: 'wk_other', trackingPlan: { name: 'Q' } }], trackingPlans: [q] });
    // A plan the file changes is written and checked as before: its bad rule refused, nothing applied.
    await expect(engine!.call('importConfig', { trackingPlans: [{ name: 'P', rules: [...bigPlan(10), brokenRule] }] })).rejects.toThrow(/trackingPlans\[0\]\.rules\[400\]\.jsonSchema/);
    await engine!.call('importConfig', { trackingPlans: [{ name: 'P', rules: bigPlan(100) }] });
    expect((await engine!.call('listTrackingPlans', {})).find((x) => x.name === 'P')!.updatedAt).not.toBe(lab.before.get('P'));
  });
});
